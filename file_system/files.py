"""The few file operations the data tools need, TensorFlow only for remote paths.

A path with a scheme ("gs://bucket/x", "hdfs://...") goes to `tf.io.gfile`,
imported on first use; any other path to the standard library. Errors are
OSError for local paths and tf.errors.OpError for remote ones: catch
`errors()` and print `reason(error)`.
"""

import builtins
import glob as glob_lib
import hashlib
import os
import sys


def is_remote(path):
    """Whether `path` names a file system by scheme ("gs://...")."""
    return "://" in path


def _gfile():
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    return tf.io.gfile


def errors():
    """The exception types file operations raise: OSError, and tf.errors.OpError once loaded."""
    tf = sys.modules.get("tensorflow")
    op_error = getattr(getattr(tf, "errors", None), "OpError", None)
    return (OSError,) if op_error is None else (OSError, op_error)


def reason(error):
    """The readable part of a file error: an OpError's message, else str(error)."""
    return getattr(error, "message", None) or str(error)


def exists(path):
    return _gfile().exists(path) if is_remote(path) else os.path.exists(path)


def isdir(path):
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def glob(pattern):
    """The paths matching `pattern` (*, ?, [...]), sorted."""
    return sorted(_gfile().glob(pattern) if is_remote(pattern) else glob_lib.glob(pattern))


def size(path):
    """The size of the file at `path`, in bytes."""
    return _gfile().stat(path).length if is_remote(path) else os.path.getsize(path)


def open_file(path, mode="r"):
    """A file object; text modes are UTF-8 without newline translation, as tf.io.gfile.GFile."""
    if is_remote(path):
        return _gfile().GFile(path, mode)
    if "b" in mode:
        return builtins.open(path, mode)
    return builtins.open(path, mode, encoding="utf-8", newline="")


def content_hash(path):
    """"sha256:<hex>" of a file's bytes, read in 1 MiB blocks: how runs record the files they depend on."""
    digest = hashlib.sha256()
    with open_file(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()


def remove(path):
    if is_remote(path):
        _gfile().remove(path)
    else:
        os.remove(path)


def rename(source, destination):
    """Renames `source` to `destination`, replacing it if it exists."""
    if is_remote(source) or is_remote(destination):
        _gfile().rename(source, destination, overwrite=True)
    else:
        os.replace(source, destination)
