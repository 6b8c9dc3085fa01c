"""run_classifier's run on tiny GLUE-format data: training, eval files, submission files."""

import json
import os
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from classifier_data import processors
from freezing import seeded_values
from modeling import classification, export_model, pretraining
from modeling import classifier_model
from modeling.classification import ClassifierOptions
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from modeling.pretraining import PretrainingOptions
from training.testing import xla_comparison
from training.testing.pretraining_records import write_records
from training.testing.summaries import read_scalars

WORDS = ["the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big", "small", "red", "blue"]
CUES = {"entailment": "yes", "contradiction": "no", "neutral": "maybe"}
MNLI_HEADER = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
               "sentence1_parse\tsentence2_parse\tsentence1\tsentence2")


def _mnli_rows(rng, n, labelled):
    rows = []
    for i in range(n):
        label = ["contradiction", "entailment", "neutral"][i % 3]
        premise = " ".join(rng.choice(WORDS, 6))
        # The cue decides the label; repeated, it dominates the pooled output
        # so that a few dozen steps from scratch learn it.
        hypothesis = " ".join([rng.choice(WORDS)] + [CUES[label]] * 3)
        fields = [str(i), "0", "0", "fiction", "x", "x", "x", "x", premise, hypothesis]
        if labelled:
            fields += [label, label]
        rows.append("\t".join(fields))
    return rows


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    root = tmp_path_factory.mktemp("glue")
    rng = np.random.RandomState(0)
    mnli = root / "MNLI"
    mnli.mkdir()
    header = MNLI_HEADER + "\tlabel1\tgold_label"
    for name, n in (("train", 192), ("dev_matched", 30), ("dev_mismatched", 24)):
        (mnli / ("%s.tsv" % name)).write_text("\n".join([header] + _mnli_rows(rng, n, True)) + "\n")
    for name, n in (("test_matched", 10), ("test_mismatched", 7)):
        (mnli / ("%s.tsv" % name)).write_text("\n".join([MNLI_HEADER] + _mnli_rows(rng, n, False)) + "\n")
    (mnli / "diagnostic.tsv").write_text("index\tsentence1\tsentence2\n0\tthe cat sat\tthe cat sat yes\n"
                                         "1\tthe dog ran\tthe dog no\n")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + list(CUES.values())
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = dict(vocab_size=len(vocab) + 3, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  head_size=12, intermediate_size=48, max_position_embeddings=32, type_vocab_size=2)
    (root / "bert_config.json").write_text(json.dumps(config))
    return root


def _options(glue, output_dir, **overrides):
    values = dict(
        data_dir=str(glue / "MNLI"), bert_config_file=str(glue / "bert_config.json"), task_name="MNLI",
        vocab_file=str(glue / "vocab.txt"), output_dir=str(output_dir), max_seq_length=24,
        do_train=True, do_eval=True, do_predict=True, train_batch_size=16, eval_batch_size=8,
        learning_rate=2e-3, num_train_epochs=6.0, save_checkpoints_steps=36, iterations_per_loop=12,
    )
    values.update(overrides)
    return ClassifierOptions(**values)


def test_mnli_trains_evaluates_and_writes_submission_files(glue, tmp_path):
    output = tmp_path / "out"
    outcome = classification.run(_options(glue, output, export_dir=str(tmp_path / "export")))
    matched = outcome["eval"]["eval_results.txt"]
    assert matched["global_step"] == int(192 / 16 * 6.0)
    assert matched["eval_accuracy"] > 0.8  # the cue word decides the label
    lines = (output / "eval_results.txt").read_text().splitlines()
    assert [l.split(" = ")[0] for l in lines] == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    mismatched = (output / "eval_results_mismatched.txt").read_text().splitlines()
    assert [l.split(" = ")[0] for l in mismatched] == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    # The eval metrics as TensorBoard scalars too, at the global step.
    assert read_scalars(str(output / "eval"))["eval_accuracy"] == (
        matched["global_step"], pytest.approx(matched["eval_accuracy"]))
    assert set(read_scalars(str(output / "eval_mismatched"))) == {"eval_accuracy", "eval_loss", "loss"}

    # test_results.tsv: one row of 3 probabilities per matched test example.
    rows = [list(map(float, l.split("\t"))) for l in (output / "test_results.tsv").read_text().splitlines()]
    assert len(rows) == 10 and all(len(r) == 3 and abs(sum(r) - 1) < 1e-4 for r in rows)
    # Leaderboard files: header, index column, label names.
    for name, count in (("MNLI-m.tsv", 10), ("MNLI-mm.tsv", 7), ("AX.tsv", 2)):
        lines = (output / name).read_text().splitlines()
        assert lines[0] == "index\tprediction"
        assert [l.split("\t")[0] for l in lines[1:]] == [str(i) for i in range(count)]
        assert {l.split("\t")[1] for l in lines[1:]} <= {"entailment", "neutral", "contradiction"}
    # The test hypotheses carry the cue too: predictions follow it.
    test_rows = (glue / "MNLI" / "test_matched.tsv").read_text().splitlines()[1:]
    predicted = [l.split("\t")[1] for l in (output / "MNLI-m.tsv").read_text().splitlines()[1:]]
    expected = [{v: k for k, v in CUES.items()}[r.split("\t")[9].split()[-1]] for r in test_rows]
    assert len(set(expected)) == 3
    assert np.mean([p == e for p, e in zip(predicted, expected)]) >= 0.8
    # --export_dir: the trained model as a SavedModel on raw text gives the submission's labels.
    assert outcome["export"] == str(tmp_path / "export" / "1")
    serve = tf.saved_model.load(outcome["export"]).signatures["serving_default"]
    fields = [r.split("\t") for r in test_rows]
    served = serve(text_a=tf.constant([f[8] for f in fields]), text_b=tf.constant([f[9] for f in fields]))
    assert [label.decode() for label in served["label"].numpy()] == predicted

    # Checkpoints hold the classifier under the original names.
    shapes = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(output))))
    assert shapes["output_weights"] == [3, 32] and shapes["output_bias"] == [3]
    assert "output_weights/adam_m" in shapes


@pytest.fixture
def float32_afterwards():
    """A run with --dtype sets the process's Keras policy: put back the float32 the other tests build models in."""
    yield
    tf_keras.mixed_precision.set_global_policy("float32")


# bfloat16: the fine-tuning's compute dtype where the CPU has native bfloat16 (make demo's default there); the
# Keras layers then read their variables through AutoCastVariable wrappers, and export_model.py's --dtype makes
# the full export compute as the seeded one.
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_export_dir_with_save_frozen_seed_draws_the_frozen_random_ffn_at_load(glue, tmp_path, dtype,
                                                                             float32_afterwards):
    output = tmp_path / "frozen"
    outcome = classification.run(_options(glue, output, freeze="ffn", save_frozen="seed",
                                          num_train_epochs=1.0, do_eval=False, do_predict=False,
                                          export_dir=str(tmp_path / "seed"), dtype=dtype))
    # The same checkpoint with every variable stored, by export_model.py.
    full = export_model.run(export_model.ExportModelOptions(
        bert_config_file=str(glue / "bert_config.json"), vocab_file=str(glue / "vocab.txt"), task_name="MNLI",
        init_checkpoint=str(output), export_dir=str(tmp_path / "full"), max_seq_length=24, save_frozen="values",
        dtype=dtype))
    rows = [r.split("\t") for r in (glue / "MNLI" / "test_matched.tsv").read_text().splitlines()[1:]]
    texts = dict(text_a=tf.constant([r[8] for r in rows]), text_b=tf.constant([r[9] for r in rows]))
    logits = [tf.saved_model.load(path).signatures["serving_default"](**texts)["logits"].numpy()
              for path in (outcome["export"], full)]
    np.testing.assert_array_equal(logits[0], logits[1])
    manifest = seeded_values.read_manifest(tf.train.latest_checkpoint(str(output)))
    stored = [len([name for name, _ in tf.train.list_variables(path + "/variables/variables")
                   if name.endswith("VARIABLE_VALUE")]) for path in (outcome["export"], full)]
    # 2 layers' FFN, its LayerNorm included, not stored; in their place one variable, the generator keys.
    assert stored[1] - stored[0] + 1 == len(manifest["variables"]) == 2 * 6


def test_initialises_from_run_pretraining_output_and_honours_freeze(glue, tmp_path):
    pretrained = tmp_path / "pretrained"
    write_records(str(tmp_path / "records.tfrecord"), 64, 20, 24, 4)
    pretraining.run(PretrainingOptions(
        bert_config_file=str(glue / "bert_config.json"), input_file=str(tmp_path / "records.tfrecord"),
        output_dir=str(pretrained), max_seq_length=24, max_predictions_per_seq=4, do_train=True,
        train_batch_size=8, num_train_steps=2, num_warmup_steps=0, save_checkpoints_steps=2,
        iterations_per_loop=2))
    output = tmp_path / "finetuned"
    classification.run(_options(glue, output, init_checkpoint=str(pretrained / "model.ckpt-2"),
                                freeze="embeddings,attention:0", num_train_epochs=1.0,
                                do_predict=False, save_frozen="seed", export_dir=str(tmp_path / "export")))
    # Frozen at pre-trained values, drawn by no seed: the checkpoint has no manifest and the SavedModel stores
    # them, as export_model.py --save_frozen=values does.
    latest = tf.train.latest_checkpoint(str(output))
    assert not os.path.exists(latest + ".frozen.json")
    full = export_model.run(export_model.ExportModelOptions(
        bert_config_file=str(glue / "bert_config.json"), vocab_file=str(glue / "vocab.txt"), task_name="MNLI",
        init_checkpoint=str(output), export_dir=str(tmp_path / "full"), max_seq_length=24, save_frozen="values"))
    stored = [tf.train.list_variables(path + "/variables/variables") for path in (str(tmp_path / "export" / "1"), full)]
    assert stored[0] == stored[1]
    before = tf.train.load_checkpoint(str(pretrained / "model.ckpt-2"))
    after = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(output)))
    for name in ("bert/embeddings/word_embeddings", "bert/encoder/layer_0/attention/self/query/kernel"):
        np.testing.assert_array_equal(after.get_tensor(name), before.get_tensor(name))
        assert not after.has_tensor(name + "/adam_m")
    trained = "bert/encoder/layer_1/attention/self/query/kernel"
    assert not np.array_equal(after.get_tensor(trained), before.get_tensor(trained))
    report = json.loads((output / "parameters.json").read_text())
    assert report["flags"]["freeze"] == "embeddings,attention:0"


def test_eval_only_from_checkpoint_and_errors(glue, tmp_path):
    with pytest.raises(ValueError, match="^--task_name=mnlx: unknown task; known tasks: cola, mnli"):
        classification.run(_options(glue, tmp_path / "a", task_name="mnlx"))
    small = tmp_path / "small_config.json"
    small.write_text(json.dumps(dict(json.loads((glue / "bert_config.json").read_text()), vocab_size=10)))
    with pytest.raises(ValueError, match=r"vocab.txt has 20 lines \(ids 0-19\) but bert_config's vocab_size is 10"):
        classification.run(_options(glue, tmp_path / "b", bert_config_file=str(small)))
    with pytest.raises(ValueError, match="needs a checkpoint in --output_dir or --init_checkpoint"):
        classification.run(_options(glue, tmp_path / "c", do_train=False))
    with pytest.raises(ValueError, match=r"Cannot use sequence length 64 because the BERT model was only trained up to sequence length 32"):
        classification.run(_options(glue, tmp_path / "d", max_seq_length=64))
    with pytest.raises(ValueError, match="At least one of `do_train`, `do_eval` or `do_predict' must be True"):
        classification.run(_options(glue, tmp_path / "e", do_train=False, do_eval=False, do_predict=False))
    bad = tmp_path / "BAD"
    bad.mkdir()
    (bad / "train.tsv").write_text(MNLI_HEADER + "\tlabel1\tgold_label\n0\t0\t0\tfiction\tshort row\n")
    with pytest.raises(ValueError, match=r"train.tsv line 2: expected at least"):
        classification.run(_options(glue, tmp_path / "f", data_dir=str(bad), do_eval=False,
                                    do_predict=False))


def test_missing_inputs_fail_before_training(glue, tmp_path):
    data = tmp_path / "MNLI"
    shutil.copytree(glue / "MNLI", data)
    cases = [
        (dict(data_dir=str(tmp_path / "nowhere")), FileNotFoundError,
         "--data_dir=%s does not exist; task MNLI reads train.tsv from it for --do_train."
         % (tmp_path / "nowhere")),
        (dict(do_train=False, data_dir=str(data / "train.tsv")), ValueError,
         "--data_dir=%s is not a directory; task MNLI reads dev_matched.tsv from it for --do_eval."
         % (data / "train.tsv")),
    ]
    for name, flags in (("dev_mismatched.tsv", {}), ("test_mismatched.tsv", dict(do_eval=False))):
        (data / name).rename(tmp_path / name)
        cases.append((dict(flags, data_dir=str(data)), FileNotFoundError,
                      "%s does not exist; task MNLI reads it from --data_dir for --do_%s."
                      % (data / name, "eval" if name.startswith("dev") else "predict")))
    for flags, error_type, message in cases:
        output = tmp_path / "out"
        with pytest.raises(error_type) as error:
            classification.run(_options(glue, output, **flags))
        assert str(error.value) == message
        assert not output.exists()  # nothing written, nothing trained


def test_malformed_dev_and_test_files_fail_before_training(glue, tmp_path):
    for name, flags in (("dev_matched.tsv", dict(do_predict=False)), ("test_matched.tsv", dict(do_eval=False))):
        data = tmp_path / name / "MNLI"
        shutil.copytree(glue / "MNLI", data)
        lines = (data / name).read_text().splitlines()
        if name.startswith("dev"):
            lines[2] = lines[2].rsplit("\t", 1)[0] + "\tmaybe"  # An unknown label.
        else:
            lines[2] = "\t".join(lines[2].split("\t")[:3])  # Too few columns.
        (data / name).write_text("\n".join(lines) + "\n")
        output = tmp_path / name / "out"
        with pytest.raises(ValueError, match=r"^%s line 3: " % re.escape(str(data / name))):
            classification.run(_options(glue, output, data_dir=str(data), **flags))
        assert not output.exists()  # Found before anything was trained or written.


def test_empty_train_dev_and_test_files_fail_before_training(glue, tmp_path):
    """A file holding only its header: found before training, not by numpy after it."""
    cases = [("dev_matched.tsv", "eval", dict(do_predict=False)), ("dev_mismatched.tsv", "eval", {}),
             ("test_matched.tsv", "predict", dict(do_eval=False)), ("test_mismatched.tsv", "predict", {}),
             ("diagnostic.tsv", "predict", {}), ("train.tsv", "train", dict(do_eval=False, do_predict=False))]
    for name, mode, flags in cases:
        data = tmp_path / name / "MNLI"
        shutil.copytree(glue / "MNLI", data)
        (data / name).write_text((data / name).read_text().splitlines()[0] + "\n")
        output = tmp_path / name / "out"
        message = "%s has no examples; task MNLI reads it from --data_dir for --do_%s." % (data / name, mode)
        with pytest.raises(ValueError, match="^%s$" % re.escape(message)):
            classification.run(_options(glue, output, data_dir=str(data), **flags))
        assert not output.exists()  # Found before anything was trained or written.


def test_an_empty_set_of_a_processor_written_for_the_originals_api_is_named(glue, tmp_path, monkeypatch):
    """A processor without set_files (the original's API): the set and --data_dir are named, not a KeyError."""
    mnli = processors.MnliProcessor()

    class Custom(processors.DataProcessor):
        def get_train_examples(self, data_dir):
            return mnli.get_train_examples(data_dir)

        def get_dev_examples(self, data_dir):
            return []

        def get_labels(self):
            return mnli.get_labels()

    monkeypatch.setitem(processors.PROCESSORS, "custom", Custom)
    with pytest.raises(ValueError, match="^%s$" % re.escape(
            "The dev set of --data_dir=%s has no examples; task custom reads it from --data_dir for --do_eval."
            % (glue / "MNLI"))):
        classification.run(_options(glue, tmp_path / "out", task_name="custom", do_predict=False))


def test_sts_b_regression(glue, tmp_path):
    stsb = tmp_path / "STS-B"
    stsb.mkdir()
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    rng = np.random.RandomState(1)
    rows = []
    for i in range(64):
        score = float(i % 6)
        words = " ".join(rng.choice(WORDS, 4))
        rows.append("\t".join([str(i), "g", "f", "y", "0", "s", "s", words, words, "%.1f" % score]))
    (stsb / "train.tsv").write_text("\n".join([header] + rows) + "\n")
    (stsb / "dev.tsv").write_text("\n".join([header] + rows[:16]) + "\n")
    (stsb / "test.tsv").write_text("\n".join([header.rsplit("\t", 1)[0]] + [r.rsplit("\t", 1)[0] for r in rows[:5]]) + "\n")
    output = tmp_path / "out"
    outcome = classification.run(_options(glue, output, data_dir=str(stsb), task_name="STS-B",
                                          num_train_epochs=1.0))
    results = outcome["eval"]["eval_results.txt"]
    assert {"eval_pearson", "eval_spearman", "eval_corr", "eval_loss", "global_step"} <= set(results)
    lines = (output / "STS-B.tsv").read_text().splitlines()
    assert lines[0] == "index\tprediction" and len(lines) == 6
    assert all(0.0 <= float(l.split("\t")[1]) <= 5.0 for l in lines[1:])
    assert len((output / "test_results.tsv").read_text().splitlines()) == 5


def test_fine_tunes_with_lamb(glue, tmp_path):
    """--optimizer=lamb fine-tunes (from scratch here, so less far than AdamW): the loss falls well
    below chance's ln 3 = 1.10, and the checkpoint carries LAMB's moments."""
    outcome = classification.run(_options(glue, tmp_path / "out", optimizer="lamb", learning_rate=0.1,
                                          do_predict=False))
    results = outcome["eval"]["eval_results.txt"]
    assert results["eval_loss"] < 0.8 and results["eval_accuracy"] > 0.6
    shapes = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(tmp_path / "out"))))
    assert shapes["output_weights/adam_m"] == [3, 32]


def test_xla_compiled_steps_fine_tune_as_the_plain_steps(glue, tmp_path, monkeypatch):
    """--jit_compile with attention frozen: the plain steps' weights up to rounding (no dropout: XLA draws
    its float uniforms differently), the frozen group bit for bit."""
    monkeypatch.setattr(classifier_model, "CLASSIFIER_DROPOUT", 0.0)
    config_file = xla_comparison.config_without_dropout(glue / "bert_config.json", tmp_path)
    for jit_compile in (False, True):
        classification.run(_options(glue, tmp_path / str(jit_compile), jit_compile=jit_compile, freeze="attention",
                                    bert_config_file=config_file, num_train_epochs=0.34,
                                    save_checkpoints_steps=2, iterations_per_loop=2, do_eval=False,
                                    do_predict=False))
    names = xla_comparison.variable_names(tmp_path / "True", 4)
    frozen = {n for n in names if BERT_PARAMETER_GROUPS.group_of(n)[0] == "attention"}
    assert len(frozen) > 5
    assert xla_comparison.assert_trains_alike(tmp_path / "False", tmp_path / "True", 2, 4, frozen) > 10
