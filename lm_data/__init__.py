"""Language-model data: text files (one sentence per line), sub-word vocabularies, tf.data pipelines.

`text_files` finds and checks `--train_file`/`--eval_file`/`--test_file`;
`vocabulary` loads a SentencePiece model or learns one from the training
text; `dataset` turns lines into fixed-length next-token examples; `tfds_source`
reads LM1B from an already prepared TensorFlow Datasets directory.
"""
