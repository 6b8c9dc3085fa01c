"""demo/ask_saved_model.py's comparison of a seeded and a full export, in a process without the project."""

import json
import os
import re
import subprocess
import sys

import pytest

from modeling.testing import frozen_exports

ASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ask_saved_model.py")
PAIRS = [dict(premise="the cat sat on a mat .", hypothesis="a dog , a cat", gold="neutral"),
         dict(premise="where is the gold", hypothesis="the gold is on a mat", gold="entailment")]


def _bytes(path):
    return sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(path) for name in names)


@pytest.fixture(scope="module")
def classifier_exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("ask")
    prefixes, _ = frozen_exports.write_checkpoints(root, kinds=["classifier"])
    prefix = prefixes["classifier"]
    return dict(seed=frozen_exports.export(root, prefix, "classifier", "seed"),
                full=frozen_exports.export(root, prefix, "classifier", "values"),
                # The same weights, packing to 8 tokens: the pairs are cut, so the outputs differ.
                truncated=frozen_exports.export(root, prefix, "classifier", "values", max_seq_length=8,
                                                export_dir=str(root / "exports" / "truncated")))


def _ask(tmp_path, requests):
    path = tmp_path / "requests.json"
    path.write_text(json.dumps(requests))
    return subprocess.run([sys.executable, "-I", ASK, str(path)], capture_output=True, text=True, timeout=300,
                          check=False, cwd="/")


def test_the_seeded_export_is_smaller_and_answers_bitwise_as_the_full_one(classifier_exports, tmp_path):
    result = _ask(tmp_path, dict(mnli=dict(export=classifier_exports["seed"], pairs=PAIRS),
                                 frozen=dict(seed=classifier_exports["seed"], full=classifier_exports["full"],
                                             pairs=PAIRS, loads=2)))
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "MNLI SavedModel %s:" % classifier_exports["seed"]
    assert lines[1].startswith("  the cat sat on a mat . || a dog , a cat -> ")
    # So small a model's FFN (33 KB) weighs little more than the graph that draws it: smaller, but only just.
    seed, full = (_bytes(classifier_exports[kind]) for kind in ("seed", "full"))
    assert seed < full
    assert "  on disk:  %.2f MB, against %.2f MB with them stored (%s): %.0f%% smaller" % (
        seed / 1e6, full / 1e6, classifier_exports["full"], 100 * (1 - seed / full)) in lines
    assert "  outputs on the 2 pairs: bitwise equal to the full export's (label, logits, probabilities)" in lines
    assert any(line.startswith("  load:") and "median of 2 loads each" in line for line in lines)


def test_outputs_that_differ_are_reported_and_fail(classifier_exports, tmp_path):
    result = _ask(tmp_path, dict(frozen=dict(seed=classifier_exports["seed"], full=classifier_exports["truncated"],
                                             pairs=PAIRS, loads=1)))
    assert result.returncode == 1
    assert re.search(r"\n  outputs on the 2 pairs: DIFFERENT from the full export's in (label, )?logits, probabilities\n",
                     result.stdout), result.stdout
