"""Exported SavedModels: the in-process model's outputs from raw text, loaded with TensorFlow alone."""

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest
import tensorflow as tf

import modeling
import tokenization
from classifier_data import features
from classifier_data.data_processor import InputExample
from modeling import export_model
from modeling.export_model import ExportModelOptions
from serving import export

WORDS = ["the", "cat", "dog", "sat", "##s", "ran", "on", "a", "mat", "where", "is", "gold", ",", "."]
PAIRS = [("the cat sat on a mat.", "a cat sat"), ("Dogs ran", ""), ("the dog, the cat", "zebra mat")]
QUESTIONS = [("where is the cat", "the dog sat on a mat . the cat ran on the mat , a gold cat"),
             ("where is gold", "gold"), ("is it", "the  cat\nsat on\ta mat")]
LOADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testing", "call_saved_model.py")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    # head_size 12 with 4 heads on hidden 32: heads x head_size != hidden.
    config = dict(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  head_size=12, intermediate_size=48, max_position_embeddings=128, type_vocab_size=2)
    (root / "bert_config.json").write_text(json.dumps(config))
    return root


def _options(files, export_dir, **values):
    defaults = dict(vocab_file=str(files / "vocab.txt"), do_lower_case=True, max_seq_length=16,
                    export_dir=str(export_dir), export_version=None, doc_stride=4, max_query_length=5,
                    n_best_size=5, max_answer_length=4, version_2_with_negative=True,
                    null_score_diff_threshold=0.0)
    defaults.update(values)
    return types.SimpleNamespace(**defaults)


def _model(files, task_model, seed):
    tf.keras.utils.set_random_seed(seed)
    config = modeling.BertConfig.from_json_file(str(files / "bert_config.json"))
    return modeling.build_model(task_model(config))


def _inputs(ids):
    return dict(input_ids=ids["input_word_ids"], input_mask=ids["input_mask"], token_type_ids=ids["input_type_ids"])


def _classifier_inputs(files, max_seq_length):
    tokenizer = tokenization.FullTokenizer(str(files / "vocab.txt"), True)
    rows = [features.convert_single_example(9, InputExample("x", a, b or None), None, max_seq_length, tokenizer)
            for a, b in PAIRS]
    return {name: tf.constant([getattr(row, field) for row in rows])
            for name, field in (("input_word_ids", "input_ids"), ("input_mask", "input_mask"),
                                ("input_type_ids", "segment_ids"))}


@pytest.fixture(scope="module")
def exports(files, tmp_path_factory):
    """{kind: (in-process model, SavedModel path)}."""
    root = tmp_path_factory.mktemp("saved_models")
    classifier = _model(files, lambda c: modeling.BertClassifierModel(c, 3), 1)
    squad = _model(files, modeling.BertSquadModel, 2)
    bert = _model(files, modeling.BertModel, 3)
    labels = ["contradiction", "entailment", "neutral"]
    return dict(
        classifier=(classifier, export.export_classifier(classifier, _options(files, root / "classifier"), labels,
                                                         False, True)),
        squad=(squad, export.export_squad(squad, _options(files, root / "squad"))),
        encoder=(bert, export.export_encoder(bert, _options(files, root / "encoder"))),
    )


def test_classifier_signature_gives_the_models_outputs(files, exports):
    model, path = exports["classifier"]
    serve = tf.saved_model.load(path).signatures["serving_default"]
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]), text_b=tf.constant([b for _, b in PAIRS]))
    logits = model(_inputs(_classifier_inputs(files, 16)), training=False)["logits"].numpy()
    np.testing.assert_allclose(got["logits"].numpy(), logits, atol=1e-5)
    np.testing.assert_allclose(got["probabilities"].numpy(), tf.nn.softmax(logits).numpy(), atol=1e-5)
    labels = np.array(["contradiction", "entailment", "neutral"])[logits.argmax(axis=1)]
    assert [label.decode() for label in got["label"].numpy()] == labels.tolist()


def test_single_text_and_regression_signatures(files, tmp_path):
    model = _model(files, lambda c: modeling.BertClassifierModel(c, 1), 4)
    path = export.export_classifier(model, _options(files, tmp_path), [], True, False)
    serve = tf.saved_model.load(path).signatures["serving_default"]
    assert set(serve.structured_input_signature[1]) == {"text_a"}
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]))
    assert set(got) == {"prediction", "logits"}
    tokenizer = tokenization.FullTokenizer(str(files / "vocab.txt"), True)
    rows = [features.convert_single_example(9, InputExample("x", a, None), None, 16, tokenizer) for a, _ in PAIRS]
    single = dict(input_ids=tf.constant([r.input_ids for r in rows]), input_mask=tf.constant([r.input_mask for r in rows]),
                  token_type_ids=tf.constant([r.segment_ids for r in rows]))
    expected = model(single, training=False)["logits"].numpy()[:, 0]
    np.testing.assert_allclose(got["prediction"].numpy(), expected, atol=1e-5)


def test_encoder_signatures_and_preprocessing(files, exports):
    bert, path = exports["encoder"]
    loaded = tf.saved_model.load(path)
    assert set(loaded.signatures) == {"serving_default", "preprocess", "preprocess_pair"}
    packed = loaded.signatures["preprocess_pair"](text_a=tf.constant([a for a, _ in PAIRS]),
                                                 text_b=tf.constant([b for _, b in PAIRS]))
    expected_ids = _classifier_inputs(files, 16)
    for name in expected_ids:
        np.testing.assert_array_equal(packed[name].numpy(), expected_ids[name].numpy())
    got = loaded.signatures["serving_default"](**packed)
    outputs = bert(_inputs(expected_ids), training=False)
    np.testing.assert_allclose(got["pooled_output"].numpy(), outputs["pooled_output"].numpy(), atol=1e-5)
    np.testing.assert_allclose(got["sequence_output"].numpy(), outputs["sequence_output"].numpy(), atol=1e-5)
    assert loaded.do_lower_case.numpy()
    assert tf.io.gfile.exists(os.path.join(path, "assets", "vocab.txt"))


def test_fresh_process_with_tensorflow_only_loads_and_calls_every_export(files, exports):
    """No project import: `python -I` leaves the repository off sys.path."""
    requests = dict(
        classifier=dict(text_a=[a for a, _ in PAIRS], text_b=[b for _, b in PAIRS]),
        squad=dict(question=[q for q, _ in QUESTIONS], context=[c for _, c in QUESTIONS]),
        encoder=dict(text_a=[a for a, _ in PAIRS], text_b=[b for _, b in PAIRS]),
    )
    calls = [dict(path=exports[kind][1], signature="preprocess_pair" if kind == "encoder" else "serving_default",
                  inputs=inputs) for kind, inputs in requests.items()]
    result = subprocess.run([sys.executable, "-I", LOADER, json.dumps(calls)], capture_output=True, text=True,
                            timeout=300, check=False, cwd="/")
    assert result.returncode == 0, result.stderr[-3000:]
    classifier, squad, encoder = json.loads(result.stdout.strip().splitlines()[-1])
    assert classifier["project_modules"] == [] and sorted(classifier["outputs"]) == ["label", "logits",
                                                                                     "probabilities"]
    in_process = tf.saved_model.load(exports["classifier"][1]).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in requests["classifier"].items()})
    np.testing.assert_allclose(classifier["outputs"]["logits"], in_process["logits"].numpy(), atol=1e-5)
    answers = tf.saved_model.load(exports["squad"][1]).signatures["serving_default"](
        **{k: tf.constant(v) for k, v in requests["squad"].items()})
    assert squad["outputs"]["answer"] == [a.decode() for a in answers["answer"].numpy()]
    assert encoder["outputs"]["input_word_ids"] == _classifier_inputs(files, 16)["input_word_ids"].numpy().tolist()


def test_saved_model_cli_lists_the_signatures(exports):
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    shown = subprocess.run([cli, "show", "--dir", exports["squad"][1], "--all"], capture_output=True, text=True,
                           timeout=300, check=True).stdout
    assert "signature_def['serving_default']" in shown
    for name in ("question", "context", "answer", "start_char", "end_char", "score", "is_impossible"):
        assert "['%s']" % name in shown, name


# ------------------------------------------------------------------ export_model.py

def _export_options(files, tmp_path, **values):
    defaults = dict(bert_config_file=str(files / "bert_config.json"), vocab_file=str(files / "vocab.txt"),
                    export_dir=str(tmp_path / "export"), max_seq_length=16)
    defaults.update(values)
    return ExportModelOptions(**defaults)


def test_export_model_loads_the_checkpoint_it_exports(files, exports, tmp_path):
    model, _ = exports["classifier"]
    prefix = str(tmp_path / "ckpt" / "model.ckpt-5")
    modeling.save_checkpoint(model, prefix)
    path = export_model.run(_export_options(files, tmp_path, export_type="classifier", task_name="mnli",
                                            init_checkpoint=prefix))
    assert path == str(tmp_path / "export" / "1")
    serve = tf.saved_model.load(path).signatures["serving_default"]
    got = serve(text_a=tf.constant([a for a, _ in PAIRS]), text_b=tf.constant([b for _, b in PAIRS]))
    np.testing.assert_allclose(got["logits"].numpy(),
                               model(_inputs(_classifier_inputs(files, 16)), training=False)["logits"], atol=1e-5)


def test_export_model_errors_name_the_flag(files, exports, tmp_path):
    encoder_prefix = str(tmp_path / "encoder" / "bert_model.ckpt")
    modeling.save_checkpoint(exports["encoder"][0], encoder_prefix)
    with pytest.raises(ValueError, match="--export_type=classifier needs --task_name"):
        export_model.run(_export_options(files, tmp_path, init_checkpoint=encoder_prefix))
    with pytest.raises(ValueError, match="--init_checkpoint is required"):
        export_model.run(_export_options(files, tmp_path, export_type="encoder"))
    with pytest.raises(ValueError, match=r"--export_dir is required"):
        export_model.run(_export_options(files, tmp_path, export_type="encoder", export_dir=None,
                                         init_checkpoint=encoder_prefix))
    with pytest.raises(ValueError, match=r"--init_checkpoint=.* lacks 2 variables of the classifier model "
                                         r"\(output_bias, output_weights\)"):
        export_model.run(_export_options(files, tmp_path, task_name="MNLI", init_checkpoint=encoder_prefix))
    # An MNLI classifier (3 labels) exported as CoLA (2): the label count, not head_size, is to blame.
    mnli_prefix = str(tmp_path / "mnli" / "model.ckpt-5")
    modeling.save_checkpoint(exports["classifier"][0], mnli_prefix)
    with pytest.raises(ValueError, match=r"does not fit the model \(a classifier fine-tuned for another number of "
                                         r"labels: another --task_name\?\)\. Shape mismatch for 2 variable\(s\): "
                                         r"output_weights: checkpoint shape \[3, 32\], model shape \[2, 32\]; "
                                         r"output_bias: checkpoint shape \[3\], model shape \[2\]$"):
        export_model.run(_export_options(files, tmp_path, task_name="CoLA", init_checkpoint=mnli_prefix))
    # XNLI has MNLI's three labels: only run_classifier.py's record of the run tells them apart.
    (tmp_path / "mnli" / "run.json").write_text(json.dumps(dict(task_name="MNLI", train_batch_size=32)))
    with pytest.raises(ValueError, match=r"^--task_name=XNLI: %s records a run fine-tuned on --task_name=MNLI; export "
                                         r"it with that task's labels \(--task_name=MNLI\)\.$" % (tmp_path / "mnli/run.json")):
        export_model.run(_export_options(files, tmp_path, task_name="XNLI", init_checkpoint=mnli_prefix))
    # An encoder export of the same checkpoint works, with export_model's default length.
    path = export_model.run(_export_options(files, tmp_path, export_type="encoder", max_seq_length=None,
                                            init_checkpoint=encoder_prefix))
    packed = tf.saved_model.load(path).signatures["preprocess"](text=tf.constant(["the cat"]))
    assert packed["input_word_ids"].shape == (1, export_model.DEFAULT_MAX_SEQ_LENGTH["encoder"])
