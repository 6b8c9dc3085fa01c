"""Every option the model families share is declared once: the training entry points read one declaration.

For each flag two or more of the training entry points define, their fields
must be the same declaration (the same dataclasses.Field, inherited from one
options class) or that declaration with another default (options.default_of).
The flags whose meaning differs by entry point are listed with why.
"""

import dataclasses

import pytest

from lm.task import LmOptions
from modeling.classification import ClassifierOptions
from modeling.pretraining import PretrainingOptions
from modeling.squad import SquadOptions
from nmt.task import NmtOptions

PROGRAMS = {"run_pretraining.py": PretrainingOptions, "run_classifier.py": ClassifierOptions,
            "run_squad.py": SquadOptions, "run_lm.py": LmOptions, "run_translation.py": NmtOptions}
# A flag of the same name that means something else in each entry point.
MEANS_OTHER_THINGS = {
    "max_seq_length": "what is cut differs: WordPiece pairs, sub-word lines split, translation pairs skipped",
    "vocab_file": "a WordPiece vocabulary for BERT, a SentencePiece model for the language model",
    "vocab_size": "the pieces learned from one language, or the joint vocabulary of two",
    "preset": "each family's presets",
    "train_file": "SQuAD's JSON, or the language model's text",
}


def _shared_flags():
    programs = {}
    for program, options_class in PROGRAMS.items():
        for field in dataclasses.fields(options_class):
            programs.setdefault(field.name, []).append((program, options_class, field))
    return {name: found for name, found in programs.items() if len(found) > 1}


def _declaration(options_class, field):
    """The class whose option() declares the field (a default_of field names it), and that Field."""
    declared_by = field.metadata.get("declared_by")
    if declared_by:
        for klass in options_class.__mro__:
            if "%s.%s" % (klass.__module__, klass.__qualname__) == declared_by:
                return klass, klass.__dataclass_fields__[field.name]
        raise AssertionError("%s.%s names %s, not among its bases." % (options_class.__name__, field.name,
                                                                        declared_by))
    return None, field


@pytest.mark.parametrize("name", sorted(set(_shared_flags()) - set(MEANS_OTHER_THINGS)))
def test_a_flag_shared_by_entry_points_has_one_declaration(name):
    found = _shared_flags()[name]
    declarations = {id(_declaration(options_class, field)[1]) for _, options_class, field in found}
    assert len(declarations) == 1, "--%s is declared %d times: %s" % (
        name, len(declarations), ", ".join(program for program, _, _ in found))


def test_the_head_size_and_the_schedule_reach_every_family_from_one_class():
    flags = _shared_flags()
    assert [program for program, _, _ in flags["head_size"]] == list(PROGRAMS)
    assert [program for program, _, _ in flags["learning_rate_schedule"]] == ["run_lm.py", "run_translation.py"]
    # run_translation.py's warm-up is the shared declaration with its own default.
    warmup = {program: field for program, _, field in flags["num_warmup_steps"]}
    assert (warmup["run_pretraining.py"].default, warmup["run_translation.py"].default) == (10000, 16000)
    assert warmup["run_translation.py"].metadata["help"] == warmup["run_pretraining.py"].metadata["help"]


def test_the_flags_listed_as_different_still_exist_in_two_entry_points():
    assert set(MEANS_OTHER_THINGS) <= set(_shared_flags())
