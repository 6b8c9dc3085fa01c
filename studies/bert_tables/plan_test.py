"""The plan at paper scale: the paper's recipe, as command lines our entry points accept."""

import dataclasses
import shlex

import pytest
from absl import flags

import options
from reproduction import runner
from studies.bert_tables import experiments, plan, scales, study
import studies

TRAINING_PROGRAMS = ("run_pretraining.py", "run_classifier.py", "run_squad.py")
PATHS = plan.DataPaths(corpus="/data/wiki/*.txt,/data/books/*.txt", mnli_dir="/glue/MNLI",
                       squad_dir="/squad", vocab_file="/bert/vocab.txt")


def _steps(name="table2b", num_seeds=3):
    return plan.build(experiments.get(name), scales.PAPER, PATHS, "/out", num_seeds)


def _parse(step):
    """What the step's plan.sh line parses to, through the entry point's own flags."""
    words = shlex.split(step.command_line(python="python", distribution_variable=None))
    assert words[:2] == ["python", step.program]
    options_class = type(runner.options_of(step, study.TableStudy("table1").programs()))
    flag_values = flags.FlagValues()
    options.define_flags(options_class, flag_values)
    flag_values(words[1:])
    parsed = options.from_flags(options_class, flag_values)
    parsed.validate()
    return parsed


@pytest.mark.parametrize("name", list(experiments.EXPERIMENTS))
def test_every_command_line_parses_to_the_options_that_run(name, monkeypatch):
    # The plan's paths exist only once earlier steps have run: here only the parsing is checked.
    monkeypatch.setattr(options.paths, "check", lambda flag, path, kind: None)
    steps = _steps(name, num_seeds=2)
    assert len({s.name for s in steps}) == len(steps)
    for step in steps:
        assert _parse(step) == runner.options_of(step, study.TableStudy(name).programs()), step.name


def test_small_scale_learns_its_vocabulary_and_scores_the_unigram_baseline(monkeypatch):
    monkeypatch.setattr(options.paths, "check", lambda flag, path, kind: None)
    paths = dataclasses.replace(PATHS, vocab_file="/out/data/vocab.txt", eval_corpus="/data/held_out.txt",
                                mnli_dir=None, squad_dir=None, learned_vocab_size=8000)
    steps = plan.build(experiments.get("table2b"), scales.SMALL, paths, "/out", 1)
    assert [s.name for s in steps[:4]] == ["data/vocab", "data/pretrain_32", "data/heldout", "data/unigram"]
    for step in steps:
        assert _parse(step) == runner.options_of(step, study.TableStudy("table2b").programs()), step.name
    vocab, unigram = steps[0].flags, steps[3].flags
    assert (vocab["input_file"], vocab["output_file"], vocab["vocab_size"], vocab["num_unused"]) == (
        PATHS.corpus, "/out/data/vocab.txt", 8000, 0)
    assert all(s.flags["vocab_file"] == "/out/data/vocab.txt" for s in steps if "vocab_file" in s.flags)
    assert (unigram["input_file"], unigram["eval_input_file"], unigram["output_file"]) == (
        "/out/data/pretrain_32.tfrecord", "/out/data/heldout.tfrecord", "/out/data/unigram.json")
    assert (unigram["max_seq_length"], unigram["max_predictions_per_seq"]) == (32, 5)
    # The vocabulary and the baseline are small files worth keeping; the records are not.
    assert [s.kept_files() for s in steps[:4]] == [("/out/data/vocab.txt",), (), (), ("/out/data/unigram.json",)]
    assert steps[1].reads_from(steps[0]) and steps[3].reads_from(steps[1]) and steps[3].reads_from(steps[2])


def test_pretraining_follows_the_papers_two_stages():
    steps = {s.name: s for s in _steps()}
    data_128, data_512 = steps["data/pretrain_128"].flags, steps["data/pretrain_512"].flags
    assert (data_128["max_seq_length"], data_128["max_predictions_per_seq"]) == (128, 20)
    assert (data_512["max_seq_length"], data_512["max_predictions_per_seq"]) == (512, 80)
    assert data_128["input_file"] == PATHS.corpus and data_128["vocab_file"] == PATHS.vocab_file
    stage1, stage2 = steps["dp64/pretrain_128"].flags, steps["dp64/pretrain_512"].flags
    for flags_, expected in ((stage1, (128, 20, 450000, 5000)), (stage2, (512, 80, 50000, 3000))):
        assert (flags_["max_seq_length"], flags_["max_predictions_per_seq"], flags_["num_train_steps"],
                flags_["num_warmup_steps"]) == expected
        assert (flags_["train_batch_size"], flags_["learning_rate"]) == (1024, 1e-4)
        assert flags_["bert_config_file"] == "/out/configs/dp64.json"
    assert "init_checkpoint" not in stage1
    assert stage2["init_checkpoint"] == "/out/dp64/pretrain_128/model.ckpt-450000"
    assert stage2["do_eval"] and not stage1["do_eval"]
    assert steps["dp64/pretrain_512"].outputs == ("/out/dp64/pretrain_512/model.ckpt-50000.index",
                                                  "/out/dp64/pretrain_512/eval_results.txt")


def test_fine_tuning_uses_the_original_recipes_one_folder_per_seed():
    steps = [s for s in _steps() if s.row == "dp128"]
    mnli = [s for s in steps if s.stage == "mnli"]
    squad = [s for s in steps if s.stage == "squad"]
    assert [s.seed for s in mnli] == [s.seed for s in squad] == [1, 2, 3]
    assert [s.flags["output_dir"] for s in mnli] == ["/out/dp128/mnli_seed%d" % k for k in (1, 2, 3)]
    for step in mnli:
        f = step.flags
        assert (f["task_name"], f["data_dir"], f["max_seq_length"], f["train_batch_size"], f["learning_rate"],
                f["num_train_epochs"], f["random_seed"]) == ("MNLI", "/glue/MNLI", 128, 32, 2e-5, 3.0, step.seed)
        assert f["init_checkpoint"] == "/out/dp128/pretrain_512/model.ckpt-50000"
        assert step.outputs == (f["output_dir"] + "/eval_results.txt", f["output_dir"] + "/eval_results_mismatched.txt")
    for step in squad:
        f = step.flags
        assert (f["train_file"], f["predict_file"], f["max_seq_length"], f["doc_stride"], f["train_batch_size"],
                f["learning_rate"], f["num_train_epochs"]) == (
            "/squad/train-v1.1.json", "/squad/dev-v1.1.json", 384, 128, 24, 3e-5, 2.0)
        assert not f.get("version_2_with_negative")
        assert step.outputs == (f["output_dir"] + "/eval_results.json",)


def test_training_lines_end_with_the_clusters_distribution_flags():
    steps = _steps()
    for step in steps:
        line = step.command_line(python='"${PYTHON}"')
        assert line.startswith('"${PYTHON}" %s ' % step.program)
        assert line.endswith(" ${DISTRIBUTION_FLAGS}") == (step.program in TRAINING_PROGRAMS)


def test_placeholder_paths_stay_shell_variables():
    step = plan.Step("x", "", "squad", "run_squad.py", {"train_file": "${SQUAD_DIR}/train v1.json"}, ())
    assert step.command_line(distribution_variable=None) == \
        "python run_squad.py --train_file=\"${SQUAD_DIR}\"'/train v1.json'"


def test_each_row_probes_its_pre_trained_model_before_fine_tuning():
    steps = [s for s in _steps() if s.row == "dp32"]
    assert [s.stage for s in steps[:4]] == ["pretrain_128", "pretrain_512", "probe", "mnli"]
    probe = steps[2]
    assert probe.flags["init_checkpoint"] == "/out/dp32/pretrain_512/model.ckpt-50000"
    assert probe.flags["input_file"] == "/out/data/probe_input.txt" and probe.flags["max_seq_length"] == 128
    assert probe.outputs == ("/out/dp32/probe/ranks.jsonl", "/out/dp32/probe/summary.json",
                             "/out/dp32/probe/rank_vs_length.png")


def test_the_dry_runs_plan_md_gives_counts_compute_and_matched_standard_models(tmp_path):
    written = studies.run(studies.ReproduceOptions(experiment="table2a", scale="paper", dry_run=True,
                                                   output_dir=str(tmp_path)))
    text = open(written["plan_md"]).read()
    assert "| h8 | d=512 h=8 d_p=128, I=4096, 24 layers | 167,690,044 |" in text  # The paper's 168M.
    # The standard model of equal size: 16 heads of d/16, I = 4d, d a multiple of 16.
    assert "| h32 | 318,906,172 | d=992, h=16, d_p=62, I=3968 | 316,514,236 |" in text
    assert open(written["plan_sh"]).read().startswith("#!/bin/bash\n")


def test_small_scale_dry_run_needs_no_task_data_nor_a_vocabulary(tmp_path):
    written = studies.run(studies.ReproduceOptions(experiment="table2b", scale="small", dry_run=True,
                                                   output_dir=str(tmp_path)))
    plan_text = open(written["plan_sh"]).read()
    assert '--input_file="${EVAL_CORPUS}"' in plan_text and "run_squad.py" not in plan_text
    # The vocabulary is learned from the corpus, and the unigram baseline scored on the held-out records.
    assert plan_text.count("create_vocab.py") == 1 and plan_text.count("unigram_baseline.py") == 1
    assert '--vocab_size=6000' in plan_text and '--vocab_file="${VOCAB_FILE}"' not in plan_text
    # Three seeds per row; each pre-training evaluates the held-out records at every checkpoint and at the end.
    assert plan_text.count("run_pretraining.py") == 12 and plan_text.count("probe_attention_rank.py") == 12
    assert plan_text.count("--eval_input_file=%s/data/heldout.tfrecord --eval_batch_size" % tmp_path) == 12
    assert '"vocab_size": 6000' in open(tmp_path / "configs" / "dp64.json").read()
