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


def characters_per_shard(total_bytes):
    """How much text a shard holds at most, from the size of the whole input.

    About 16 shards, so that the workers share even a small corpus (and
    start writing early), between 64 Ki and 128 Ki characters: a shard's
    memory (~60 bytes a character here, in the worker, and its records again
    in the main process) stays small whatever the corpus size. Measured on a
    17 MB corpus: 1 Mi-character shards ran no faster than 256 Ki ones and
    peaked at twice the memory; 128 Ki ones ran as fast as 256 Ki ones and
    keep the whole process tree's peak within 1.2x of a 1 MB corpus's (256 Ki:
    1.4x). It depends on the input only, never on --num_workers: the output
    stays the same for any number of workers.
    """
    return min(max(total_bytes // 16, 1 << 16), 1 << 17)


def group_documents(documents, documents_per_shard, max_characters=None):
    """Groups a stream of documents into shards.

    A shard ends at `documents_per_shard` documents or once it holds
    `max_characters`. A last group smaller than half of both is merged into
    the one before it (which is held back until that is known), so that no
    shard is a stub of a few documents whose random next segments would all
    come from each other.

    Args:
      documents: iterable of documents, each a list of str lines.
      documents_per_shard: int >= 1.
      max_characters: int, or None for no limit on characters.

    Yields:
      lists of documents.
    """
    held, group, size = None, [], 0
    for document in documents:
        group.append(document)
        if max_characters:
            size += sum(map(len, document))
        if len(group) >= documents_per_shard or max_characters and size >= max_characters:
            if held is not None:
                yield held
            held, group, size = group, [], 0
    if group and held is not None and len(group) < documents_per_shard // 2 and (
            not max_characters or size < max_characters // 2):
        held, group = held + group, []
    if held is not None:
        yield held
    if group:
        yield group


@dataclasses.dataclass
class TextShard:
    """A shard before tokenization, as the main process sends it to a worker.

    Attributes:
      index: int, the shard's position in the input (seeds its rng).
      documents: list of documents, each a list of str lines.
      input_bytes: int, input bytes read when the shard was complete.
    """

    index: int
    documents: list
    input_bytes: int = 0


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
