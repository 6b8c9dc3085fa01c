"""The original create_pretraining_data algorithm: documents -> training instances.

Pure functions over (documents, vocab, options, rng). They make exactly the
calls on `rng` that google-research/bert makes, in the same order, so the
same documents and seed give the same instances as the original tool. `rng`
is a `random.Random`, or a `fast_random.FastRandom`, which draws the same
numbers faster. With the compiled FastRandom (`_mersenne_twister`), the
instances of a document are made by `_instance_kernels`, this module's
code compiled: the same draws and the same instances, with ~30% fewer
instructions per instance in a worker (measured with callgrind).

A document is a list of sentences, a sentence a non-empty list of wordpiece
tokens. Tokens may be the vocab's strings, as in the original, or any
distinct values of their ids (our workers use the ids' protobuf varints, see
example_encoder): `InstanceVocab` says which values are [CLS], [SEP], [MASK]
and "##" pieces, and nothing else looks at a token.

`CreatePretrainingDataOptions` declares the command line; `options` here is
one, of which only the fields that shape instances are read.
"""

import dataclasses
import itertools
from typing import Hashable, List, Sequence

from options import Options, option

try:
    from pretraining_data import _instance_kernels
    from pretraining_data._mersenne_twister import MersenneTwister as _CompiledRandom
except ImportError:  # Not built (`make setup` builds them): this module's code runs.
    _instance_kernels = _CompiledRandom = None

# Whether the compiled per-document code is available (with the compiled rng).
COMPILED = _instance_kernels is not None

CLS = "[CLS]"
SEP = "[SEP]"
MASK = "[MASK]"


@dataclasses.dataclass(kw_only=True)
class CreatePretrainingDataOptions(Options):
    """The create_pretraining_data.py command line: the original flags, then ours.

    It lives here, not in pipeline.py, because the workers receive it (it
    shapes the instances) and must not import TensorFlow.
    """

    input_file: str = option(
        help="Text input: one sentence per line, a blank line between documents. A file, a "
        "glob, or a comma-separated list of them.")
    output_file: str = option(
        help="TFRecord file(s) to write; with a comma-separated list, instances go to the "
        "files in turn.")
    vocab_file: str = option(help="WordPiece vocab of the model, one token per line.")
    do_lower_case: bool = option(
        True, "Lower-case and strip accents: True for uncased models, False for cased.")
    do_whole_word_mask: bool = option(
        False, "Mask all the WordPieces of a word together instead of each on its own.")
    max_seq_length: int = option(128, "Tokens per instance, [CLS] and [SEP]s included.")
    max_predictions_per_seq: int = option(20, "Most masked positions per instance.")
    random_seed: int = option(12345, "Seed of every random choice.")
    dupe_factor: int = option(
        10, "Passes over the input, each with its own masks and segment pairs.")
    masked_lm_prob: float = option(0.15, "Fraction of the tokens to mask.")
    short_seq_prob: float = option(
        0.1, "Probability that a document's instances aim at a random length shorter than "
        "max_seq_length.")
    num_workers: int = option(
        1, "Worker processes creating instances, a shard each at a time (0: in the main "
        "process). The output is the same for any value.", new=True)
    documents_per_shard: int = option(
        10000, "Documents per shard: each shard is shuffled, duplicated and masked on its "
        "own, and draws its random next segments from itself. Memory grows with it: ~250 "
        "bytes per token of a shard, num_workers + 1 shards at a time. Lower it for "
        "book-length documents.", new=True)

    def validate(self):
        """Raises ValueError, naming the flag, for values the run cannot use."""
        # [CLS] A [SEP] B [SEP] with A, B non-empty, and randint(2, max_seq_length - 3).
        if self.max_seq_length < 5:
            raise ValueError("--max_seq_length must be at least 5, got %d." % self.max_seq_length)
        if self.max_predictions_per_seq < 1:
            raise ValueError("--max_predictions_per_seq must be at least 1, got %d."
                             % self.max_predictions_per_seq)
        if self.dupe_factor < 1:
            raise ValueError("--dupe_factor must be at least 1, got %d." % self.dupe_factor)
        if not 0.0 <= self.masked_lm_prob <= 1.0:
            raise ValueError("--masked_lm_prob must be in [0, 1], got %r." % self.masked_lm_prob)
        if not 0.0 <= self.short_seq_prob <= 1.0:
            raise ValueError("--short_seq_prob must be in [0, 1], got %r." % self.short_seq_prob)
        if self.num_workers < 0:
            raise ValueError("--num_workers must be 0 or more, got %d." % self.num_workers)
        if self.documents_per_shard < 1:
            raise ValueError("--documents_per_shard must be at least 1, got %d."
                             % self.documents_per_shard)
        super().validate()


@dataclasses.dataclass(frozen=True)
class InstanceVocab:
    """What instance creation needs of the vocab, with tokens as str or as ids.

    Attributes:
      cls, sep, mask: the values of [CLS], [SEP] and [MASK].
      words: sequence, the vocab in file order (the original's
        `vocab_words`); random replacements are drawn from it by index.
      continuations: frozenset of the values of "##" pieces.
    """

    cls: Hashable
    sep: Hashable
    mask: Hashable
    words: Sequence[Hashable]
    continuations: frozenset

    @classmethod
    def of_tokens(cls, vocab):
        """Tokens as str, as in the original. vocab: dict token -> id (load_vocab)."""
        _check_special_tokens(vocab)
        words = list(vocab.keys())
        return cls(CLS, SEP, MASK, words, frozenset(w for w in words if w.startswith("##")))

    @classmethod
    def of_ids(cls, vocab, value_of_id=None):
        """Tokens as ids, or as any distinct values of ids.

        Args:
          vocab: dict token -> id; a repeated token keeps its last id, as in
            `load_vocab`, so ids map back to the same tokens.
          value_of_id: function id -> the token's value (hashable); default:
            the id itself.
        """
        _check_special_tokens(vocab)
        value = value_of_id or (lambda token_id: token_id)
        return cls(value(vocab[CLS]), value(vocab[SEP]), value(vocab[MASK]),
                   [value(i) for i in vocab.values()],
                   frozenset(value(i) for w, i in vocab.items() if w.startswith("##")))


def _check_special_tokens(vocab):
    missing = [token for token in (CLS, SEP, MASK) if token not in vocab]
    if missing:
        raise ValueError("The vocab file lacks %s, which pre-training data needs."
                         % ", ".join(missing))


@dataclasses.dataclass(slots=True)
class TrainingInstance:
    """One pre-training example.

    Attributes:
      tokens: list, [CLS] A [SEP] B [SEP] after masking; <= max_seq_length.
      segment_ids: list[int], 0 for [CLS] A [SEP], 1 for B [SEP]; len(tokens).
      is_random_next: bool, True when B is from another document (label 1).
      masked_lm_positions: list[int], increasing positions of the predictions.
      masked_lm_labels: list, the original tokens at those positions.
    """

    tokens: List[Hashable]
    segment_ids: List[int]
    is_random_next: bool
    masked_lm_positions: List[int]
    masked_lm_labels: List[Hashable]


def create_training_instances(documents, vocab, options, rng):
    """All instances of a corpus, in the original's final (shuffled) order.

    Args:
      documents: list of documents, none empty; shuffled in place.
      vocab: InstanceVocab, in the tokens' representation.
      options: CreatePretrainingDataOptions (the fields that shape instances).
      rng: random.Random.

    Returns:
      list[TrainingInstance].
    """
    instances = list(generate_instances(documents, vocab, options, rng))
    rng.shuffle(instances)
    return instances


def generate_instances(documents, vocab, options, rng):
    """Yields the instances in creation order: documents shuffled, then
    `dupe_factor` passes over them. The original then shuffles the whole list
    with the same rng (do so only after exhausting this generator).

    Args: as create_training_instances.

    Yields:
      TrainingInstance.
    """
    rng.shuffle(documents)
    # Text from the tokenizer never holds [CLS] or [SEP] ("[" is split off as
    # punctuation). Then every position of A and B is maskable, and checking
    # once here saves comparing every token of every instance with them.
    specials = {vocab.cls, vocab.sep}
    plain_text = all(specials.isdisjoint(sentence) for document in documents
                     for sentence in document)
    compiled = _CompiledRandom is not None and type(rng) is _CompiledRandom
    for _ in range(options.dupe_factor):
        for document_index in range(len(documents)):
            if compiled:
                yield from _instance_kernels.create_instances_from_document(
                    documents, document_index, vocab, options, rng, plain_text, TrainingInstance)
            else:
                yield from create_instances_from_document(documents, document_index, vocab,
                                                          options, rng, plain_text)


def create_instances_from_document(all_documents, document_index, vocab, options, rng,
                                   plain_text=False):
    """The instances of one document (in one pass of dupe_factor).

    Sentences accumulate into a chunk until it reaches the target length or
    the document ends. The chunk is split at a random sentence boundary into
    A and its actual continuation B; or, half of the time and always when the
    chunk is one sentence, B comes from a random other document and the
    chunk's sentences after A are put back for the next instance.

    Args:
      all_documents: list of documents; random B segments come from it.
      document_index: int, the document to cut into instances.
      vocab: InstanceVocab.
      options: CreatePretrainingDataOptions (the fields that shape instances).
      rng: random.Random.
      plain_text: bool, True if no document holds [CLS] or [SEP].

    Returns:
      list[TrainingInstance].
    """
    document = all_documents[document_index]
    max_num_tokens = options.max_seq_length - 3  # [CLS], [SEP], [SEP].
    # Mostly full sequences; sometimes short ones so that short fine-tuning
    # inputs are not out of distribution. Drawn once per document, as in the
    # original.
    target_seq_length = max_num_tokens
    if rng.random() < options.short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)

    instances = []
    current_chunk = []
    current_length = 0
    i = 0
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            a_end = 1
            if len(current_chunk) >= 2:
                a_end = rng.randint(1, len(current_chunk) - 1)
            tokens_a = list(itertools.chain.from_iterable(current_chunk[:a_end]))

            if len(current_chunk) == 1 or rng.random() < 0.5:
                is_random_next = True
                tokens_b = _random_segment(all_documents, document_index,
                                           target_seq_length - len(tokens_a), rng)
                # The sentences after A were not used: start the next chunk with them.
                i -= len(current_chunk) - a_end
            else:
                is_random_next = False
                tokens_b = list(itertools.chain.from_iterable(current_chunk[a_end:]))
            truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)

            tokens = [vocab.cls] + tokens_a + [vocab.sep] + tokens_b + [vocab.sep]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            maskable = None
            if plain_text:
                maskable = (list(range(1, len(tokens_a) + 1))
                            + list(range(len(tokens_a) + 2, len(tokens) - 1)))
            tokens, positions, labels = create_masked_lm_predictions(
                tokens, options.masked_lm_prob, options.max_predictions_per_seq, vocab, rng,
                options.do_whole_word_mask, maskable)
            instances.append(
                TrainingInstance(tokens, segment_ids, is_random_next, positions, labels))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


def _random_segment(all_documents, document_index, target_b_length, rng):
    """Consecutive sentences of a random other document, from a random one on,
    until `target_b_length` tokens are reached or the document ends.

    Returns:
      list of tokens, non-empty. After 10 draws of `document_index` itself (a
      one-document corpus) that document is used, as in the original.
    """
    for _ in range(10):
        random_document_index = rng.randint(0, len(all_documents) - 1)
        if random_document_index != document_index:
            break
    random_document = all_documents[random_document_index]
    tokens_b = []
    for j in range(rng.randint(0, len(random_document) - 1), len(random_document)):
        tokens_b.extend(random_document[j])
        if len(tokens_b) >= target_b_length:
            break
    return tokens_b


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """Trims the longer list in place until both fit in `max_num_tokens`.

    Each token is removed from the front or the back at random, so that the
    model does not always see intact sequence ends. On a tie B is trimmed.

    Args:
      tokens_a, tokens_b: lists; modified in place.
      max_num_tokens: int, the allowed len(tokens_a) + len(tokens_b).
      rng: random.Random.
    """
    random = rng.random
    len_a, len_b = len(tokens_a), len(tokens_b)
    while len_a + len_b > max_num_tokens:
        if len_a > len_b:
            trunc_tokens, len_a = tokens_a, len_a - 1
        else:
            trunc_tokens, len_b = tokens_b, len_b - 1
        if random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


def _candidate_indexes(tokens, vocab, do_whole_word_mask, maskable=None):
    """The maskable positions, in the order the original lists them.

    Args:
      tokens: list, [CLS] A [SEP] B [SEP].
      vocab: InstanceVocab.
      do_whole_word_mask: bool.
      maskable: list[int], the positions of tokens other than [CLS] and
        [SEP] if the caller knows them, else None.

    Returns:
      Without whole-word masking, a list of int: every position but those of
      [CLS] and [SEP]. With it, a list of lists of int: "##" pieces are
      grouped with the word before them (even across a [SEP], as in the
      original).
    """
    if maskable is None:
        cls, sep = vocab.cls, vocab.sep
        maskable = [i for i, token in enumerate(tokens) if token != cls and token != sep]
    if not do_whole_word_mask:
        return maskable
    continuations = vocab.continuations
    cand_indexes = []
    for i in maskable:
        if cand_indexes and tokens[i] in continuations:
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
    return cand_indexes


def create_masked_lm_predictions(tokens, masked_lm_prob, max_predictions_per_seq, vocab, rng,
                                 do_whole_word_mask=False, maskable=None):
    """Chooses and masks the masked-LM positions of one sequence.

    n = min(max_predictions_per_seq, max(1, round(len(tokens) * masked_lm_prob)))
    candidates (whole words with do_whole_word_mask; a word that would take
    the count past n is skipped) are taken in a random order until n are
    chosen; each becomes [MASK] 80% of the time, stays unchanged 10% and
    becomes a random vocab word 10%.

    Args:
      tokens: list, [CLS] A [SEP] B [SEP].
      masked_lm_prob: float.
      max_predictions_per_seq: int.
      vocab: InstanceVocab.
      rng: random.Random.
      do_whole_word_mask: bool.
      maskable: list[int], the positions of tokens other than [CLS] and
        [SEP] if the caller knows them (a new list: it may be shuffled), or None.

    Returns:
      (output_tokens: list, masked_lm_positions: list[int] increasing,
       masked_lm_labels: list, the original tokens at those positions).
    """
    cand_indexes = _candidate_indexes(tokens, vocab, do_whole_word_mask, maskable)
    # Shuffling permutes the list whatever its items are, so plain positions
    # draw the same numbers as the original's one-element lists.
    rng.shuffle(cand_indexes)
    # round() is round-half-to-even, as in the original under Python 3.
    num_to_predict = min(max_predictions_per_seq,
                         max(1, int(round(len(tokens) * masked_lm_prob))))

    if do_whole_word_mask:
        chosen = []
        covered = set()
        for index_set in cand_indexes:
            if len(chosen) >= num_to_predict:
                break
            # A whole word that does not fit is skipped, not cut.
            if len(chosen) + len(index_set) > num_to_predict:
                continue
            if covered.intersection(index_set):  # Never true; kept from the original.
                continue
            covered.update(index_set)
            chosen.extend(index_set)
    else:
        # Single, distinct positions: the same loop takes the first n.
        chosen = cand_indexes[:num_to_predict]

    output_tokens = list(tokens)
    random = rng.random
    words = vocab.words
    for index in chosen:
        if random() < 0.8:
            masked_token = vocab.mask
        elif random() < 0.5:
            masked_token = tokens[index]
        else:
            masked_token = words[rng.randint(0, len(words) - 1)]
        output_tokens[index] = masked_token

    positions = sorted(chosen)
    return output_tokens, positions, [tokens[index] for index in positions]
