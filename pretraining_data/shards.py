"""Shards: groups of consecutive documents, each processed as a whole corpus.

A shard goes through exactly what the original does to its entire corpus
(documents shuffled, dupe_factor passes, random next segments from other
documents, all instances shuffled), with its own seed. Shards depend only on
the input and --documents_per_shard, never on the number of workers, so the
output is the same for any --num_workers.

The trade-off against the original: random next segments come from, and the
final shuffle mixes, one shard instead of the whole corpus; in exchange
memory is bounded by a few shards whatever the corpus size.
"""

import dataclasses

import numpy as np

# Shard i > 0 seeds with random_seed + i * 2**64: Python seeds Mersenne Twister
# with all 32-bit words of an int, so these keys differ from each other and
# from any ordinary seed, and shard 0 keeps the original's `random_seed`.
_SHARD_SEED_STRIDE = 1 << 64


def shard_seed(random_seed, shard_index):
    """The `random.Random` seed of a shard; shard 0 uses random_seed itself.

    So a single shard holding the whole corpus reproduces the original tool.
    """
    return random_seed + shard_index * _SHARD_SEED_STRIDE


def group_documents(documents, documents_per_shard):
    """Groups a stream of documents into shards of `documents_per_shard`.

    A last group shorter than half a shard is merged into the one before it
    (which is held back until that is known), so that no shard is a stub of a
    few documents whose random next segments would all come from each other.

    Args:
      documents: iterable of documents (anything).
      documents_per_shard: int >= 1.

    Yields:
      lists of documents, each of documents_per_shard documents except the
      last, which has from half to one and a half times as many (or the whole
      input if that is smaller).
    """
    group = []
    hold = documents_per_shard + documents_per_shard // 2
    for document in documents:
        group.append(document)
        if len(group) == hold:
            yield group[:documents_per_shard]
            group = group[documents_per_shard:]
    if group:
        yield group


@dataclasses.dataclass
class Shard:
    """A tokenized shard, in a compact form that is cheap to send to a worker.

    Attributes:
      index: int, the shard's position in the input (seeds its rng).
      token_ids: np.ndarray int32 [num_tokens], the ids of all lines in order.
      line_lengths: np.ndarray int32 [num_lines], tokens per line (0 for a
        line that has no tokens).
      document_lengths: np.ndarray int32 [num_documents], lines per document.
      input_bytes: int, input bytes read when the shard was complete.
    """

    index: int
    token_ids: np.ndarray
    line_lengths: np.ndarray
    document_lengths: np.ndarray
    input_bytes: int = 0

    def documents(self, value_of_id=None):
        """The shard's documents as the algorithm wants them.

        Args:
          value_of_id: list (or any indexable) id -> the token's value; the
            default is the id itself.

        Returns:
          list of documents, each a list of sentences (list of token values).
          Lines without tokens and documents without sentences are dropped,
          as the original drops them.
        """
        ids = self.token_ids.tolist()
        if value_of_id is not None:
            ids = list(map(value_of_id.__getitem__, ids))
        documents = []
        start = 0
        line_index = 0
        line_lengths = self.line_lengths.tolist()
        for num_lines in self.document_lengths.tolist():
            document = []
            for length in line_lengths[line_index:line_index + num_lines]:
                if length:
                    document.append(ids[start:start + length])
                    start += length
            line_index += num_lines
            if document:
                documents.append(document)
        return documents
