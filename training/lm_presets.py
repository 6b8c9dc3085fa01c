"""`--preset` of run_lm.py: a paper's model and schedule under one name.

`lm1b_paper` is the LM1B setup of Bhojanapalli et al. (2020): the default
`LmConfig` (6 layers, d = 256, h = 8, d_p = 32, FFN 1024, dropout 0.1, tied
embeddings), 32k learned sub-words, sequences up to 256 tokens, 250k steps,
learning rate 0.1 with 10k warm-up steps and tensor2tensor's rsqrt decay;
the optimizer's weight decay is 0.01. The paper's batch of 4096 is
tensor2tensor's, counted in tokens; `--train_batch_size` counts sequences,
and 128 sequences of LM1B's ~30 sub-words hold about 4096 tokens.

A preset sets only the flags the command line does not give.
"""

import dataclasses

PRESETS = {
    "lm1b_paper": dict(train_batch_size=128, num_train_steps=250000, num_warmup_steps=10000,
                       learning_rate=0.1, learning_rate_schedule="rsqrt", max_seq_length=256,
                       vocab_size=32000),
}


def given_flags(options):
    """The fields of `options` that differ from their declared defaults (a library caller's 'given')."""
    return {field.name for field in dataclasses.fields(options)
            if field.default is dataclasses.MISSING or getattr(options, field.name) != field.default}


def apply_preset(options, given=None, presets=None):
    """`options` with --preset's values for every flag not given.

    Args:
      options: options with a `preset` field (LmOptions, NmtOptions).
      given: names of the flags given on the command line; default: those
        whose value differs from the declared default.
      presets: {preset: {flag: value}}; default: run_lm.py's PRESETS.

    Raises:
      ValueError: for an unknown preset, naming the known ones.
    """
    presets = PRESETS if presets is None else presets
    if not options.preset:
        return options
    if options.preset not in presets:
        raise ValueError("--preset=%s is not known; expected one of %s." % (options.preset, ", ".join(presets)))
    given = given_flags(options) if given is None else set(given)
    return dataclasses.replace(options, **{name: value for name, value in presets[options.preset].items()
                                           if name not in given})
