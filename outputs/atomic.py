"""Output files that appear only when complete: write beside them, then rename.

A run that is killed mid-write leaves `<path>.incomplete`, never a `<path>`
that parses but holds part of the data (a TFRecord file, for one, is
well-formed at every record boundary). The next run writing the same path
starts that file again. Paths go through `file_system`, so gs://... works too
(there, a rename is a copy and a delete).
"""

import contextlib

import file_system

INCOMPLETE_SUFFIX = ".incomplete"


def incomplete_path(path):
    """Where `path` is written until it is complete."""
    return path + INCOMPLETE_SUFFIX


@contextlib.contextmanager
def writing(path):
    """Yields the temporary path to write; renames it to `path` when the block ends normally.

    On an exception the temporary file is removed and `path` is left as it was
    (absent, or the previous complete version).
    """
    temporary = incomplete_path(path)
    try:
        yield temporary
    except BaseException:
        if file_system.exists(temporary):
            file_system.remove(temporary)
        raise
    file_system.rename(temporary, path)


def write_text(path, text):
    """Writes `text` to `path` in one step: readers see the old content or the new, never part."""
    with writing(path) as temporary:
        with file_system.open_file(temporary, "w") as f:
            f.write(text)
    return path
