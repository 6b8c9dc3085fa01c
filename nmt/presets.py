"""`--preset` of run_translation.py: the models and training of Bogoychev's (2021) study.

The paper names transformer-big, transformer-base and a tiny student; these are
the standard definitions of the NMT toolkit its author co-develops:

  preset            layers (enc/dec)  d     heads  FFN   training
  transformer-base  6 / 6             512   8      2048  Adam (0.9, 0.98, 1e-9), lr 3e-4,
                                                         16k warm-up, inverse-sqrt decay
  transformer-big   6 / 6             1024  16     4096  lr 2e-4, 8k warm-up, beta2 0.998
  transformer-tiny  6 / 2             256   8      1536  as base (a common student shape;
                                                         the study's student may differ)

All: tied source/target/output embeddings, post-norm, ReLU, dropout 0.1,
label smoothing 0.1, beam 8 at length penalty 0.6. The toolkit batches by
tokens; `--train_batch_size` counts sentence pairs, and 128 pairs of WMT's
~25-token sentences hold ~3k target tokens (a judgement: set it to your
hardware). A preset sets the flags the command line does not give;
`--model_config_file` keys override the preset's model.
"""

from nmt.config import NmtConfig

_TRAINING = dict(optimizer="adam", learning_rate_schedule="inverse_sqrt", learning_rate=3e-4,
                 num_warmup_steps=16000, adam_beta2=0.98, label_smoothing=0.1, beam_size=8,
                 length_penalty=0.6, train_batch_size=128, vocab_size=32000)

MODELS = {
    "transformer-base": NmtConfig(hidden_size=512, num_encoder_layers=6, num_decoder_layers=6,
                                  num_attention_heads=8, intermediate_size=2048),
    "transformer-big": NmtConfig(hidden_size=1024, num_encoder_layers=6, num_decoder_layers=6,
                                 num_attention_heads=16, intermediate_size=4096),
    "transformer-tiny": NmtConfig(hidden_size=256, num_encoder_layers=6, num_decoder_layers=2,
                                  num_attention_heads=8, intermediate_size=1536),
}

PRESETS = {
    "transformer-base": dict(_TRAINING),
    "transformer-big": dict(_TRAINING, learning_rate=2e-4, num_warmup_steps=8000, adam_beta2=0.998),
    "transformer-tiny": dict(_TRAINING),
}
