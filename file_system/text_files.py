"""Text files of one sentence per line: `--train_file`, `--eval_file`, `--test_file`.

Each flag is a comma-separated list of files or globs. LM1B's layout reads as
is: `training-monolingual.tokenized.shuffled/news.en-*` for training and
`heldout-monolingual.tokenized.shuffled/news.en.heldout-*` for evaluation.
Empty lines are skipped (they hold no sentence).
"""

import codecs

import tensorflow as tf

_BLOCK_BYTES = 1 << 24  # check_utf8 decodes this much at a time


def expand(pattern, flag):
    """The sorted files of a comma-separated list of files and globs.

    Raises:
      ValueError: naming the flag, when a pattern matches nothing or a file is empty.
    """
    files = []
    for part in (p.strip() for p in pattern.split(",")):
        if not part:
            continue
        matched = sorted(tf.io.gfile.glob(part))
        if not matched:
            raise ValueError("%s: %s matches no file." % (flag, part))
        files.extend(matched)
    if not files:
        raise ValueError("%s is empty; expected text files (one sentence per line)." % flag)
    for path in files:
        if tf.io.gfile.isdir(path):
            raise ValueError("%s: %s is a directory; expected text files (a glob such as %s/*)."
                             % (flag, path, path.rstrip("/")))
        if tf.io.gfile.stat(path).length == 0:
            raise ValueError("%s: %s is empty." % (flag, path))
    return list(dict.fromkeys(files))


def _decoded_lines(files, flag):
    """(path, line number, stripped text) of every line, in file order.

    Raises:
      ValueError: for a byte that is not UTF-8, naming the flag, file and line.
    """
    for path in files:
        with tf.io.gfile.GFile(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    yield path, number, raw.decode("utf-8").strip()
                except UnicodeDecodeError as error:
                    raise ValueError("%s: %s line %d is not UTF-8 (byte %d)."
                                     % (flag, path, number, error.start + 1)) from None


def sample_lines(files, max_lines, flag):
    """Up to `max_lines` non-empty lines, in file order (for learning a vocabulary).

    Raises:
      ValueError: for a byte that is not UTF-8, naming the file and line; or
        when the files hold no non-empty line.
    """
    lines = []
    for _, _, line in _decoded_lines(files, flag):
        if line:
            lines.append(line)
            if len(lines) == max_lines:
                return lines
    if not lines:
        raise ValueError("%s: %s hold no text (every line is empty)." % (flag, ", ".join(files)))
    return lines


def check_utf8(files, flag):
    """Reads every byte of `files`: ValueError naming the flag, file and line of a byte that is not UTF-8.

    Text that is not UTF-8 would be trained on or scored as something else, silently. The files are decoded in
    large blocks (LM1B's 4 GB take seconds); only a file that fails is read again line by line, to name the line.
    """
    for path in files:
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            with tf.io.gfile.GFile(path, "rb") as f:
                for block in iter(lambda: f.read(_BLOCK_BYTES), b""):  # pylint: disable=cell-var-from-loop
                    decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            for _ in _decoded_lines([path], flag):
                pass
            raise ValueError("%s: %s ends inside a UTF-8 character." % (flag, path)) from None
