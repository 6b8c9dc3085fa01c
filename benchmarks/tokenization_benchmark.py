"""Tokenization throughput of every path we have (pure, fast, cached), beside the original and the raw tf-text op.

Usage, from the repository root:
  .venv/bin/python benchmarks/tokenization_benchmark.py [--num_lines=8000 --repeats=5]
Contenders, corpus, vocab and how passes are timed: docs/performance.md, section "Tokenization".
"""

import collections
import itertools
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app, flags  # noqa: E402

from benchmarks import harness  # noqa: E402

_ORIGINAL_TOKENIZATION = harness.original_tokenization()

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_lines", 32777, "Lines of generated text (~235 bytes each; the default, 7.8 MB, is the "
                     "corpus of docs/performance.md's table).", lower_bound=1)
flags.DEFINE_integer("corpus_seed", 12345, "Seed of the generated corpus.")
flags.DEFINE_integer("wordpiece_vocab_size", 8000, "Target size of a vocab built from the corpus.", lower_bound=1)
flags.DEFINE_enum("vocab_builder", "bert", ["bert", "frequency", "tf_text"], "BERT-Base uncased's vocab (a frequency "
                  "one, with a note, if it cannot be had), or one learned from the corpus (docs/performance.md).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased BERT).")
flags.DEFINE_integer("fast_batch_size", 1024, "Lines per FastFullTokenizer call.", lower_bound=1)
flags.DEFINE_string("tokenization_corpus_file", None, "A text file to tokenize (its non-empty lines) instead.")
flags.DEFINE_string("tokenization_vocab_file", None, "A vocab to use instead of --vocab_builder's.")
flags.DEFINE_integer("repeats", 7, "Timed passes per path, alternating; the median counts.", lower_bound=1)

_RESERVED_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# The corpus generator's word lists, written for this benchmark (no outside source): the most
# frequent English words, roughly in frequency order; prefixes, roots and suffixes ("" among them) whose combinations
# are the long tail that WordPiece splits; proper nouns, accented words, foreign sentences; the Chinese characters and
# kana of the CJK lines (strings, cut in pieces).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenization_corpus_words.json"),
          encoding="utf-8") as _file:
    _WORDS = json.load(_file)
_CJK_CHARS, _KANA = "".join(_WORDS["cjk_chars"]), "".join(_WORDS["kana"])


def _english_sentence(rng, words, cum_weights):
    """One sentence: Zipf words with capitals, commas, numbers, quotes, ..."""
    length = rng.randint(4, 24)
    out = []
    for i, word in enumerate(rng.choices(words, cum_weights=cum_weights, k=length)):
        roll = rng.random()
        if roll < 0.03:
            kind = rng.random()
            word = (str(rng.randint(1900, 2024)) if kind < 0.4 else str(rng.randint(2, 999)) if kind < 0.7
                    else "%d.%d" % (rng.randint(0, 99), rng.randint(0, 9)) if kind < 0.85
                    else "%d%%" % rng.randint(1, 100))
        else:
            word = (rng.choice(_WORDS["proper_nouns"]) if roll < 0.05 else word + "'s" if roll < 0.06
                    else word + "-" + rng.choice(words[:300]) if roll < 0.075 else word.upper() if roll < 0.08
                    else word)
        if i == 0:
            word = word[:1].upper() + word[1:]
        if i < length - 1 and rng.random() < 0.08:
            word += rng.choice([",", ",", ",", ";", ":"])
        out.append(word)
    if rng.random() < 0.05:
        start = rng.randrange(length)
        out[start] = rng.choice(["(", '"']) + out[start]
        out[-1] += ")" if out[start][0] == "(" else '"'
    return " ".join(out) + rng.choice([".", ".", ".", ".", ".", "?", "!"])


def generate_corpus(num_lines, seed):
    """`num_lines` English-like lines (list of str), the same for the same seed (docs/performance.md)."""
    rng = random.Random(seed)
    tail = sorted({p + r + s for p in _WORDS["prefixes"] for r in _WORDS["roots"] for s in _WORDS["suffixes"]})
    rng.shuffle(tail)
    words = _WORDS["common_words"] + tail
    cum_weights = list(itertools.accumulate(1.0 / (rank + 2.7) for rank in range(len(words))))
    lines = []
    for _ in range(num_lines):
        roll = rng.random()
        if roll < 0.03:  # Chinese and kana with some ASCII words and full-width punctuation.
            parts = []
            for _ in range(rng.randint(2, 5)):
                chars = "".join(rng.choice(_CJK_CHARS) for _ in range(rng.randint(4, 16)))
                if rng.random() < 0.3:
                    chars += "".join(rng.choice(_KANA) for _ in range(rng.randint(2, 6)))
                if rng.random() < 0.3:
                    chars += rng.choice([" BERT ", " 2024年", " Google "])
                parts.append(chars + rng.choice(["，", "。", "、", "！", "？"]))
            lines.append("".join(parts))
            continue
        sentences = [_english_sentence(rng, words, cum_weights) for _ in range(rng.randint(1, 3))]
        if roll < 0.08 and rng.random() < 0.5:
            sentences.append(rng.choice(_WORDS["foreign_sentences"]))
        elif roll < 0.08:
            accented = " ".join(rng.choice(_WORDS["accented_words"]) for _ in range(rng.randint(2, 6)))
            sentences.insert(1, accented[:1].upper() + accented[1:] + ".")
        lines.append(" ".join(sentences))
    return lines


def frequency_vocab(lines, vocab_size, do_lower_case):
    """A WordPiece vocab (list of str) learned from `lines` deterministically: no word maps to [UNK].

    In order: the reserved tokens; every character, alone and as a "##" piece; the most frequent words whole, up to
    60% of `vocab_size`; then the pieces (2 to 8 characters) of the others with the most count * (length - 1).
    """
    import tokenization  # pylint: disable=import-outside-toplevel

    basic = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    counts = collections.Counter(word for line in lines for word in basic.tokenize(line))
    by_frequency = sorted(counts, key=lambda word: (-counts[word], word))
    chars = sorted({char for word in counts for char in word})
    vocab = _RESERVED_TOKENS + chars + ["##" + char for char in chars]
    vocab += [word for word in by_frequency if len(word) > 1][:max(0, int(0.6 * vocab_size) - len(vocab))]
    known, pieces = set(vocab), collections.Counter()
    for word in by_frequency:
        for begin in range(len(word)) if word not in known and len(word) >= 3 else ():
            for end in range(begin + 2, min(len(word), begin + 8) + 1):
                pieces[word[begin:end] if begin == 0 else "##" + word[begin:end]] += counts[word]
    scored = sorted((piece for piece in pieces if piece not in known),
                    key=lambda piece: (-pieces[piece] * (len(piece.lstrip("#")) - 1), piece))
    return vocab + scored[:max(0, vocab_size - len(vocab))]


def benchmark_vocab(directory, lines, vocab_file=None, builder="bert", vocab_size=8000, do_lower_case=True):
    """(path, description) of `vocab_file`; else of BERT-Base uncased's vocab if `builder` is "bert" (a note and a
    frequency vocab if it cannot be had); else of the vocab `builder` learns from `lines`, written to `directory`."""
    if vocab_file:
        return vocab_file, vocab_file
    if builder == "bert":
        path, description = harness.bert_uncased_vocab(directory)
        if path:
            return path, description
        print("note: no BERT vocab (%s); using a frequency vocab" % description)
        builder = "frequency"
    start = time.perf_counter()
    if builder == "tf_text":  # TF Text's offline learner, ~20-45 s on the default corpus.
        import tensorflow as tf  # pylint: disable=import-outside-toplevel
        from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset as learner  # pylint: disable=C0415

        vocab = learner.bert_vocab_from_dataset(
            tf.data.Dataset.from_tensor_slices(lines).batch(1024), vocab_size=vocab_size,
            reserved_tokens=_RESERVED_TOKENS, bert_tokenizer_params=dict(lower_case=do_lower_case),
            learn_params=dict(lower_thresh=5))
    else:
        vocab = frequency_vocab(lines, vocab_size, do_lower_case)
    path = os.path.join(directory, "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(token + "\n" for token in vocab))
    return path, "%s vocab of %d tokens learned from the corpus in %.1f s" % (builder, len(vocab),
                                                                              time.perf_counter() - start)


def main(argv):
    del argv  # Unused.
    # pylint: disable=import-outside-toplevel
    import tensorflow as tf
    import tensorflow_text as tf_text

    import tokenization

    harness.print_header("Tokenization benchmark: every tokenizer path, the original and the raw tf-text op")
    corpus, lower, batch = FLAGS.tokenization_corpus_file, FLAGS.do_lower_case, FLAGS.fast_batch_size
    if corpus:
        with open(corpus, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
    else:
        lines, corpus = generate_corpus(FLAGS.num_lines, FLAGS.corpus_seed), "generated, seed %d" % FLAGS.corpus_seed
    num_bytes = sum(len(line.encode("utf-8")) + 1 for line in lines)
    with tempfile.TemporaryDirectory() as tmp:
        vocab_file, vocab_description = benchmark_vocab(tmp, lines, FLAGS.tokenization_vocab_file, FLAGS.vocab_builder,
                                                        FLAGS.wordpiece_vocab_size, lower)
        pure, fast = tokenization.FullTokenizer(vocab_file, lower), tokenization.FastFullTokenizer(vocab_file, lower)
        fast_one_part = tokenization.FastFullTokenizer(vocab_file, lower, num_parallel_parts=1)
        original = _ORIGINAL_TOKENIZATION and _ORIGINAL_TOKENIZATION.FullTokenizer(vocab_file, lower)
    vocab = pure.vocab
    print("corpus: %d lines, %.2f MB (%s); vocab: %d tokens (%s), do_lower_case=%s"
          % (len(lines), num_bytes / 1e6, corpus, len(vocab), vocab_description, lower))
    if not original:
        print(harness.ORIGINAL_MISSING)
    op = tf_text.FastBertTokenizer(list(vocab), token_out_type=tf.int64, lower_case_nfd_strip_accents=lower)
    cached = tokenization.CachedFullTokenizer(vocab, lower)

    def full(tokenizer):
        return lambda: [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]

    def in_batches(tokenize):
        return lambda: [ids for begin in range(0, len(lines), batch) for ids in tokenize(lines[begin:begin + batch])]

    def cached_pass(tokenizer):
        return [tokenizer.tokenize_to_ids(line) for line in lines]

    paths = {"pure": full(pure), **({"original": full(original)} if original else {}),
             "fast": in_batches(fast.tokenize_to_ids), "fast-1-part": in_batches(fast_one_part.tokenize_to_ids),
             "cached-cold": lambda: cached_pass(tokenization.CachedFullTokenizer(vocab, lower)),
             "cached-warm": lambda: cached_pass(cached),
             "tf-text-op": in_batches(lambda part: op.tokenize(tf.constant(part)).to_list())}
    # The warm-up pass traces the TensorFlow paths and fills the warm cache.
    seconds, ids = harness.interleave(paths, FLAGS.repeats, warmup=1)

    pure_ids, checked = ids["pure"], [name for name in paths if name != "tf-text-op"]
    for name in checked:
        pairs = itertools.zip_longest(pure_ids, ids[name])
        mismatch = next((index for index, (left, right) in enumerate(pairs) if left != right), None)
        if mismatch is not None:
            at = lambda values: values[mismatch] if mismatch < len(values) else None  # noqa: E731
            print("parity: MISMATCH of %s at line %d\n  text: %r\n  pure: %s\n  %s: %s"
                  % (name, mismatch, at(lines), at(pure_ids), name, at(ids[name])))
            return 1
    num_tokens = sum(len(line_ids) for line_ids in pure_ids)
    suffix_ids = {i for token, i in vocab.items() if token.startswith("##")}
    num_suffixes = sum(1 for line_ids in pure_ids for i in line_ids if i in suffix_ids)
    num_unk = sum(line_ids.count(vocab["[UNK]"]) for line_ids in pure_ids)
    op_same = sum(a == b for a, b in zip(pure_ids, ids["tf-text-op"]))
    print("parity: ok (%s: FullTokenizer's ids on all %d lines; %d tokens, %.1f%% of them '##' pieces, %d [UNK]); "
          "tf-text-op: the same ids on %d of %d lines"
          % (", ".join(checked), len(lines), num_tokens, 100 * num_suffixes / num_tokens, num_unk, op_same, len(lines)))
    rows, results = [], {}
    for name, values in seconds.items():
        median = harness.median_and_spread(values)[0]
        results[name] = num_tokens / median
        rows.append([name, str(len(lines)), str(num_tokens), "%.3f" % median, harness.spread(values),
                     "%.0f" % results[name], "%.2f" % (num_bytes / median / 1e6)])
    harness.print_table(["median of %d passes over the corpus; spread = (max - min) / median; tokens = wordpiece "
                         "ids (FullTokenizer's count); TensorFlow paths called on batches of %d lines"
                         % (FLAGS.repeats, batch)],
                        ["path", "lines", "tokens", "seconds", "spread", "tokens/s", "MB/s"], rows)
    print()
    for name in ("fast", "fast-1-part", "cached-cold", "cached-warm"):
        print("ratio %s/pure: %.1fx; %s/tf-text-op: %.2fx%s"
              % (name, results[name] / results["pure"], name, results[name] / results["tf-text-op"],
                 "; %s/original: %.1fx" % (name, results[name] / results["original"]) if original else ""))
    print("FastFullTokenizer: %d parallel part(s) per batch of %d lines (the CPUs this process may use)"
          % (fast.num_parallel_parts, batch))
    # The tokenizers with FullTokenizer's ids, at their defaults, on text they have not seen.
    print("FastFullTokenizer with its defaults: %.2fM tokens/s; CachedFullTokenizer on a first pass: %.2fM"
          % (results["fast"] / 1e6, results["cached-cold"] / 1e6))
    return 0


if __name__ == "__main__":
    app.run(main)
