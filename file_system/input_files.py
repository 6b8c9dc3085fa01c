"""`--input_file`: the text files a data tool reads (create_pretraining_data.py, create_vocab.py)."""

from file_system import files as file_system

_GLOB_CHARS = frozenset("*?[")


def expand_input_files(input_file):
    """The files named by --input_file, comma-separated paths or globs.

    Globs are expanded in sorted order (the original keeps the file system's
    order, which is not reproducible).

    Args:
      input_file: str.

    Returns:
      list[str], the files in order.

    Raises:
      ValueError: for an empty flag, a missing file, a glob matching nothing,
        or a directory.
    """
    patterns = [pattern.strip() for pattern in input_file.split(",") if pattern.strip()]
    if not patterns:
        raise ValueError("--input_file is empty: give files or globs, comma-separated.")
    files = []
    for pattern in patterns:
        if _GLOB_CHARS.intersection(pattern):
            matched = file_system.glob(pattern)
            if not matched:
                raise ValueError("--input_file: the glob %r matches no file." % pattern)
        elif not file_system.exists(pattern):
            raise ValueError("--input_file: %s does not exist." % pattern)
        else:
            matched = [pattern]
        for path in matched:
            if file_system.isdir(path):
                raise ValueError("--input_file: %s is a directory, not a text file." % path)
        files.extend(matched)
    return files
