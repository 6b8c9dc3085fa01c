"""Test-wide settings: quiet TensorFlow logs, CPU only, deterministic ops."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
# Our tests compare numbers to 1e-5; deterministic kernels keep reruns identical.
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
