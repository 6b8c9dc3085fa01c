"""Path-typed options checked when the flags are read, before any model or data is built.

`option(..., path=KIND)` marks a field as a path; `Options.validate` calls
`check(flag, value, kind)` for each one set. A bad path then ends the run at
once, in one line naming the flag, instead of after the work (or as a
traceback). Remote paths (gs://...) are left to the file system that serves
them.

  file         an existing file to read (not a directory)
  dir          an existing directory to read
  output_file  a file to write: not a directory, in an existing, writable directory
  output_dir   a directory to write (created if missing): not a file, and writable
"""

import os
import tempfile

KINDS = ("file", "dir", "output_file", "output_dir")


def _writable(directory):
    """None if a file can be created in `directory`, else the reason."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return None
    except OSError as error:
        return error.strerror or str(error)


def _nearest_existing(path):
    """The path itself or its nearest ancestor that exists."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def check(flag, path, kind):
    """Raises ValueError, naming `flag` and `path`, when `path` cannot serve as `kind`."""
    if kind not in KINDS:
        raise ValueError("Unknown path kind %r; expected one of %s." % (kind, ", ".join(KINDS)))
    if "://" in path:
        return
    if kind in ("file", "dir"):
        if not os.path.exists(path):
            raise ValueError("%s=%s does not exist." % (flag, path))
        if kind == "file" and os.path.isdir(path):
            raise ValueError("%s=%s is a directory, not a file." % (flag, path))
        if kind == "dir" and not os.path.isdir(path):
            raise ValueError("%s=%s is a file, not a directory." % (flag, path))
        if not os.access(path, os.R_OK):
            raise ValueError("%s=%s cannot be read." % (flag, path))
        return
    if kind == "output_file":
        if os.path.isdir(path):
            raise ValueError("%s=%s is a directory, not a file." % (flag, path))
        directory = os.path.dirname(path) or "."
        if not os.path.isdir(directory):
            raise ValueError("%s=%s: the directory %s does not exist." % (flag, path, directory))
        reason = _writable(directory)
        if reason:
            raise ValueError("%s=%s: the directory %s is not writable (%s)." % (flag, path, directory, reason))
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError("%s=%s is a file, not a directory." % (flag, path))
    existing = _nearest_existing(path)
    if not os.path.isdir(existing):
        raise ValueError("%s=%s is not a writable directory (%s is a file)." % (flag, path, existing))
    reason = _writable(existing)
    if reason:
        raise ValueError("%s=%s is not a writable directory (%s: %s)." % (flag, path, existing, reason))
