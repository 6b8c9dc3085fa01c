"""Analyses of attention heads and trained BERT checkpoints.

`attention_rank`: the rank of every head's attention logits, against the
min(head_size, sequence length) bound of Bhojanapalli et al. (2020).
`head_capacity`: what one head of size d_p can represent, fitted directly.
"""
