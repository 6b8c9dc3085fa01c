"""Pre-training data: the original create_pretraining_data algorithm, streaming and parallel.

  instances.py           the original algorithm: documents -> TrainingInstances;
                         CreatePretrainingDataOptions, the command line
  _instance_kernels.pyx  its per-document code compiled, for the compiled generator
  fast_random.py         random.Random with faster shuffle/randint, same draws
  _mersenne_twister.pyx  the compiled generator (.pxd: its C interface)
  example_encoder.py     TrainingInstance <-> serialized tf.train.Example, no TensorFlow
  _example_encoding.pyx  its encoding + TFRecord framing compiled (CRC-32C in C)
  documents.py           input text files -> a stream of documents
  shards.py              documents grouped into shards, shard seeds
  shard_tokenizer.py     shards of text -> token ids (CachedFullTokenizer, workers)
  shard_worker.py        a shard of text -> its shuffled, framed records (workers)
  tfrecord_framing.py    TFRecord frames (length, CRC-32C) without TensorFlow
  writer.py              framed records -> TFRecord files, round-robin
  progress.py            documents/s, instances/s, ETA
  pipeline.py            all of the above, behind create_pretraining_data.py
  reference.py           the original main(), in memory: parity tests
"""
