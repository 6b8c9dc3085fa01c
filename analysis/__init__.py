"""Analyses of trained BERT checkpoints.

`attention_rank`: the rank of every head's attention logits, against the
min(head_size, sequence length) bound of Bhojanapalli et al. (2020).
"""
