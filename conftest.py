"""Test-wide settings: quiet TensorFlow logs, CPU only."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

from training import onednn  # noqa: E402

onednn.enable()  # as the entry points do, before any test imports TensorFlow
