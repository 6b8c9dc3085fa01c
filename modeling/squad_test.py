"""run_squad's run on tiny SQuAD 2.0-format data: training, prediction files, official metrics."""

import json
import re

import numpy as np
import pytest
import tensorflow as tf

from official.nlp.tools import squad_evaluate_v2_0

from modeling import export_model, squad
from modeling.parameter_groups import BERT_PARAMETER_GROUPS
from modeling.squad import SquadOptions
from training.testing import xla_comparison
from training.testing.summaries import read_scalars

WORDS = ["the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big", "small", "red", "blue"]


def _squad_v2(rng, n, start_id):
    """Contexts of random words; answerable questions ask for the one 'gold' word."""
    articles = []
    for i in range(n):
        words = list(rng.choice(WORDS, 10))
        answerable = i % 3 != 0
        qa = {"id": "q%d" % (start_id + i), "question": "where is the gold", "is_impossible": not answerable}
        if answerable:
            position = rng.randint(0, 10)
            words.insert(position, "gold")
            start = len(" ".join(words[:position])) + (1 if position else 0)
            qa["answers"] = [{"text": "gold", "answer_start": start}]
        else:
            qa["answers"] = []
        articles.append({"title": "t%d" % i, "paragraphs": [{"context": " ".join(words), "qas": [qa]}]})
    return {"version": "v2.0", "data": articles}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("squad")
    rng = np.random.RandomState(0)
    (root / "train.json").write_text(json.dumps(_squad_v2(rng, 240, 0)))
    (root / "dev.json").write_text(json.dumps(_squad_v2(rng, 30, 1000)))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS + ["gold", "where", "is"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = dict(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                  head_size=12, intermediate_size=48, max_position_embeddings=32, type_vocab_size=2)
    (root / "bert_config.json").write_text(json.dumps(config))
    return root


def _options(files, output_dir, **overrides):
    values = dict(
        bert_config_file=str(files / "bert_config.json"), vocab_file=str(files / "vocab.txt"),
        output_dir=str(output_dir), train_file=str(files / "train.json"),
        predict_file=str(files / "dev.json"), do_train=True, do_predict=True,
        max_seq_length=24, doc_stride=8, max_query_length=6, train_batch_size=16,
        learning_rate=3e-3, num_train_epochs=6.0, save_checkpoints_steps=45, iterations_per_loop=15,
        n_best_size=5, max_answer_length=4, version_2_with_negative=True,
    )
    values.update(overrides)
    return SquadOptions(**values)


def test_squad_v2_trains_predicts_and_evaluates(files, tmp_path):
    output = tmp_path / "out"
    outcome = squad.run(_options(files, output))
    predictions = json.loads((output / "predictions.json").read_text())
    nbest = json.loads((output / "nbest_predictions.json").read_text())
    null_odds = json.loads((output / "null_odds.json").read_text())
    dev = json.loads((files / "dev.json").read_text())
    ids = [qa["id"] for a in dev["data"] for p in a["paragraphs"] for qa in p["qas"]]
    assert sorted(predictions) == sorted(ids) == sorted(nbest) == sorted(null_odds)
    assert (output / "predictions.json").read_text().startswith("{\n    \"")  # indent 4
    entry = nbest[ids[1]][0]
    assert set(entry) == {"text", "probability", "start_logit", "end_logit"}
    assert abs(sum(e["probability"] for e in nbest[ids[1]]) - 1) < 1e-4

    metrics = json.loads((output / "eval_results.json").read_text())
    assert {"exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total", "NoAns_exact",
            "NoAns_f1", "NoAns_total", "best_exact", "best_exact_thresh", "best_f1",
            "best_f1_thresh"} <= set(metrics)
    assert metrics["total"] == 30
    assert read_scalars(str(output / "eval"))["best_f1"] == (
        int(tf.train.load_checkpoint(str(output)).get_tensor("global_step")), pytest.approx(metrics["best_f1"]))
    # The model learned to find the gold word and to abstain without it.
    assert metrics["best_f1"] > 80.0, metrics
    # The same numbers as Model Garden's official v2.0 evaluation on our files.
    official = squad_evaluate_v2_0.evaluate(dev["data"], predictions, null_odds)
    assert metrics["exact"] == pytest.approx(official["exact"])
    assert metrics["best_f1"] == pytest.approx(official["final_f1"])
    shapes = dict(tf.train.list_variables(tf.train.latest_checkpoint(str(output))))
    assert shapes["cls/squad/output_weights"] == [2, 32]


def test_v1_style_prediction_from_checkpoint_and_errors(files, tmp_path):
    trained = tmp_path / "trained"
    squad.run(_options(files, trained, do_predict=False, num_train_epochs=1.0))
    output = tmp_path / "predict_only"
    # A v1.1 file: every question has an answer.
    dev = json.loads((files / "dev.json").read_text())
    dev["data"] = [a for a in dev["data"] if a["paragraphs"][0]["qas"][0]["answers"]]
    v1 = tmp_path / "dev-v1.1.json"
    v1.write_text(json.dumps(dev))
    outcome = squad.run(_options(files, output, do_train=False, init_checkpoint=str(trained),
                                 predict_file=str(v1), version_2_with_negative=False))
    assert not (output / "null_odds.json").exists()
    assert set(outcome["metrics"]) == {"exact_match", "f1"}

    with pytest.raises(ValueError, match="If `do_train` is True, then `train_file` must be specified"):
        squad.run(_options(files, tmp_path / "a", train_file=None))
    with pytest.raises(ValueError, match=r"The max_seq_length \(9\) must be greater than max_query_length \(6\) \+ 3"):
        squad.run(_options(files, tmp_path / "b", max_seq_length=9))
    with pytest.raises(ValueError, match=r"Cannot use sequence length 64"):
        squad.run(_options(files, tmp_path / "c", max_seq_length=64))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": "v2.0"}))
    with pytest.raises(ValueError, match="bad.json"):
        squad.run(_options(files, tmp_path / "d", train_file=str(bad)))


def test_inputs_checked_before_training(files, tmp_path):
    output = tmp_path / "out"
    missing = str(tmp_path / "dev-v2.0.json")
    with pytest.raises(FileNotFoundError) as error:
        squad.run(_options(files, output, predict_file=missing))
    assert str(error.value) == "--predict_file=%s does not exist; --do_predict reads it." % missing
    with pytest.raises(ValueError) as error:
        squad.run(_options(files, output, train_file=str(tmp_path)))
    assert str(error.value) == "--train_file=%s is a directory, not a file; --do_train reads it." % tmp_path
    assert not output.exists()  # nothing written, nothing trained

    latin1 = tmp_path / "train-latin1.json"
    latin1.write_bytes('{"data": [{"title": "caf'.encode() + b"\xe9" + b'"}]}')
    with pytest.raises(ValueError) as error:
        squad.run(_options(files, output, train_file=str(latin1)))
    assert str(error.value) == ("--train_file: SQuAD file %s line 1: not valid UTF-8 (byte 0xe9 "
                                "at column 25)." % latin1)
    assert not (output / "train.tf_record").exists()


def test_malformed_or_empty_files_fail_before_training(files, tmp_path):
    """The predict file is read at the start, as the train file is, not after training."""
    output = tmp_path / "out"
    broken = tmp_path / "dev-v2.0.json"
    broken.write_text('{"data": [')
    with pytest.raises(ValueError, match=r"^--predict_file: SQuAD file %s is not valid JSON: " % re.escape(str(broken))):
        squad.run(_options(files, output, predict_file=str(broken)))
    train = json.loads((files / "train.json").read_text())
    train["data"][1]["paragraphs"][0]["qas"][0]["answers"] = [{"text": "gold", "answer_start": "5"}]
    malformed = tmp_path / "train-v2.0.json"
    malformed.write_text(json.dumps(train))
    with pytest.raises(ValueError) as error:
        squad.run(_options(files, output, train_file=str(malformed)))
    assert str(error.value) == ('--train_file: SQuAD file %s: data[1].paragraphs[0].qas[0].answers[0].answer_start '
                                'is "5"; expected an integer.' % malformed)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"version": "v2.0", "data": []}))
    with pytest.raises(ValueError) as error:
        squad.run(_options(files, output, predict_file=str(empty)))
    assert str(error.value) == "--predict_file: SQuAD file %s has no questions." % empty
    assert not output.exists()  # nothing written, nothing trained


def test_xla_compiled_steps_fine_tune_as_the_plain_steps(files, tmp_path):
    """--jit_compile with the FFN frozen: the plain steps' weights up to rounding (no dropout: XLA draws
    its float uniforms differently), the frozen group bit for bit."""
    config_file = xla_comparison.config_without_dropout(files / "bert_config.json", tmp_path)
    for jit_compile in (False, True):
        squad.run(_options(files, tmp_path / str(jit_compile), jit_compile=jit_compile, freeze="ffn",
                           bert_config_file=config_file, num_train_epochs=0.3,
                           save_checkpoints_steps=2, iterations_per_loop=2, do_predict=False))
    last = int(tf.train.latest_checkpoint(str(tmp_path / "True")).rsplit("-", 1)[1])
    assert last >= 4
    names = xla_comparison.variable_names(tmp_path / "True", last)
    frozen = {n for n in names if BERT_PARAMETER_GROUPS.group_of(n)[0] == "ffn"}
    assert len(frozen) > 5
    # The span output's bias stays within ~1e-5 of 0 here: compared at that absolute tolerance.
    assert xla_comparison.assert_trains_alike(tmp_path / "False", tmp_path / "True", last - 2, last, frozen,
                                              atol=1e-5) > 10


def test_export_dir_with_save_frozen_seed_draws_the_frozen_random_ffn_at_load(files, tmp_path):
    output = tmp_path / "frozen"
    outcome = squad.run(_options(files, output, freeze="ffn", save_frozen="seed", num_train_epochs=0.5,
                                 do_predict=False, export_dir=str(tmp_path / "seed")))
    # The same checkpoint with every variable stored, by export_model.py.
    full = export_model.run(export_model.ExportModelOptions(
        export_type="squad", bert_config_file=str(files / "bert_config.json"), vocab_file=str(files / "vocab.txt"),
        init_checkpoint=str(output), export_dir=str(tmp_path / "full"), max_seq_length=24, doc_stride=8,
        max_query_length=6, version_2_with_negative=True, save_frozen="values"))
    dev = json.loads((files / "dev.json").read_text())
    pairs = [(qa["question"], p["context"]) for a in dev["data"][:6] for p in a["paragraphs"] for qa in p["qas"]]
    inputs = dict(question=tf.constant([q for q, _ in pairs]), context=tf.constant([c for _, c in pairs]))
    answers = [tf.saved_model.load(path).signatures["serving_default"](**inputs)
               for path in (outcome["export"], full)]
    for key in ("score", "start_char", "end_char"):
        np.testing.assert_array_equal(answers[0][key].numpy(), answers[1][key].numpy(), err_msg=key)
    assert answers[0]["answer"].numpy().tolist() == answers[1]["answer"].numpy().tolist()
    stored = [len([name for name, _ in tf.train.list_variables(path + "/variables/variables")
                   if name.endswith("VARIABLE_VALUE")]) for path in (outcome["export"], full)]
    assert stored[1] - stored[0] + 1 == 2 * 6  # 2 layers' FFN (LayerNorm included) out, the generator keys in
