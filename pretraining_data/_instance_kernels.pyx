# cython: language_level=3, wraparound=False, binding=False
"""`instances.create_instances_from_document`, compiled, for the compiled generator.

The original algorithm draws ~125 numbers per instance and walks its tokens
in Python loops (truncation, masked replacements); with the shuffles
compiled, these loops were still ~70% of a worker's time. This is the same
code as `instances` (read that module for the algorithm and its comments),
with C types and C calls into `_mersenne_twister.MersenneTwister`: the same
draws in the same order, the same instances (tested against `instances`
with `random.Random`, on corpora and flags that exercise every branch).
`instances.generate_instances` uses it when its rng is a MersenneTwister.
"""

from libc.stdint cimport uint64_t

from pretraining_data._mersenne_twister cimport MersenneTwister


cdef inline Py_ssize_t _randint(MersenneTwister rng, Py_ssize_t a, Py_ssize_t b) except -1:
    """rng.randint(a, b), 0 <= a <= b: the draws of random.Random.randint."""
    if b < a or b - a > 0xFFFFFFFF:
        raise ValueError("randint(%d, %d) is outside what this module draws" % (a, b))
    return a + <Py_ssize_t>rng._below(<uint64_t>(b - a + 1))


def create_instances_from_document(list all_documents, Py_ssize_t document_index, vocab,
                                   options, MersenneTwister rng, bint plain_text,
                                   instance_class):
    """`instances.create_instances_from_document`; instance_class: TrainingInstance."""
    cdef list document = all_documents[document_index]
    cdef Py_ssize_t max_num_tokens = options.max_seq_length - 3
    cdef double masked_lm_prob = options.masked_lm_prob
    cdef Py_ssize_t max_predictions_per_seq = options.max_predictions_per_seq
    cdef bint do_whole_word_mask = options.do_whole_word_mask
    cdef Py_ssize_t target_seq_length = max_num_tokens
    if rng._random() < <double>options.short_seq_prob:
        target_seq_length = _randint(rng, 2, max_num_tokens)

    cdef list instances = []
    cdef list current_chunk = []
    cdef Py_ssize_t current_length = 0
    cdef Py_ssize_t i = 0, j, a_end, len_a, len_b
    cdef list tokens_a, tokens_b, tokens, segment_ids, maskable
    cdef bint is_random_next
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            a_end = 1
            if len(current_chunk) >= 2:
                a_end = _randint(rng, 1, len(current_chunk) - 1)
            tokens_a = []
            for j in range(a_end):
                tokens_a.extend(current_chunk[j])

            if len(current_chunk) == 1 or rng._random() < 0.5:
                is_random_next = True
                tokens_b = _random_segment(all_documents, document_index,
                                           target_seq_length - len(tokens_a), rng)
                i -= len(current_chunk) - a_end
            else:
                is_random_next = False
                tokens_b = []
                for j in range(a_end, len(current_chunk)):
                    tokens_b.extend(current_chunk[j])
            _truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)

            len_a, len_b = len(tokens_a), len(tokens_b)
            tokens = [vocab.cls] + tokens_a + [vocab.sep] + tokens_b + [vocab.sep]
            segment_ids = [0] * (len_a + 2) + [1] * (len_b + 1)
            maskable = None
            if plain_text:
                maskable = list(range(1, len_a + 1)) + list(range(len_a + 2, len(tokens) - 1))
            output_tokens, positions, labels = _create_masked_lm_predictions(
                tokens, masked_lm_prob, max_predictions_per_seq, vocab, rng,
                do_whole_word_mask, maskable)
            instances.append(
                instance_class(output_tokens, segment_ids, is_random_next, positions, labels))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


cdef list _random_segment(list all_documents, Py_ssize_t document_index,
                          Py_ssize_t target_b_length, MersenneTwister rng):
    """`instances._random_segment`."""
    cdef Py_ssize_t random_document_index = 0, k, j
    for k in range(10):
        random_document_index = _randint(rng, 0, len(all_documents) - 1)
        if random_document_index != document_index:
            break
    cdef list random_document = all_documents[random_document_index]
    cdef list tokens_b = []
    for j in range(_randint(rng, 0, len(random_document) - 1), len(random_document)):
        tokens_b.extend(random_document[j])
        if len(tokens_b) >= target_b_length:
            break
    return tokens_b


cdef _truncate_seq_pair(list tokens_a, list tokens_b, Py_ssize_t max_num_tokens,
                        MersenneTwister rng):
    """`instances.truncate_seq_pair`: one draw per removed token, which decides
    front or back; counted here, then cut with two slices per list."""
    cdef Py_ssize_t len_a = len(tokens_a), len_b = len(tokens_b)
    cdef Py_ssize_t front_a = 0, front_b = 0
    while len_a + len_b > max_num_tokens:
        if len_a > len_b:
            len_a -= 1
            if rng._random() < 0.5:
                front_a += 1
        else:
            len_b -= 1
            if rng._random() < 0.5:
                front_b += 1
    del tokens_a[front_a + len_a:]
    del tokens_a[:front_a]
    del tokens_b[front_b + len_b:]
    del tokens_b[:front_b]


cdef tuple _create_masked_lm_predictions(list tokens, double masked_lm_prob,
                                         Py_ssize_t max_predictions_per_seq, vocab,
                                         MersenneTwister rng, bint do_whole_word_mask,
                                         list maskable):
    """`instances.create_masked_lm_predictions` (with `_candidate_indexes`)."""
    cdef Py_ssize_t i, index, num_to_predict
    cdef list cand_indexes, chosen, index_set
    cls, sep = vocab.cls, vocab.sep
    if maskable is None:
        maskable = [i for i, token in enumerate(tokens) if token != cls and token != sep]
    if do_whole_word_mask:
        continuations = vocab.continuations
        cand_indexes = []
        for i in maskable:
            if cand_indexes and tokens[i] in continuations:
                (<list>cand_indexes[len(cand_indexes) - 1]).append(i)
            else:
                cand_indexes.append([i])
    else:
        cand_indexes = maskable
    rng.shuffle(cand_indexes)
    # Python's round(): half to even, as the original under Python 3.
    num_to_predict = min(max_predictions_per_seq,
                         max(1, int(round(<object>(len(tokens) * masked_lm_prob)))))

    if do_whole_word_mask:
        chosen = []
        covered = set()
        for index_set in cand_indexes:
            if len(chosen) >= num_to_predict:
                break
            if len(chosen) + len(index_set) > num_to_predict:
                continue
            if covered.intersection(index_set):
                continue
            covered.update(index_set)
            chosen.extend(index_set)
    else:
        chosen = cand_indexes[:num_to_predict]

    cdef list output_tokens = list(tokens)
    cdef list words = list(vocab.words) if type(vocab.words) is not list else vocab.words
    cdef uint64_t num_words = len(words)
    if num_words == 0:
        raise ValueError("The vocab is empty.")
    mask = vocab.mask
    for index in chosen:
        if rng._random() < 0.8:
            output_tokens[index] = mask
        elif rng._random() < 0.5:
            pass  # Unchanged.
        else:
            output_tokens[index] = words[rng._below(num_words)]

    cdef list positions = sorted(chosen)
    return output_tokens, positions, [tokens[index] for index in positions]
