"""Instance creation against the algorithm's specification.

Statistical checks (masking proportions, NSP labels, lengths) run over
thousands of instances; exact checks compare with `_original_instances`, a
plain, unoptimized transcription of the original loops with the standard
library's rng calls.
"""

import collections
import random

import pytest

from pretraining_data import fast_random
from pretraining_data import instances
from pretraining_data.instances import CreatePretrainingDataOptions, InstanceVocab

VOCAB_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + ["w%d" % i for i in range(200)] + [
    "##p%d" % i for i in range(50)]
VOCAB = InstanceVocab.of_tokens({word: i for i, word in enumerate(VOCAB_WORDS)})


def _options(**changes):
    """The command line's options; instance creation does not read the paths."""
    return CreatePretrainingDataOptions(input_file="in.txt", output_file="out.tfrecord",
                                        vocab_file="vocab.txt", **changes)


def _traceable_documents(num_documents, seed, max_sentences=12):
    """Documents whose tokens say where they come from: "d3s5t0" is document
    3, sentence 5, token 0."""
    rng = random.Random(seed)
    return [[["d%ds%dt%d" % (d, s, t) for t in range(rng.randint(1, 30))]
             for s in range(rng.randint(1, max_sentences))] for d in range(num_documents)]


def _word_documents(num_documents, seed):
    """Documents of vocab words, some split into "##" pieces."""
    rng = random.Random(seed)
    documents = []
    for _ in range(num_documents):
        document = []
        for _ in range(rng.randint(1, 10)):
            sentence = []
            for _ in range(rng.randint(2, 25)):
                sentence.append("w%d" % rng.randrange(200))
                sentence += ["##p%d" % rng.randrange(50) for _ in range(rng.choice([0, 0, 1, 2]))]
            document.append(sentence)
        documents.append(document)
    return documents


def _unmasked(instance):
    """The instance's tokens before masking."""
    tokens = list(instance.tokens)
    for position, label in zip(instance.masked_lm_positions, instance.masked_lm_labels):
        tokens[position] = label
    return tokens


def _original_instances(all_documents, vocab_words, options, rng):
    """The original algorithm, transcribed loop for loop, stdlib rng calls."""
    rng.shuffle(all_documents)
    result = []
    for _ in range(options.dupe_factor):
        for document_index in range(len(all_documents)):
            document = all_documents[document_index]
            max_num_tokens = options.max_seq_length - 3
            target_seq_length = max_num_tokens
            if rng.random() < options.short_seq_prob:
                target_seq_length = rng.randint(2, max_num_tokens)
            current_chunk, current_length, i = [], 0, 0
            while i < len(document):
                current_chunk.append(document[i])
                current_length += len(document[i])
                if i == len(document) - 1 or current_length >= target_seq_length:
                    a_end = 1
                    if len(current_chunk) >= 2:
                        a_end = rng.randint(1, len(current_chunk) - 1)
                    tokens_a = []
                    for j in range(a_end):
                        tokens_a.extend(current_chunk[j])
                    tokens_b = []
                    if len(current_chunk) == 1 or rng.random() < 0.5:
                        is_random_next = True
                        target_b_length = target_seq_length - len(tokens_a)
                        for _ in range(10):
                            random_document_index = rng.randint(0, len(all_documents) - 1)
                            if random_document_index != document_index:
                                break
                        random_document = all_documents[random_document_index]
                        random_start = rng.randint(0, len(random_document) - 1)
                        for j in range(random_start, len(random_document)):
                            tokens_b.extend(random_document[j])
                            if len(tokens_b) >= target_b_length:
                                break
                        i -= len(current_chunk) - a_end
                    else:
                        is_random_next = False
                        for j in range(a_end, len(current_chunk)):
                            tokens_b.extend(current_chunk[j])
                    while len(tokens_a) + len(tokens_b) > max_num_tokens:
                        trunc = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
                        if rng.random() < 0.5:
                            del trunc[0]
                        else:
                            trunc.pop()
                    tokens = ["[CLS]"] + tokens_a + ["[SEP]"] + tokens_b + ["[SEP]"]
                    segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
                    cand_indexes = []
                    for k, token in enumerate(tokens):
                        if token in ("[CLS]", "[SEP]"):
                            continue
                        if (options.do_whole_word_mask and cand_indexes
                                and token.startswith("##")):
                            cand_indexes[-1].append(k)
                        else:
                            cand_indexes.append([k])
                    rng.shuffle(cand_indexes)
                    output_tokens = list(tokens)
                    num_to_predict = min(options.max_predictions_per_seq,
                                         max(1, int(round(len(tokens) * options.masked_lm_prob))))
                    masked, covered = [], set()
                    for index_set in cand_indexes:
                        if len(masked) >= num_to_predict:
                            break
                        if len(masked) + len(index_set) > num_to_predict:
                            continue
                        if any(k in covered for k in index_set):
                            continue
                        for k in index_set:
                            covered.add(k)
                            if rng.random() < 0.8:
                                masked_token = "[MASK]"
                            elif rng.random() < 0.5:
                                masked_token = tokens[k]
                            else:
                                masked_token = vocab_words[rng.randint(0, len(vocab_words) - 1)]
                            output_tokens[k] = masked_token
                            masked.append((k, tokens[k]))
                    masked.sort()
                    result.append(instances.TrainingInstance(
                        output_tokens, segment_ids, is_random_next, [k for k, _ in masked],
                        [label for _, label in masked]))
                    current_chunk, current_length = [], 0
                i += 1
    rng.shuffle(result)
    return result


# The generators instances run with: the compiled one (its instances come
# from _instance_kernels), the pure-Python fast one and the standard library's
# (both through this module's Python code).
RNG_CLASSES = [fast_random.FastRandom, fast_random._FastRandom, random.Random]


def test_the_compiled_instance_code_is_built_and_in_use():
    assert fast_random.COMPILED, "pretraining_data/*.pyx are not built: run make setup"
    assert instances._instance_kernels is not None
    assert instances._CompiledRandom is fast_random.FastRandom


@pytest.mark.parametrize("rng_class", RNG_CLASSES)
@pytest.mark.parametrize("special_tokens_in_text", [False, True])
@pytest.mark.parametrize("options", [
    _options(dupe_factor=3),
    _options(dupe_factor=2, do_whole_word_mask=True),
    _options(dupe_factor=2, max_seq_length=24, max_predictions_per_seq=5, masked_lm_prob=0.3,
             short_seq_prob=0.5),
    _options(dupe_factor=2, max_seq_length=5, max_predictions_per_seq=1, short_seq_prob=1.0,
             do_whole_word_mask=True),
    _options(dupe_factor=1, max_seq_length=40, max_predictions_per_seq=40, masked_lm_prob=1.0,
             short_seq_prob=1.0),
    _options(dupe_factor=1, masked_lm_prob=0.0, do_whole_word_mask=True),
])
def test_same_instances_as_a_plain_transcription_of_the_original(options, special_tokens_in_text,
                                                                  rng_class):
    documents = _word_documents(40, seed=1) + [[["w1", "##p1"]]]  # A one-sentence document too.
    if special_tokens_in_text:  # Never from the tokenizer, but the algorithm allows it.
        documents.append([["w2", "[SEP]", "##p2", "[CLS]"], ["[SEP]"], ["w3", "##p3"]])
    ours = instances.create_training_instances(
        [list(d) for d in documents], VOCAB, options, rng_class(12345))
    theirs = _original_instances([list(d) for d in documents], VOCAB_WORDS, options,
                                 random.Random(12345))
    assert len(ours) > 40
    assert ours == theirs


@pytest.mark.parametrize("rng_class", RNG_CLASSES)
def test_a_one_document_corpus_draws_its_own_random_segments(rng_class):
    # _random_segment gives up after 10 draws of the document itself.
    documents = [[["w%d" % (i * 7 % 200) for i in range(s, s + 9)] for s in range(12)]]
    options = _options(dupe_factor=3, max_seq_length=32)
    ours = instances.create_training_instances(
        [list(d) for d in documents], VOCAB, options, rng_class(3))
    theirs = _original_instances([list(d) for d in documents], VOCAB_WORDS, options,
                                 random.Random(3))
    assert any(i.is_random_next for i in ours)
    assert ours == theirs


def test_instances_are_the_same_as_ids_and_as_tokens():
    vocab = {word: i for i, word in enumerate(VOCAB_WORDS)}
    documents = _word_documents(30, seed=2)
    as_ids = [[[vocab[t] for t in sentence] for sentence in d] for d in documents]
    options = _options(dupe_factor=2, do_whole_word_mask=True)
    by_token = instances.create_training_instances(documents, VOCAB, options, random.Random(5))
    by_id = instances.create_training_instances(
        as_ids, InstanceVocab.of_ids(vocab), options, random.Random(5))
    assert [[vocab[t] for t in i.tokens] for i in by_token] == [i.tokens for i in by_id]
    assert [[vocab[t] for t in i.masked_lm_labels] for i in by_token] == [
        i.masked_lm_labels for i in by_id]


def test_segment_layout_and_lengths():
    options = _options(dupe_factor=2, max_seq_length=64)
    result = instances.create_training_instances(
        _traceable_documents(60, seed=3), VOCAB, options, random.Random(1))
    lengths = collections.Counter()
    for instance in result:
        tokens = _unmasked(instance)
        assert len(tokens) <= options.max_seq_length
        assert len(instance.segment_ids) == len(tokens)
        assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and tokens.count("[SEP]") == 2
        first_sep = tokens.index("[SEP]")
        assert first_sep >= 2 and len(tokens) - first_sep >= 3  # A and B non-empty.
        assert instance.segment_ids == [0] * (first_sep + 1) + [1] * (len(tokens) - first_sep - 1)
        lengths[len(tokens)] += 1
    # Mostly full sequences; short_seq_prob = 0.1 gives some short ones.
    assert lengths[options.max_seq_length] > 0.5 * len(result)
    assert sum(n for length, n in lengths.items() if length < 32) > 0.02 * len(result)


def test_next_sentence_labels():
    result = instances.create_training_instances(
        _traceable_documents(200, seed=4, max_sentences=30), VOCAB,
        _options(dupe_factor=2, short_seq_prob=0.0), random.Random(2))
    labels = [instance.is_random_next for instance in result]
    assert 0.45 < sum(labels) / len(labels) < 0.6  # 50%, plus one-sentence chunks.

    def where(token):  # "d3s5t0" -> (3, 5, 0)
        return tuple(int(part) for part in token[1:].replace("s", " ").replace("t", " ").split())

    for instance in result:
        tokens = _unmasked(instance)
        first_sep = tokens.index("[SEP]")
        a = [where(t) for t in tokens[1:first_sep]]
        b = [where(t) for t in tokens[first_sep + 1:-1]]
        # Each segment is a contiguous run of one document.
        for segment in (a, b):
            assert len({doc for doc, _, _ in segment}) == 1
            assert segment == sorted(segment)
        if instance.is_random_next:
            assert a[0][0] != b[0][0]  # 1 = B is from another document.
        else:
            # 0 = B is the actual next: same document, sentences after A's.
            assert a[0][0] == b[0][0] and a[-1][1] < b[0][1]


def test_masking_proportions_and_count():
    rng = random.Random(3)
    counts = collections.Counter()
    for trial in range(3000):
        length = rng.randint(5, 128)
        tokens = ["[CLS]"] + ["w%d" % rng.randrange(200) for _ in range(length - 3)] + ["[SEP]"]
        tokens.insert(rng.randint(2, length - 2), "[SEP]")
        output, positions, labels = instances.create_masked_lm_predictions(
            tokens, 0.15, 20, VOCAB, rng)
        assert len(positions) == min(20, max(1, int(round(length * 0.15))))
        assert positions == sorted(set(positions))
        assert labels == [tokens[p] for p in positions]
        assert all(tokens[p] not in ("[CLS]", "[SEP]") for p in positions)
        for index, (before, after) in enumerate(zip(tokens, output)):
            if index not in positions:
                assert before == after
        for p in positions:
            if output[p] == "[MASK]":
                counts["mask"] += 1
            elif output[p] == tokens[p]:
                counts["same"] += 1
            else:
                counts["random"] += 1
    total = sum(counts.values())
    assert abs(counts["mask"] / total - 0.8) < 0.01
    # A random word equal to the original counts as "same" (1 in 255 here).
    assert abs(counts["same"] / total - 0.1) < 0.01
    assert abs(counts["random"] / total - 0.1) < 0.01


def test_round_half_to_even_for_the_number_of_predictions():
    # 30 * 0.15 = 4.5 -> 4 and 50 * 0.15 = 7.5 -> 8 (Python 3 round); 3 * 0.15 -> 0 -> at least 1.
    for length, expected in ((30, 4), (50, 8), (3, 1)):
        tokens = ["[CLS]"] + ["w1"] * (length - 2) + ["[SEP]"]
        _, positions, _ = instances.create_masked_lm_predictions(
            tokens, 0.15, 20, VOCAB, random.Random(0))
        assert len(positions) == expected


def test_whole_word_masking_masks_all_pieces_of_a_word():
    rng = random.Random(4)
    partial_without_wwm = 0
    for trial in range(500):
        words = [["w%d" % rng.randrange(200)] + ["##p%d" % rng.randrange(50)
                                                 for _ in range(rng.choice([0, 1, 2, 3]))]
                 for _ in range(rng.randint(3, 30))]
        tokens = ["[CLS]"] + [piece for word in words for piece in word] + ["[SEP]"]
        word_of = []  # position -> index of the word it belongs to (None: special)
        for index, word in enumerate(words):
            word_of += [index] * len(word)
        word_of = [None] + word_of + [None]
        for wwm in (True, False):
            _, positions, _ = instances.create_masked_lm_predictions(
                tokens, 0.15, 20, VOCAB, random.Random(trial), do_whole_word_mask=wwm)
            masked_words = {word_of[p] for p in positions}
            whole = sorted(p for p, w in enumerate(word_of) if w in masked_words)
            if wwm:
                assert positions == whole
                assert len(positions) <= min(20, max(1, int(round(len(tokens) * 0.15))))
            elif positions != whole:
                partial_without_wwm += 1
    assert partial_without_wwm > 50


def test_truncate_seq_pair_trims_the_longer_from_both_ends():
    fronts = backs = 0
    for seed in range(200):
        a, b = list(range(40)), list(range(100, 110))
        instances.truncate_seq_pair(a, b, 30, random.Random(seed))
        assert len(a) + len(b) == 30 and b == list(range(100, 110))
        assert a == list(range(a[0], a[0] + 20))  # Contiguous: removed at the ends only.
        fronts += a[0] > 0
        backs += a[-1] < 39
    assert fronts > 150 and backs > 150
    # On a tie, B is trimmed; lists that fit are untouched.
    a, b = [1, 2, 3], [4, 5, 6]
    instances.truncate_seq_pair(a, b, 5, random.Random(0))
    assert a == [1, 2, 3] and len(b) == 2
    instances.truncate_seq_pair(a, b, 5, random.Random(0))
    assert a == [1, 2, 3] and len(b) == 2


def test_determinism_per_seed():
    documents = _word_documents(30, seed=5)
    options = _options(dupe_factor=2)

    def run(seed):
        return instances.create_training_instances([list(d) for d in documents], VOCAB, options,
                                                   random.Random(seed))

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_options_are_validated():
    _options().validate()
    for bad, flag in ((dict(max_seq_length=4), "--max_seq_length"),
                      (dict(max_predictions_per_seq=0), "--max_predictions_per_seq"),
                      (dict(dupe_factor=0), "--dupe_factor"),
                      (dict(masked_lm_prob=1.5), "--masked_lm_prob"),
                      (dict(short_seq_prob=-0.1), "--short_seq_prob"),
                      (dict(num_workers=-1), "--num_workers"),
                      (dict(documents_per_shard=0), "--documents_per_shard")):
        with pytest.raises(ValueError, match=flag):
            _options(**bad).validate()


def test_vocab_without_special_tokens_is_an_error():
    with pytest.raises(ValueError, match=r"lacks \[MASK\]"):
        InstanceVocab.of_tokens({"[CLS]": 0, "[SEP]": 1, "a": 2})
