"""reproduce_paper_tables end to end at a micro scale: plan, run, results, plot, resume; bad input."""

import dataclasses
import json
import os

import pytest

from studies.bert_tables import experiments, scales
from studies.bert_tables.testing import MICRO, MICRO_SMALL, write_micro_data
import studies


@pytest.fixture
def micro(monkeypatch, tmp_path):
    """Table 2B's first row at the micro scale, on micro data."""
    monkeypatch.setitem(scales.SCALES, "tiny", MICRO)
    table = experiments.get("table2b")
    monkeypatch.setitem(experiments.EXPERIMENTS, "table2b", dataclasses.replace(table, rows=table.rows[:1]))
    (tmp_path / "data").mkdir()
    return write_micro_data(tmp_path / "data")


def _options(paths, output_dir, **overrides):
    values = dict(experiment="table2b", scale="tiny", output_dir=str(output_dir), corpus=paths.corpus,
                  mnli_dir=paths.mnli_dir, squad_dir=paths.squad_dir, vocab_file=paths.vocab_file)
    values.update(overrides)
    return studies.ReproduceOptions(**values)


@pytest.mark.long
def test_a_table_runs_end_to_end_then_resumes_by_skipping_every_step(micro, tmp_path, caplog):
    output_dir = tmp_path / "out"
    written = studies.run(_options(micro, output_dir))
    [row] = written["results"]["rows"]
    assert row["name"] == "dp32" and row["head_size"] == 32
    assert row["config"]["hidden_size"] == 32 and row["config"]["head_size"] == 2  # d/16, d_p/16
    for key in ("mnli_m", "mnli_mm", "squad_em", "squad_f1"):
        assert len(row[key]["per_seed"]) == 1 and row[key]["std"] == 0.0, key
        assert 0.0 <= row[key]["mean"] <= 100.0
    # The probe of the pre-trained model: d_p = 2 bounds every head's logit rank.
    assert 1.0 <= row["mean_logit_rank"] <= 2.0 and row["rank_bound"] == 2.0
    assert "| mean logit rank (bound min(d_p, n)) |" in open(written["results_md"]).read()
    assert set(row["pretraining"]) >= {"loss", "masked_lm_accuracy", "next_sentence_accuracy"}
    assert row["params"]["paper_scale"] == pytest.approx(130e6, rel=0.005)
    assert json.loads(open(written["results_json"]).read()) == written["results"]
    table = open(written["results_md"]).read()
    assert "Tiny scale" in table and "does not reproduce the paper's numbers" in table
    assert "| SQuAD F1 (paper) |" in table and "| 88.53±0.06 |" in table and "| 82.5±0.1 |" in table
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    plan_text = open(written["plan_sh"]).read()
    assert plan_text.count("run_pretraining.py") == 2 and "mnli_seed1" in plan_text

    # The same command again: every step is finished, none runs, the results are the same.
    caplog.clear()
    with caplog.at_level("INFO"):
        again = studies.run(_options(micro, output_dir))
    assert "Ran 0 steps, skipped 7 finished ones." in caplog.messages
    assert again["results"] == written["results"]
    # A step whose result file is gone is unfinished: that step alone runs again.
    os.remove(output_dir / "dp32" / "squad_seed1" / "eval_results.json")
    caplog.clear()
    with caplog.at_level("INFO"):
        studies.run(_options(micro, output_dir))
    assert "Ran 1 steps, skipped 6 finished ones." in caplog.messages

    # Its steps two at a time, each in a process on its share of the cores (each after the steps it reads
    # from): the figures of the steps one at a time.
    side_by_side = studies.run(_options(micro, tmp_path / "side_by_side", parallel_runs=2))
    assert json.loads(json.dumps(side_by_side["results"]).replace(str(tmp_path / "side_by_side"), str(output_dir))) \
        == json.loads(json.dumps(written["results"]))


def test_a_dry_run_runs_nothing(micro, tmp_path):
    output_dir = tmp_path / "out"
    studies.run(_options(micro, output_dir, dry_run=True))
    assert not os.path.exists(output_dir / "results.json")
    assert os.path.exists(output_dir / "configs" / "dp32.json")


def test_bad_input_is_named(micro, tmp_path):
    with pytest.raises(ValueError, match=r"^--experiment=table9 is not supported; expected one of table1, "):
        studies.run(_options(micro, tmp_path / "a", experiment="table9"))
    with pytest.raises(ValueError) as error:
        studies.run(studies.ReproduceOptions(experiment="table1", scale="paper", output_dir=str(tmp_path / "b"),
                                             corpus=micro.corpus))
    assert str(error.value) == "--scale=paper needs --mnli_dir, --squad_dir, --vocab_file (where the data lives)."
    with pytest.raises(ValueError, match=r"^--mnli_dir=.*/nowhere is not a directory\.$"):
        studies.run(_options(micro, tmp_path / "c", mnli_dir=str(tmp_path / "nowhere")))
    os.remove(os.path.join(micro.squad_dir, "dev-v1.1.json"))
    with pytest.raises(ValueError, match=r"^--squad_dir=.*/squad lacks dev-v1\.1\.json\.$"):
        studies.run(_options(micro, tmp_path / "d"))
    # A dry run at paper scale needs no data: its plan leaves the paths to the environment.
    written = studies.run(studies.ReproduceOptions(experiment="table1", scale="paper", dry_run=True,
                                                   output_dir=str(tmp_path / "plan")))
    assert '--input_file="${CORPUS}"' in open(written["plan_sh"]).read()


def test_small_scale_pretrains_two_seeds_evaluates_held_out_text_and_marks_fine_tuning_not_run(
        micro, monkeypatch, tmp_path):
    monkeypatch.setitem(scales.SCALES, "small", MICRO_SMALL)
    options = _options(micro, tmp_path / "out", scale="small", eval_corpus=micro.eval_corpus, mnli_dir=None,
                       squad_dir=None, vocab_file=None)
    written = studies.run(options)
    [row] = written["results"]["rows"]
    # Without --vocab_file the plan learns a WordPiece vocabulary from the corpus, and every step uses it.
    learned = str(tmp_path / "out" / "data" / "vocab.txt")
    with open(learned, encoding="utf-8") as f:
        vocab = f.read().splitlines()
    assert vocab[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] and {"cat", "gold", "."} <= set(vocab)
    assert row["config"]["vocab_size"] == 64 >= len(vocab)
    # The unigram baseline of the held-out masked tokens, from the records the plan made with that vocabulary.
    unigram = written["results"]["unigram"]
    assert unigram["vocab_size"] == len(vocab) and unigram["most_frequent_token"] in vocab
    assert 0.0 < unigram["accuracy"] < 1.0 and unigram["loss"] > 0.0
    assert "Unigram baseline on the same held-out masked tokens" in open(written["results_md"]).read()
    held_out = row["held_out"]["masked_lm_accuracy"]
    assert len(held_out["per_seed"]) == 2 and 0.0 <= min(held_out["per_seed"]) <= max(held_out["per_seed"]) <= 1.0
    # Two seeds are two models: their held-out losses differ.
    losses = row["held_out"]["masked_lm_loss"]["per_seed"]
    assert losses[0] != losses[1] and row["held_out"]["masked_lm_loss"]["std"] > 0
    # The learning curves: every checkpoint's held-out figures, the last the final evaluation's.
    assert [curve[-1][1] for curve in row["held_out_curves"]] == pytest.approx(losses)
    assert [curve[-1][2] for curve in row["held_out_curves"]] == pytest.approx(held_out["per_seed"])
    assert len(row["mean_logit_rank_per_seed"]) == 2 and row["rank_bound"] == 2.0
    assert row["fine_tuning_run"] == dict(mnli=False, squad=False)
    table = open(written["results_md"]).read()
    assert "| held-out MLM acc |" in table and "| not run |" in table and "Small scale" in table
    plan_text = open(written["plan_sh"]).read()
    assert "--input_file=%s" % micro.eval_corpus in plan_text and "run_classifier.py" not in plan_text
    assert plan_text.count("--vocab_file=%s" % learned) == 2 + 1 + 2  # the records, the baseline, the probes
    assert "pretrain_32_seed2" in plan_text and "--random_seed=2" in plan_text
    with open(written["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert not os.path.exists(tmp_path / "out" / "table2b_fine_tuning.png")
    # Without held-out text the small scale names the flag.
    with pytest.raises(ValueError, match=r"^--scale=small needs --eval_corpus \(where the data lives\)\.$"):
        studies.run(_options(micro, tmp_path / "b", scale="small", mnli_dir=None, squad_dir=None))
