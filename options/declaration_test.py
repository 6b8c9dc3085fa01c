"""Options declared once: flags defined from the fields, parsed back, checked; the entry points' originals."""

import dataclasses
from typing import Optional

import pytest
from absl import flags

from feature_extraction.feature_extractor import ExtractFeaturesOptions
from modeling.classification import ClassifierOptions
from modeling.pretraining import PretrainingOptions
from modeling.squad import SquadOptions
from options import Options, default_of, define_flags, from_flags, option, run_or_exit
from options.declaration import NEW_FLAGS_SECTION
from pretraining_data.instances import CreatePretrainingDataOptions


@dataclasses.dataclass(kw_only=True)
class _Example(Options):
    path: str = option(help="A required path.")
    steps: int = option(10, "Steps.", minimum=1)
    rate: float = option(0.5, "A rate.", minimum=0)
    flag: bool = option(False, "A switch.")
    size: Optional[int] = option(None, "An optional size.", new=True)
    kind: str = option("a", "A kind.", choices=("a", "b"), new=True)


def _flag_values():
    flag_values = flags.FlagValues()
    define_flags(_Example, flag_values)
    return flag_values


def test_flags_round_trip_to_the_options():
    flag_values = _flag_values()
    flag_values(["prog", "--path=/x", "--steps=3", "--rate=0.25", "--flag", "--size=7", "--kind=b"])
    assert from_flags(_Example, flag_values) == _Example(path="/x", steps=3, rate=0.25, flag=True, size=7, kind="b")
    defaults = _flag_values()
    defaults(["prog", "--path=/y"])
    assert from_flags(_Example, defaults) == _Example(path="/y")


def test_flag_kinds_help_and_sections():
    flag_values = _flag_values()
    assert flag_values["steps"].help == "Steps." and flag_values["steps"].default == 10
    assert flag_values["kind"].parser.enum_values == ["a", "b"]
    assert flag_values["flag"].boolean
    module = __name__
    by_module = {m: sorted(f.name for f in fs) for m, fs in flag_values.flags_by_module_dict().items()}
    assert by_module[module] == ["flag", "path", "rate", "steps"]
    assert by_module[NEW_FLAGS_SECTION % module] == ["kind", "size"]
    with pytest.raises(flags.IllegalFlagValueError):
        flag_values(["prog", "--path=/x", "--kind=c"])
    with pytest.raises(flags.IllegalFlagValueError, match="--path must have a value"):
        _flag_values()(["prog"])


@pytest.mark.parametrize("changes, message", [
    (dict(steps=0), r"^--steps=0 must be positive\.$"),
    (dict(rate=-1.0), r"^--rate=-1.0 must be >= 0\.$"),
    (dict(kind="c"), r"^--kind=c is not supported; expected one of a, b\.$"),
])
def test_validate_names_the_flag(changes, message):
    with pytest.raises(ValueError, match=message):
        _Example(path="/x", **changes).validate()
    _Example(path="/x").validate()


def test_a_field_without_option_is_refused():
    @dataclasses.dataclass(kw_only=True)
    class Bad(Options):
        plain: int = 3

    with pytest.raises(TypeError, match=r"Bad.plain is not declared with option\(\)"):
        define_flags(Bad, flags.FlagValues())


def test_an_option_named_as_a_method_of_another_base_is_refused():
    """Mixing options classes must not let one's field hide another's method (it would become a value)."""

    @dataclasses.dataclass(kw_only=True)
    class WithMethod(Options):
        def compiled(self):
            return True

    @dataclasses.dataclass(kw_only=True)
    class WithField(Options):
        compiled: bool = option(False, "A switch.")

    with pytest.raises(TypeError, match=r"Option WithField.compiled has the name of the method WithMethod.compiled"):
        @dataclasses.dataclass(kw_only=True)
        class Both(WithField, WithMethod):  # pylint: disable=unused-variable
            pass


# The original scripts' flags and defaults (google-research/bert), which our
# entry points must keep; required flags have None.
ORIGINAL_DEFAULTS = {
    PretrainingOptions: dict(
        bert_config_file=None, input_file=None, output_dir=None, init_checkpoint=None,
        max_seq_length=128, max_predictions_per_seq=20, do_train=False, do_eval=False,
        train_batch_size=32, eval_batch_size=8, learning_rate=5e-5, num_train_steps=100000,
        num_warmup_steps=10000, save_checkpoints_steps=1000, iterations_per_loop=1000,
        max_eval_steps=100, use_tpu=False, tpu_name=None, tpu_zone=None, gcp_project=None,
        master=None, num_tpu_cores=8),
    ClassifierOptions: dict(
        data_dir=None, bert_config_file=None, task_name=None, vocab_file=None, output_dir=None,
        init_checkpoint=None, do_lower_case=True, max_seq_length=128, do_train=False,
        do_eval=False, do_predict=False, train_batch_size=32, eval_batch_size=8,
        predict_batch_size=8, learning_rate=5e-5, num_train_epochs=3.0, warmup_proportion=0.1,
        save_checkpoints_steps=1000, iterations_per_loop=1000, use_tpu=False, tpu_name=None,
        tpu_zone=None, gcp_project=None, master=None, num_tpu_cores=8),
    SquadOptions: dict(
        bert_config_file=None, vocab_file=None, output_dir=None, train_file=None,
        predict_file=None, init_checkpoint=None, do_lower_case=True, max_seq_length=384,
        doc_stride=128, max_query_length=64, do_train=False, do_predict=False,
        train_batch_size=32, predict_batch_size=8, learning_rate=5e-5, num_train_epochs=3.0,
        warmup_proportion=0.1, save_checkpoints_steps=1000, iterations_per_loop=1000,
        n_best_size=20, max_answer_length=30, use_tpu=False, tpu_name=None, tpu_zone=None,
        gcp_project=None, master=None, num_tpu_cores=8, verbose_logging=False,
        version_2_with_negative=False, null_score_diff_threshold=0.0),
    ExtractFeaturesOptions: dict(
        input_file=None, output_file=None, layers="-1,-2,-3,-4", bert_config_file=None,
        max_seq_length=128, init_checkpoint=None, vocab_file=None, do_lower_case=True,
        batch_size=32, use_tpu=False, master=None, num_tpu_cores=8, use_one_hot_embeddings=False),
    # In the original's order.
    CreatePretrainingDataOptions: dict(
        input_file=None, output_file=None, vocab_file=None, do_lower_case=True,
        do_whole_word_mask=False, max_seq_length=128, max_predictions_per_seq=20,
        random_seed=12345, dupe_factor=10, masked_lm_prob=0.15, short_seq_prob=0.1),
}
REQUIRED = {
    PretrainingOptions: {"bert_config_file", "input_file", "output_dir"},
    ClassifierOptions: {"data_dir", "task_name", "vocab_file", "bert_config_file", "output_dir"},
    SquadOptions: {"vocab_file", "bert_config_file", "output_dir"},
    ExtractFeaturesOptions: {"input_file", "output_file", "bert_config_file", "init_checkpoint", "vocab_file"},
    CreatePretrainingDataOptions: {"input_file", "output_file", "vocab_file"},
}


@pytest.mark.parametrize("options_class", list(ORIGINAL_DEFAULTS), ids=lambda c: c.__name__)
def test_entry_points_keep_the_original_flags(options_class):
    flag_values = flags.FlagValues()
    define_flags(options_class, flag_values)
    for name, default in ORIGINAL_DEFAULTS[options_class].items():
        assert flag_values[name].default == default, name
    fields = {f.name: f for f in dataclasses.fields(options_class)}
    originals = {name for name, field in fields.items() if not field.metadata["new"]}
    # Every flag of ours that is not the original's is marked new (listed after them).
    assert originals - set(ORIGINAL_DEFAULTS[options_class]) == (
        set() if options_class is not ExtractFeaturesOptions else {"tpu_name", "tpu_zone", "gcp_project"})
    required = {name for name, field in fields.items() if field.default is dataclasses.MISSING}
    assert required == REQUIRED[options_class]
    with pytest.raises(flags.IllegalFlagValueError, match="|".join(sorted(required))):
        flag_values(["prog"])


def test_create_pretraining_data_keeps_the_original_flag_order():
    # One class declares them all: the original flags in the original's
    # order, then ours (new).
    names = [field.name for field in dataclasses.fields(CreatePretrainingDataOptions)]
    assert names == list(ORIGINAL_DEFAULTS[CreatePretrainingDataOptions]) + [
        "num_workers", "documents_per_shard"]
    assert [f.name for f in dataclasses.fields(CreatePretrainingDataOptions)
            if f.metadata["new"]] == ["num_workers", "documents_per_shard"]


@dataclasses.dataclass(kw_only=True)
class _Steps(Options):
    num_warmup_steps: int = option(10000, "Number of warmup steps.", minimum=0)


@dataclasses.dataclass(kw_only=True)
class _LongerWarmup(_Steps):
    num_warmup_steps: int = default_of(_Steps, "num_warmup_steps", 16000)


def test_default_of_keeps_the_declaration_and_changes_only_the_default():
    mine, theirs = _LongerWarmup.__dataclass_fields__["num_warmup_steps"], _Steps.__dataclass_fields__[
        "num_warmup_steps"]
    assert (_LongerWarmup().num_warmup_steps, _Steps().num_warmup_steps) == (16000, 10000)
    assert mine.metadata["help"] == theirs.metadata["help"] and mine.metadata["minimum"] == 0
    assert mine.metadata["declared_by"] == "%s._Steps" % __name__
    with pytest.raises(ValueError, match=r"^--num_warmup_steps=-1 must be >= 0\.$"):
        _LongerWarmup(num_warmup_steps=-1).validate()
    with pytest.raises(TypeError, match=r"^_Steps declares no option 'warmup'\.$"):
        default_of(_Steps, "warmup", 1)


@pytest.mark.parametrize("error", [ValueError("--x=1 must be positive."), FileNotFoundError("no such file: a.txt"),
                                   FloatingPointError("The loss became nan."),
                                   ChildProcessError("1 step(s) failed: a. Their logs: /out/logs/a.log.")])
def test_run_or_exit_ends_on_bad_input_in_one_line_and_lets_bugs_raise(error):
    def fails(_):
        raise error

    with pytest.raises(SystemExit) as exited:
        run_or_exit("prog.py", fails, None)
    assert exited.value.code == "prog.py: error: %s" % error
    with pytest.raises(KeyError):  # a bug keeps its traceback
        run_or_exit("prog.py", lambda _: {}["missing"], None)
    assert run_or_exit("prog.py", lambda given: given + 1, 1) == 2
