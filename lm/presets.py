"""`--preset` of run_lm.py: a paper's model and schedule under one name.

`lm1b_paper` is the LM1B setup of Bhojanapalli et al. (2020): the default
`LmConfig` (6 layers, d = 256, h = 8, d_p = 32, FFN 1024, dropout 0.1, tied
embeddings), 32k learned sub-words, sequences up to 256 tokens, 250k steps,
learning rate 0.1 with 10k warm-up steps and tensor2tensor's rsqrt decay;
the optimizer's weight decay is 0.01. The paper's batch of 4096 is
tensor2tensor's, counted in tokens; `--train_batch_size` counts sequences,
and 128 sequences of LM1B's ~30 sub-words hold about 4096 tokens.

A preset sets only the flags the command line does not give (training/presets.py).
"""

PRESETS = {
    "lm1b_paper": dict(train_batch_size=128, num_train_steps=250000, num_warmup_steps=10000,
                       learning_rate=0.1, learning_rate_schedule="rsqrt", max_seq_length=256,
                       vocab_size=32000),
}
