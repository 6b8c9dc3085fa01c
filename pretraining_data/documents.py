"""Streams documents out of the input text files, one at a time.

Format, as the original's: one sentence per line, a blank (or whitespace-only)
line between documents. Unlike the original, the end of a file also ends a
document, so the last document of one file never runs on into the first of
the next.

Lines are split on "\\n" only and stripped with `str.strip()`, as the
original's `GFile.readline()` + `strip()`. Each line is decoded as UTF-8 on
its own: a line that is not valid UTF-8 is skipped and counted (the original
crashes on it with a UnicodeDecodeError from `GFile`'s text mode, losing the
whole run; dropping only the bad bytes instead would silently glue the
fragments of a corrupt line into a sentence).
"""

import collections
from typing import Iterator, List

import file_system

# Read in blocks and split lines ourselves: GFile.readline() is ~10x slower.
_BLOCK_SIZE = 1 << 20


def _check_readable(path):
    """Opens and reads one byte of `path`, so that a bad file fails at start."""
    try:
        with file_system.open_file(path, "rb") as reader:
            reader.read(1)
    except file_system.errors() as error:
        raise ValueError("Cannot read input file %s: %s"
                         % (path, file_system.reason(error))) from None


class DocumentReader:
    """Iterates over the documents of the input files, streaming.

    Attributes:
      files: list[str].
      total_bytes: int, the size of all files.
      bytes_read: int, bytes read so far (ahead of the documents yielded by
        at most one block).
      num_documents: int, documents yielded so far.
      skipped_lines: collections.Counter, file -> lines skipped as not UTF-8.
    """

    def __init__(self, files):
        """Checks every file up front: a bad one fails now, not hours in.

        Raises:
          ValueError: a file cannot be read, or all files are empty.
        """
        self.files = list(files)
        for path in self.files:
            _check_readable(path)
        self.total_bytes = sum(map(file_system.size, self.files))
        if not self.total_bytes:
            raise ValueError("The input files are empty: %s." % ", ".join(self.files))
        self.bytes_read = 0
        self.num_documents = 0
        self.skipped_lines = collections.Counter()

    def __iter__(self) -> Iterator[List[str]]:
        """Yields documents: lists of stripped, non-empty lines (str), in file order."""
        for path in self.files:
            document = []
            for line in self._lines(path):
                try:
                    text = line.decode("utf-8").strip()
                except UnicodeDecodeError:
                    self.skipped_lines[path] += 1
                    continue
                if text:
                    document.append(text)
                elif document:
                    yield self._counted(document)
                    document = []
            if document:
                yield self._counted(document)

    def _counted(self, document):
        self.num_documents += 1
        return document

    def _lines(self, path):
        """Yields the lines of `path` as bytes, without the "\\n"."""
        try:
            with file_system.open_file(path, "rb") as reader:
                rest = b""
                while True:
                    block = reader.read(_BLOCK_SIZE)
                    if not block:
                        break
                    self.bytes_read += len(block)
                    lines = (rest + block).split(b"\n")
                    rest = lines.pop()
                    yield from lines
                if rest:
                    yield rest
        except file_system.errors() as error:
            raise ValueError("Cannot read input file %s: %s"
                             % (path, file_system.reason(error))) from None
