"""Translation data: aligned sentence pairs, sub-word examples batched by length, a synthetic task.

`parallel_text` reads and checks sentence pairs from two aligned text files
(`--train_src`/`--train_tgt`) or from TSV files (`--train_tsv`, Tatoeba's
layout); `dataset` turns pairs into source/target id sequences and tf.data
pipelines (training batches grouped by length, evaluation in input order);
`synthetic` writes a made-up language pair for quick end-to-end runs. The
sub-word vocabulary is lm_data.vocabulary's (one joint SentencePiece model).
"""
