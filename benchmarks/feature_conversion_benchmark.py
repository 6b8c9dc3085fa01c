"""Fine-tuning feature conversion (run_classifier.py's, run_squad.py's) with each tokenizer: original, pure, cached.

Usage, from the repository root:
  .venv/bin/python benchmarks/feature_conversion_benchmark.py [--conversion_rounds=5]
Contenders, tasks, vocab and how rounds are timed: docs/performance.md, section "Feature conversion".
"""

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
                     "rotating order. Medians are reported.", lower_bound=1)
flags.DEFINE_integer("conversion_documents", None, "Use only the first N documents of the corpus (default: all, "
                     "~3,000 SQuAD questions and ~3,400 MNLI pairs).", lower_bound=1)
flags.DEFINE_string("conversion_vocab_file", None, "A vocab to use instead of BERT-Base uncased's.")
flags.DEFINE_bool("conversion_quick", False, "A small corpus, a frequency vocab and one round: checks that the "
                  "benchmark runs (its figures mean little).")


def main(argv):
    del argv  # Unused.
    # pylint: disable=import-outside-toplevel
    import tokenization
    from classifier_data import features as classifier_features
    from classifier_data import processors
    from reproduction import sample_data
    from squad_data import examples as squad_examples
    from squad_data import features as squad_features

    harness.print_header("Feature conversion benchmark: run_classifier.py's and run_squad.py's, per tokenizer")
    quick = FLAGS.conversion_quick
    rounds = 1 if quick else FLAGS.conversion_rounds
    with tempfile.TemporaryDirectory() as directory:
        corpus = os.path.join(directory, "corpus.txt")
        sample_data.build_corpus(corpus, 40 if quick else FLAGS.conversion_documents)
        sample_data.build_mnli_sample(corpus, os.path.join(directory, "MNLI"))
        sample_data.build_squad_sample(corpus, os.path.join(directory, "squad"))
        with open(corpus, encoding="utf-8") as f:
            lines = [line.strip() for line in f if line.strip()]
        vocab_file, vocab_description = tokenization_benchmark.benchmark_vocab(
            directory, lines, FLAGS.conversion_vocab_file, "frequency" if quick else "bert")
        factories = {"original": lambda: _ORIGINAL_TOKENIZATION.FullTokenizer(vocab_file, True),
                     "pure": lambda: tokenization.FullTokenizer(vocab_file, True),
                     "cached": lambda: tokenization.CachedFullTokenizer.from_vocab_file(vocab_file, True)}
        if _ORIGINAL_TOKENIZATION is None:
            print(harness.ORIGINAL_MISSING)
            del factories["original"]
        processor = processors.get_processor("mnli")
        mnli = processor.get_train_examples(os.path.join(directory, "MNLI"))
        squad = squad_examples.read_squad_examples(os.path.join(directory, "squad", "train-v2.0.json"),
                                                   is_training=True, version_2_with_negative=True).examples
        tasks = {  # task: (examples, tokenizer -> its features, comparable)
            "MNLI (run_classifier)": (len(mnli), lambda tokenizer: [(f.input_ids, f.segment_ids, f.label_id) for f in (
                classifier_features.convert_examples_to_features(mnli, processor.get_labels(), 128, tokenizer))]),
            "SQuAD 2.0 (run_squad)": (len(squad), lambda tokenizer: [
                (f.input_ids, f.segment_ids, f.start_position, f.end_position, f.token_to_orig_map)
                for f in squad_features.convert_examples_to_features(squad, tokenizer, 384, 128, 64, True)])}
        print("vocab: %s; %s" % (vocab_description, ", ".join(
            "%s: %d examples" % (task, count) for task, (count, _) in tasks.items())))
        references, mismatches = {}, []  # {task: (tokenizer, features) of its first conversion}

        def check(round_index, key, features):
            task, name = key
            reference = references.setdefault(task, (name, features))
            if features != reference[1]:
                mismatches.append("MISMATCH: %s's %s features (round %d) differ from %s's"
                                  % (name, task, round_index + 1, reference[0]))

        # absl's logger at ERROR while converting (the conversions log their first examples); its own level is
        # restored, not the verbosity flag (restoring that would pin a level the logger did not have).
        absl_logger = logging.get_absl_logger()
        level = absl_logger.level
        absl_logger.setLevel(std_logging.ERROR)
        try:
            seconds, _ = harness.interleave({(task, name): lambda task=task, name=name: tasks[task][1](
                factories[name]()) for task in tasks for name in factories}, rounds, rotate=True, each=check)
        finally:
            absl_logger.setLevel(level)
    if mismatches:
        print(mismatches[0])
        return 1
    print("features: identical across %s on every round" % ", ".join(factories))
    baseline = next(iter(factories))  # The original where installed, else pure.
    rows = []
    for task, (count, _) in tasks.items():
        for name in factories:
            median = harness.median_and_spread(seconds[task, name])[0]
            rows.append([task, name, "%.3f" % median, harness.spread(seconds[task, name]), "%.0f" % (count / median),
                         "%.1fx" % (harness.median_and_spread(seconds[task, baseline])[0] / median)])
    harness.print_table(["median of %d rounds; spread = (max - min) / median; speed-up vs %s" % (rounds, baseline)],
                        ["task", "tokenizer", "seconds", "spread", "examples/s", "speed-up"], rows)
    return 0


if __name__ == "__main__":
    app.run(main)
