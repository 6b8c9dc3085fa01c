"""The chaos test's short version: one cycle of kills at seeded random moments, compared with a run left alone.

The long version (hundreds of kills) is `make chaos`; its last result is in docs/reproduction.md.
"""

import shutil

import pytest

from tests.chaos import chaos_study


@pytest.mark.long
def test_a_study_killed_at_random_moments_ends_as_one_left_alone(tmp_path):
    chaos = chaos_study.Chaos(str(tmp_path / "chaos"), seed=3, probe_every=2)
    assert chaos_study.differences(chaos.reference, chaos.reference) == []
    chaos.cycle()
    assert chaos.stats["failures"] == []
    assert chaos.stats["kills"] >= 1 and chaos.stats["cycles"] == 1
    # The comparison sees one changed byte of a kept run.
    kept = sorted(chaos_study.kept_files(chaos.reference["runs_dir"]))[0]
    copy = {key: str(tmp_path / key) for key in ("output_dir", "runs_dir")}
    for key in copy:
        shutil.copytree(chaos.reference[key], copy[key])
    with open(tmp_path / "runs_dir" / kept, "ab") as f:
        f.write(b" ")
    assert "kept file %s differs" % kept in chaos_study.differences(chaos.reference, copy)
