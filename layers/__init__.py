"""The layers every model family shares: attention with an independent head size d_p, projections,
LayerNorm, dropout, the Transformer block, activations, initialisers, the cross entropy, config
reading and parameter counting. BERT (`modeling`), the language model (`lm`) and the translation
model (`nmt`) build on them; this package imports none of them."""
