"""The engine on a study of its own: --rows and --seeds, kept runs (--runs_dir) restored or refused, the report's wait.

The study's program writes text files and counts its calls, so every test
runs in process in well under a second after TensorFlow's import.
"""

import dataclasses
import json
import os
import re
import shutil
import time

import pytest

from options import Options, option
from reproduction import driver, processes, selection
from reproduction.plan import Step
from reproduction.registry import Registry
from reproduction.study import Plan, Study

CALLS = []


@dataclasses.dataclass(kw_only=True)
class _ProgramOptions(Options):
    output_dir: str = option(help="Where the run writes.")
    input_file: str = option("", help="A file the run reads.")
    vocab_file: str = option("", help="A vocabulary an earlier run learned.")
    random_seed: int = option(1, help="The seed.")


def _program(options):
    """A run: its result is a function of what it reads, its seed and nothing else."""
    CALLS.append(os.path.basename(options.output_dir))
    os.makedirs(options.output_dir, exist_ok=True)
    read = "".join(open(path).read() for path in (options.input_file, options.vocab_file) if path)
    if not options.vocab_file and not options.input_file.endswith("records"):
        with open(os.path.join(options.output_dir, "vocab.txt"), "w") as f:
            f.write("vocabulary of %s" % read)
    result = "read %d characters, seed %d" % (len(read), options.random_seed)
    if options.output_dir.endswith("data"):  # the shared step: big records, kept by nobody
        with open(os.path.join(options.output_dir, "records"), "w") as f:
            f.write(read * 3)
        return
    with open(os.path.join(options.output_dir, "result.txt"), "w") as f:
        f.write(result)


def _steps(output_dir, corpus):
    """none_seed{1,2} learns the vocabulary (first), ffn_seed{1,2} read it; the model/deep row reads the records."""
    out = lambda *parts: os.path.join(output_dir, *parts)  # noqa: E731
    vocabulary = out("none_seed1", "vocab.txt")
    steps = [Step("data", "", "data", "fake.py", dict(output_dir=out("data"), input_file=corpus),
                  (out("data", "records"),), kept=())]
    for seed in (1, 2):
        steps.append(Step("none_seed%d" % seed, "model/none", "train", "fake.py",
                          dict(output_dir=out("none_seed%d" % seed), input_file=corpus, random_seed=seed),
                          (out("none_seed%d" % seed, "result.txt"),), seed=seed,
                          kept=(out("none_seed%d" % seed, "result.txt"),) + ((vocabulary,) if seed == 1 else ())))
        steps.append(Step("ffn_seed%d" % seed, "model/ffn", "train", "fake.py",
                          dict(output_dir=out("ffn_seed%d" % seed), input_file=corpus, vocab_file=vocabulary,
                               random_seed=seed), (out("ffn_seed%d" % seed, "result.txt"),), seed=seed))
        steps.append(Step("deep_seed%d" % seed, "deep/none", "train", "fake.py",
                          dict(output_dir=out("deep_seed%d" % seed), input_file=out("data", "records"),
                               random_seed=seed), (out("deep_seed%d" % seed, "result.txt"),), seed=seed))
    return steps


class _Study(Study):
    name = "fake"
    title = "A study of the engine"

    def programs(self):
        return {"fake.py": (_ProgramOptions, _program)}

    def plan(self, options):
        steps = _steps(options.output_dir, options.corpus)

        def report():
            results = {step.name: open(step.outputs[0]).read() for step in steps if step.kept_files()}
            return results, "# results\n", os.path.join(options.output_dir, "fake.png")

        return Plan(steps, (), "# plan\n", report)


@dataclasses.dataclass(kw_only=True)
class _Options(driver.ReproduceOptions):
    experiment: str = option("fake", help="The study.")
    corpus: str = option(help="The study's text.")


def _run(output_dir, corpus, **flags):
    CALLS.clear()
    return driver.run(_Options(output_dir=str(output_dir), corpus=str(corpus), **flags), Registry([_Study()]))


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("the text of the study\n")
    return path


def test_rows_bring_the_steps_they_read_from_and_the_report_waits_for_the_rest(tmp_path, corpus, capsys):
    written = _run(tmp_path / "out", corpus, rows="ffn", seeds="2")
    # ffn_seed2 reads none_seed1's vocabulary; nothing else runs.
    assert CALLS == ["none_seed1", "ffn_seed2"]
    assert "results_json" not in written
    assert written["unfinished"] == ["ffn_seed1", "deep_seed1", "none_seed2", "deep_seed2"]
    assert "The report waits for 4 unfinished step(s) of the plan (ffn_seed1, deep_seed1, none_seed2, " \
           "deep_seed2)" in capsys.readouterr().out
    written = _run(tmp_path / "out", corpus, rows="model/none,deep/none")
    assert CALLS == ["data", "deep_seed1", "none_seed2", "deep_seed2"]
    assert written["unfinished"] == ["ffn_seed1"]
    written = _run(tmp_path / "out", corpus)
    assert CALLS == ["ffn_seed1"]
    assert written["results"]["ffn_seed2"] == "read %d characters, seed 2" % (
        len("the text of the study\n") + len("vocabulary of the text of the study\n"))


@pytest.mark.parametrize("flags, message", [
    (dict(rows="attention"), r"^--rows=attention: the plan has no row 'attention'; its rows: model/none, model/ffn, "
                             r"deep/none\.$"),
    (dict(rows="none"), r"^--rows=none: 'none' names several rows \(model/none, deep/none\); give the whole name\.$"),
    (dict(seeds="1,3"), r"^--seeds=1,3: the plan's runs have seeds 1, 2, not 3\.$"),
    (dict(seeds="one"), r"^--seeds=one: 'one' is not a seed; expected integers separated by commas, e\.g\. "
                        r"--seeds=1,2\.$"),
])
@pytest.mark.parametrize("dry_run", [False, True])
def test_unknown_rows_and_seeds_are_named(tmp_path, corpus, flags, message, dry_run):
    with pytest.raises(ValueError, match=message):
        _run(tmp_path / "out", corpus, dry_run=dry_run, **flags)
    assert CALLS == []


@dataclasses.dataclass(kw_only=True)
class _TwoStudiesOptions(_Options):
    other_file: str = option("", help="A flag another study reads.")
    other_steps: int = option(3, help="Another.")


def test_a_flag_the_study_does_not_read_is_refused_not_ignored(tmp_path, corpus):
    def run(**flags):
        return driver.run(_TwoStudiesOptions(output_dir=str(tmp_path / "out"), corpus=str(corpus), dry_run=True,
                                             **flags), Registry([_Study()]))

    with pytest.raises(ValueError, match=r"^--other_file, --other_steps: --experiment=fake does not read them; "
                                         r"leave them out \(its own flags: none\)\.$"):
        run(other_file="/data/a.txt", other_steps=5)
    with pytest.raises(ValueError, match=r"^--other_steps: --experiment=fake does not read it; leave it out \(its own "
                                         r"flags: --other_file\)\.$"):
        driver.run(_TwoStudiesOptions(output_dir=str(tmp_path / "out"), corpus=str(corpus), dry_run=True,
                                      other_steps=5), Registry([_StudyOfOneFlag()]))
    assert run(other_steps=3)["plan_md"]  # a default is not a flag given
    CALLS.clear()


@dataclasses.dataclass(kw_only=True)
class _OneFlag(Options):
    other_file: str = option("", help="The one flag of the study.")


class _StudyOfOneFlag(_Study):
    options = _OneFlag


def test_a_plan_without_seeds_refuses_seeds():
    steps = [Step("a", "a", "train", "fake.py", dict(output_dir="/x/a"), ("/x/a/r",))]
    with pytest.raises(ValueError, match=r"^--seeds=1: this plan runs each row once"):
        selection.select(steps, seeds="1")


def test_kept_runs_are_restored_elsewhere_instead_of_run(tmp_path, corpus):
    runs = tmp_path / "docs" / "runs"
    first = _run(tmp_path / "machine1", corpus, runs_dir=str(runs))
    assert sorted(CALLS) == sorted(["data", "none_seed1", "ffn_seed1", "deep_seed1", "none_seed2", "ffn_seed2",
                                    "deep_seed2"])
    # Kept: each run's kept files and its inputs, with no machine's paths; of the shared records their inputs only.
    kept = sorted(os.path.relpath(os.path.join(d, f), runs) for d, _, files in os.walk(runs) for f in files)
    assert "none_seed1/vocab.txt" in kept and "ffn_seed1/result.txt.inputs.json" in kept
    assert [name for name in kept if name.startswith("data")] == ["data/records.inputs.json"]
    assert "ffn_seed1/vocab.txt" not in kept
    inputs = json.loads((runs / "ffn_seed1" / "result.txt.inputs.json").read_text())
    # The study's text as its content; the vocabulary a step of the plan wrote as its place.
    assert re.fullmatch(r"22 bytes, sha256:[0-9a-f]{64}", inputs["input_file"]["files"][0])
    assert inputs["vocab_file"] == {"path": "${OUTPUT_DIR}/none_seed1/vocab.txt"}
    assert inputs["random_seed"] == 1 and "output_dir" not in inputs
    assert str(tmp_path) not in (runs / "ffn_seed1" / "result.txt.inputs.json").read_text()

    # Another machine: the same text elsewhere, another output folder. Nothing runs, not even the data step.
    elsewhere = tmp_path / "elsewhere" / "text.txt"
    elsewhere.parent.mkdir()
    shutil.copy(corpus, elsewhere)
    second = _run(tmp_path / "machine2", elsewhere, runs_dir=str(runs))
    assert CALLS == []
    assert second["results"] == first["results"]
    assert os.path.exists(tmp_path / "machine2" / "none_seed1" / "result.txt.reused.json")
    assert not os.path.exists(tmp_path / "machine2" / "data" / "records")
    # And again, from its own output folder: every step counts as finished.
    assert _run(tmp_path / "machine2", elsewhere, runs_dir=str(runs))["results"] == first["results"]
    assert CALLS == []


def test_a_kept_run_is_restored_only_when_the_steps_reading_it_are_too(tmp_path, corpus):
    runs = tmp_path / "runs"
    _run(tmp_path / "machine1", corpus, runs_dir=str(runs))
    shutil.rmtree(runs / "deep_seed2")
    _run(tmp_path / "machine2", corpus, runs_dir=str(runs))
    # deep_seed2 runs, so the records it reads are made again; the rest is restored.
    assert CALLS == ["data", "deep_seed2"]
    assert os.path.exists(runs / "deep_seed2" / "result.txt")  # kept as it finished


def test_a_kept_run_whose_readers_need_only_its_kept_files_is_restored_before_they_run(tmp_path, corpus):
    runs = tmp_path / "runs"
    first = _run(tmp_path / "machine1", corpus, runs_dir=str(runs))
    shutil.rmtree(runs / "ffn_seed2")
    second = _run(tmp_path / "machine2", corpus, runs_dir=str(runs))
    # ffn_seed2 reads none_seed1's vocabulary, which is kept: none_seed1 is restored, not run again.
    assert CALLS == ["ffn_seed2"]
    assert os.path.exists(tmp_path / "machine2" / "none_seed1" / "result.txt.reused.json")
    assert second["results"] == first["results"]


def test_a_run_reading_a_step_that_kept_nothing_is_checked_through_it(tmp_path, corpus):
    runs = tmp_path / "runs"
    _run(tmp_path / "machine1", corpus, rows="deep/none", runs_dir=str(runs))
    other = tmp_path / "other.txt"
    other.write_text("another text\n")
    # deep_seed* read the records by their place; the records' own step remembers which text made them.
    with pytest.raises(ValueError, match=r"^Step data is kept in --runs_dir=.* from a run with other inputs: "
                                         r"--input_file was"):
        _run(tmp_path / "machine2", other, rows="deep/none", runs_dir=str(runs))
    assert CALLS == []


def test_a_kept_run_with_other_inputs_is_refused_naming_the_flag(tmp_path, corpus):
    runs = tmp_path / "runs"
    _run(tmp_path / "machine1", corpus, runs_dir=str(runs))
    other = tmp_path / "other.txt"
    other.write_text("another text\n")
    with pytest.raises(ValueError, match=(
            r"^Step ffn_seed2 is kept in --runs_dir=%s from a run with other inputs: --input_file was "
            r"\{\"files\": \[\"22 bytes, sha256:[0-9a-f]+\"\]\}, now \[.*other.txt.*\]\. Give this run another "
            r"--runs_dir \(or --runs_dir='' to keep none\), or remove the step's files there \(%s\) to run it "
            r"again\.$" % (runs, runs / "ffn_seed2"))):
        _run(tmp_path / "machine2", other, runs_dir=str(runs))
    assert CALLS == []  # Checked before anything runs.


def test_runs_finished_before_a_runs_dir_was_given_are_kept_then(tmp_path, corpus):
    _run(tmp_path / "out", corpus, rows="model/none")
    runs = tmp_path / "runs"
    _run(tmp_path / "out", corpus, rows="model/none", runs_dir=str(runs))
    assert CALLS == []
    assert sorted(os.listdir(runs)) == ["none_seed1", "none_seed2"]
    with pytest.raises(ValueError, match=r"^--runs_dir=.* is --output_dir: give a folder of its own"):
        _run(tmp_path / "out", corpus, runs_dir=str(tmp_path / "out"))


@dataclasses.dataclass(kw_only=True)
class _TextOptions(Options):
    corpus: str = option("", help="text: the study's text.")
    vocab_file: str = option("", help="text: a WordPiece vocabulary.", new=True)


@dataclasses.dataclass(kw_only=True)
class _PairOptions(Options):
    vocab_file: str = option("", help="pairs: a SentencePiece model.", new=True)
    pairs: int = option(3, help="pairs: how many.", minimum=1)


def _study(name, options_class):
    return type("_Study_" + name, (Study,), dict(name=name, options=options_class))()


def test_the_options_join_the_engine_flags_the_experiment_and_every_study_flag_once():
    joined = driver.options_class(Registry([_study("text", _TextOptions), _study("plain", None),
                                            _study("pairs", _PairOptions)]))
    fields = {field.name: field for field in dataclasses.fields(joined)}
    assert list(fields)[-4:] == ["experiment", "corpus", "vocab_file", "pairs"]
    assert set(fields) >= {field.name for field in dataclasses.fields(driver.ReproduceOptions)}
    assert fields["experiment"].metadata["choices"] == ("text", "plain", "pairs")
    assert fields["vocab_file"].metadata["help"] == "text: a WordPiece vocabulary. pairs: a SentencePiece model."
    assert fields["vocab_file"].metadata["new"] is True
    options = joined(experiment="pairs", output_dir="/tmp/x", pairs=0)
    assert (options.scale, options.vocab_file, options.corpus) == ("tiny", "", "")
    with pytest.raises(ValueError, match=r"^--pairs=0 must be positive\.$"):
        options.validate()


@pytest.mark.parametrize("declaration, message", [
    (option(None, help="pairs: a SentencePiece model.", new=True),
     r"^--vocab_file is declared differently by --experiment=text \(_TextOptions\) and --experiment=pairs "
     r"\(_Clash\): default differs\.$"),
    (option("", help="pairs: a SentencePiece model.", new=False, path="file"),
     r"^--vocab_file is declared differently .*: new, path differ\.$"),
])
def test_a_flag_two_studies_declare_differently_is_refused(declaration, message):
    clash = dataclasses.make_dataclass("_Clash", [("vocab_file", str, declaration)], bases=(Options,), kw_only=True)
    with pytest.raises(TypeError, match=message):
        driver.options_class(Registry([_study("text", _TextOptions), _study("pairs", clash)]))


def test_a_study_flag_may_not_redeclare_the_engine_s():
    clash = dataclasses.make_dataclass("_Clash", [("scale", str, option("tiny", help="Mine."))], bases=(Options,),
                                       kw_only=True)
    with pytest.raises(TypeError, match=r"^_Clash\.scale \(--experiment=mine\) redeclares the engine's --scale\.$"):
        driver.options_class(Registry([_study("mine", clash)]))


def test_a_study_options_class_with_checks_of_its_own_is_refused():
    @dataclasses.dataclass(kw_only=True)
    class _Checked(Options):
        first: int = option(1, help="The first.")

        def validate(self):
            super().validate()

    with pytest.raises(TypeError, match=r"^_Checked \(--experiment=checked\) has a validate\(\) of its own, which "
                                        r"reproduce_paper_tables\.py's options would not run"):
        driver.options_class(Registry([_study("checked", _Checked)]))


def _files(folder):
    """{relative path: text, the folder's path as <out>} of every file under `folder` but logs and machine records."""
    found = {}
    for directory, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, folder)
            if not relative.startswith("logs") and not name.endswith(".machine.json"):
                found[relative] = open(path).read().replace(str(folder), "<out>")
    return found


@pytest.mark.long
def test_parallel_runs_give_the_files_of_one_at_a_time_and_respect_what_reads_what(tmp_path, corpus):
    one = _run(tmp_path / "one", corpus, parallel_runs=1)
    assert len(CALLS) == 7  # in this process
    two = _run(tmp_path / "two", corpus, parallel_runs=2)
    assert CALLS == []  # every step ran in a child process
    assert two["results"] == one["results"]
    assert _files(tmp_path / "two") == _files(tmp_path / "one")
    # Each child logged to logs/<step>.log, ran on one core of its own, and recorded where it ran.
    logs = sorted(os.listdir(tmp_path / "two" / "logs"))
    assert logs == sorted(["data.log"] + ["%s.log" % name for name in two["results"]])
    assert re.search(r"^=== .*: ffn_seed1 on cores \d+$", (tmp_path / "two" / "logs" / "ffn_seed1.log").read_text(), re.M)
    record = json.loads((tmp_path / "two" / "ffn_seed1" / "result.txt.machine.json").read_text())
    assert record["parallel_runs"] == 2 and record["threads"] == max(1, len(os.sched_getaffinity(0)) // 2)
    assert re.match(r".*, family \S+ model \S+, (native bfloat16 \(\S+\)|no native bfloat16), \d+ cores$", record["cpu"])
    # ffn_seed1 read the vocabulary none_seed1 learned: it started only once none_seed1 had finished.
    assert os.path.getmtime(tmp_path / "two" / "ffn_seed1" / "result.txt.inputs.json") >= os.path.getmtime(
        tmp_path / "two" / "none_seed1" / "result.txt")
    # A second run finds everything finished and starts no process.
    again = _run(tmp_path / "two", corpus, parallel_runs=2)
    assert again["results"] == one["results"] and logs == sorted(os.listdir(tmp_path / "two" / "logs"))


def test_a_failing_run_beside_others_names_its_log_and_lets_the_others_finish(tmp_path, corpus):
    # none_seed1 cannot write its vocabulary (a folder where the file goes): its process fails while data runs.
    os.makedirs(tmp_path / "out" / "none_seed1")
    (tmp_path / "out" / "none_seed1" / "vocab.txt").mkdir()
    with pytest.raises(ChildProcessError, match=r"^1 step\(s\) failed: none_seed1\. Their logs: .*/logs/none_seed1\.log\. "
                                           r"Fix the cause and run the same command again"):
        _run(tmp_path / "out", corpus, rows="model/ffn,deep/none", seeds="1", parallel_runs=2)
    assert "IsADirectoryError" in (tmp_path / "out" / "logs" / "none_seed1.log").read_text()
    # The run started beside it finished; ffn_seed1, which reads the failed run's vocabulary, never started.
    # (deep_seed1 reads data's records: it started only if data finished before none_seed1 failed, and then
    # it finished too.)
    assert (tmp_path / "out" / "data" / "records").exists()
    assert not (tmp_path / "out" / "ffn_seed1").exists()
    assert (tmp_path / "out" / "deep_seed1" / "result.txt").exists() == (tmp_path / "out" / "deep_seed1").exists()


def test_outputs_without_a_record_of_their_inputs_are_refused_not_adopted(tmp_path, corpus):
    _run(tmp_path / "out", corpus, rows="model/none", seeds="1")
    os.remove(tmp_path / "out" / "none_seed1" / "result.txt.inputs.json")
    with pytest.raises(ValueError, match=r"^Step none_seed1 has its outputs \(.*/none_seed1/result\.txt\) but no record of "
                                         r"the inputs it ran with \(.*\): they may be another run's\. Remove them"):
        _run(tmp_path / "out", corpus, rows="model/none", seeds="1")


def test_a_run_killed_before_its_outputs_is_not_resumed_on_other_inputs(tmp_path, corpus):
    # The record is written before the run: a run killed half-way and re-run on other text is refused.
    def killed(options):
        raise KeyboardInterrupt

    study = _Study()
    study.programs = lambda: {"fake.py": (_ProgramOptions, killed)}
    options = _Options(output_dir=str(tmp_path / "out"), corpus=str(corpus), rows="model/none", seeds="1")
    with pytest.raises(KeyboardInterrupt):
        driver.run(options, Registry([study]))
    assert (tmp_path / "out" / "none_seed1" / "result.txt.inputs.json").exists()
    other = tmp_path / "other.txt"
    other.write_text("other text\n")
    with pytest.raises(ValueError, match=r"^Step none_seed1 started earlier with other inputs: --input_file was .*"
                                         r"remove them and its checkpoints to run the step again\.$"):
        _run(tmp_path / "out", other, rows="model/none", seeds="1")
    assert CALLS == []
    _run(tmp_path / "out", corpus, rows="model/none", seeds="1")  # the same inputs: it resumes
    assert CALLS == ["none_seed1"]


def test_a_plan_mixing_precisions_is_refused_and_plan_md_names_its_one():
    steps = [Step(name, name, "train", "fake.py", dict(output_dir="/x/" + name, dtype=dtype), ("/x/%s/r" % name,))
             for name, dtype in (("a", "float32"), ("b", "bfloat16"))]
    with pytest.raises(ValueError, match=r"^The plan's steps train in several precisions \(--dtype bfloat16 and "
                                         r"float32\): a study's rows are compared"):
        driver.precision(steps)
    assert driver.precision(steps[:1]) == "float32" and driver.precision([]) is None
    assert "every training run in bfloat16 (--dtype)" in driver.precision_line("bfloat16")


@pytest.mark.parametrize("n, cores, shares", [
    (1, [0, 1], [[0, 1]]), (2, [0, 1], [[0], [1]]), (2, [0, 1, 2, 3, 4], [[0, 1], [2, 3, 4]]),
    (3, [4, 5], [[4], [5], [4]]),
])
def test_core_shares_are_disjoint_until_there_are_more_runs_than_cores(n, cores, shares):
    assert processes.core_shares(n, cores) == shares


def test_the_default_of_parallel_runs_is_the_scale_s_at_most_one_per_core():
    small = dataclasses.make_dataclass("Scale", [("parallel_runs", int)])(2)
    study = _Study()
    study.scales = {"small": small, "tiny": object()}
    assert [study.parallel_runs("small", cores) for cores in (1, 2, 8)] == [1, 2, 2]
    assert study.parallel_runs("tiny", 8) == 1 and study.parallel_runs("paper", 8) == 1
    assert _Study().parallel_runs("small", 8) == 1  # a study without scales


def test_a_run_stopped_and_resumed_records_the_time_of_both_attempts_and_a_dry_run_reads_them_back(
        tmp_path, corpus, monkeypatch, capsys):
    crashed = []

    def crashes_once(options):
        time.sleep(0.3)
        if os.path.basename(options.output_dir) == "ffn_seed1" and not crashed:
            crashed.append(True)
            raise RuntimeError("a crash part-way")
        _program(options)

    monkeypatch.setattr(_Study, "programs", lambda self: {"fake.py": (_ProgramOptions, crashes_once)})
    runs = tmp_path / "kept"
    with pytest.raises(RuntimeError, match="a crash part-way"):
        _run(tmp_path / "out", corpus, runs_dir=str(runs), rows="model/ffn")
    elapsed = json.loads((tmp_path / "out" / "ffn_seed1" / "result.txt.elapsed.json").read_text())
    assert elapsed["attempts"] == 1 and elapsed["seconds"] >= 0.3
    # A dry run there names the step stopped part-way and its time so far.
    capsys.readouterr()
    _run(tmp_path / "out", corpus, runs_dir=str(runs), rows="model/ffn", dry_run=True)
    assert re.search(r"^Under way \(running now, or stopped part-way and resumed from their checkpoints when run "
                     r"again\): ffn_seed1 \(0m0\ds so far, 1 attempt\(s\)\)\.$", capsys.readouterr().out, re.M)
    _run(tmp_path / "out", corpus, runs_dir=str(runs), rows="model/ffn")
    record = json.loads((tmp_path / "out" / "ffn_seed1" / "result.txt.machine.json").read_text())
    assert record["attempts"] == 2 and record["seconds"] >= elapsed["seconds"] + 0.3
    assert not (tmp_path / "out" / "ffn_seed1" / "result.txt.elapsed.json").exists()  # the record holds it now
    once = json.loads((tmp_path / "out" / "none_seed1" / "result.txt.machine.json").read_text())
    assert once["attempts"] == 1
    # Elsewhere, a dry run reads the kept records back: the finished rows' times, the others' from their stage.
    capsys.readouterr()
    _run(tmp_path / "elsewhere", corpus, runs_dir=str(runs), dry_run=True)
    printed = capsys.readouterr().out
    assert "From the machine records of 3 finished step(s) (here and in --runs_dir)" in printed
    # ffn_seed1 ran twice 0.3 s or more, ffn_seed2 once: their median and range.
    assert re.search(r"^\| model/ffn \| 2 of 2 \| 2 \| 0m0\ds \| 0m0\ds – 0m0[1-9]s \| 0 \| — \|$", printed, re.M)
    assert re.search(r"^\| model/none \| 1 of 2 \| 1 \| 0m0\ds \| — \| 1 \| 0m0\ds \|$", printed, re.M)
    assert re.search(r"^\| deep/none \| 0 of 2 \| 0 \| — \| — \| 2 \| 0m0\ds \|$", printed, re.M)
    assert re.search(r"^The 4 step\(s\) left: about 0m\d\ds of runs \(each row's median so far\), so about 0m\d\ds "
                     r"with 1 at a time on machines like these; not counted, no run of their stage measured yet: "
                     r"data\.$", printed, re.M)


def test_the_eta_takes_each_rows_time_from_the_records_of_earlier_runs(tmp_path, corpus, caplog):
    runs = tmp_path / "kept"
    _run(tmp_path / "first", corpus, runs_dir=str(runs), seeds="1")
    for name, seconds in (("none_seed1", 3600), ("ffn_seed1", 1800), ("deep_seed1", 600)):
        path = runs / name / "result.txt.machine.json"
        path.write_text(json.dumps(dict(json.loads(path.read_text()), seconds=seconds)))
    # ffn_seed2 ran 25 minutes in an attempt stopped part-way: the 30 minutes its row takes count 5 more.
    os.makedirs(tmp_path / "second" / "ffn_seed2")
    (tmp_path / "second" / "ffn_seed2" / "result.txt.elapsed.json").write_text(json.dumps(dict(seconds=1500,
                                                                                              attempts=1)))
    with caplog.at_level("INFO"):
        _run(tmp_path / "second", corpus, runs_dir=str(runs))
    assert CALLS == ["data", "none_seed2", "ffn_seed2", "deep_seed2"]  # seed 1 restored; data kept nothing
    assert ("Expected: about 1h15m for 3 of the 4 step(s) to run, 1 at a time (each row's median run in the "
            "machine records of the finished steps, less what earlier attempts ran).") in caplog.messages
    basis = "(each row's median in the machine records, else the mean of the steps finished here)."
    assert any(re.match(r"\[1/7\] data: done in \S+; elapsed \S+, ETA 1h15m for 3 more step\(s\) " + re.escape(basis),
                        message) for message in caplog.messages), caplog.messages
    assert any(re.match(r"\[5/7\] none_seed2: done in \S+; elapsed \S+, ETA 15m00s for 2 more step\(s\) "
                        + re.escape(basis), message) for message in caplog.messages), caplog.messages
    assert any(re.match(r"\[7/7\] deep_seed2: done in \S+; elapsed \S+, ETA 0m00s for 0 more step\(s\) \(from the "
                        r"steps finished so far\)\.", message) for message in caplog.messages), caplog.messages
