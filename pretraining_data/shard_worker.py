"""Turns a tokenized shard into its serialized tf.Example records.

This runs in the worker processes (or in-process with --num_workers=0). It
imports neither TensorFlow nor the tokenizer, so a spawned worker starts in
a fraction of a second with a small footprint.
"""

import dataclasses
from typing import List

from pretraining_data import example_encoder
from pretraining_data import fast_random
from pretraining_data import instances
from pretraining_data import shards


@dataclasses.dataclass
class ShardRecords:
    """A shard's output, in the order to write it.

    Attributes:
      index: int, the shard's index.
      records: list[bytes], serialized tf.train.Example, shuffled.
      input_bytes: int, the shard's Shard.input_bytes.
    """

    index: int
    records: List[bytes]
    input_bytes: int


class ShardProcessor:
    """Everything a worker needs besides the shard; built once per process.

    Attributes:
      vocab: instances.InstanceVocab, tokens as the varints of their ids.
      options: instances.InstanceOptions.
      random_seed: int, the --random_seed.
    """

    def __init__(self, vocab, options, random_seed):
        """Args: vocab: dict token -> id; options; random_seed: int."""
        # Tokens are the varints of their ids; see example_encoder.
        self._varints = example_encoder.VarintTable(max(vocab.values()) + 1)
        self.vocab = instances.InstanceVocab.of_ids(vocab, self._varints.__getitem__)
        self.options = options
        self.random_seed = random_seed
        self._encoder = example_encoder.ExampleEncoder(options.max_seq_length,
                                                       options.max_predictions_per_seq)

    def __call__(self, shard):
        """Creates, serializes and shuffles the instances of one shard.

        Each instance is serialized as soon as it is made, and the records
        are shuffled instead of the instances (the same permutation: a
        shuffle does not look at the items), because a record (~0.8 KB for
        128 tokens) is several times smaller than a TrainingInstance.

        Args:
          shard: shards.Shard.

        Returns:
          ShardRecords.
        """
        rng = fast_random.FastRandom(shards.shard_seed(self.random_seed, shard.index))
        encode = self._encoder.encode_instance
        records = [encode(instance) for instance in instances.generate_instances(
            shard.documents(self._varints), self.vocab, self.options, rng)]
        rng.shuffle(records)
        return ShardRecords(shard.index, records, shard.input_bytes)


# The worker process's ShardProcessor, set by `init_worker`.
_processor = None


def init_worker(vocab, options, random_seed):
    """Worker initializer: builds the process's ShardProcessor."""
    global _processor
    _processor = ShardProcessor(vocab, options, random_seed)


def process_shard(shard):
    """Worker task: ShardRecords of `shard`, with the process's ShardProcessor."""
    return _processor(shard)
