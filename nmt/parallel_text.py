"""Aligned sentence pairs: two plain-text files aligned by line, or TSV files.

Plain text (`--train_src`, `--train_tgt`): one sentence per line; line i of
the i-th source file translates to line i of the i-th target file. Each flag
is a comma-separated list of files or globs (file_system.text_files.expand; a
glob's matches are sorted, so `train.*.de` pairs with `train.*.en`).

TSV (`--train_tsv`): `source<TAB>target` per line; further columns (Tatoeba
and Anki exports add ids and attributions) are ignored.

Every line is one pair: an empty line is an error, never skipped, so the two
sides cannot drift apart silently. Sentences lose leading and trailing ASCII
whitespace (what tf.strings.strip removes, so Python and tf.data read the same
text). `check()` reads everything once and names the first bad line; the
tf.data pipelines (`pairs`) assume it has passed.
"""

import itertools

import tensorflow as tf

from file_system import text_files

# tf.strings.strip removes exactly these; Python's str.strip() would also remove
# Unicode spaces, and the two readers would then disagree on the text.
ASCII_WHITESPACE = " \t\n\v\f\r"


def _lines(count):
    return "1 line" if count == 1 else "%d lines" % count


def _read(path, flag):
    """The lines of a file as text, without their line break.

    Raises:
      ValueError: for a byte that is not UTF-8, naming the flag, file and line.
    """
    with tf.io.gfile.GFile(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError("%s=%s:%d: not UTF-8 (byte %d)."
                                 % (flag, path, number, error.start + 1)) from None
            # TextLineDataset drops "\n" and a "\r" before it.
            yield text.rstrip("\n").rstrip("\r")


def _sentence(text, side, flag, path, number):
    """The stripped sentence; an error for a whitespace-only one (Unicode spaces included)."""
    if not text.strip():
        raise ValueError("%s=%s:%d: empty %s sentence; every line must hold one (nothing is skipped, so the "
                         "sides stay aligned)." % (flag, path, number, side))
    return text.strip(ASCII_WHITESPACE)


class ParallelText:
    """Sentence pairs from aligned plain-text files or from TSV files (use the from_* constructors)."""

    def __init__(self, source_files=(), target_files=(), tsv_files=(), source_flag="--train_src",
                 target_flag="--train_tgt", tsv_flag="--train_tsv"):
        if bool(tsv_files) == bool(source_files or target_files):
            raise ValueError("ParallelText needs either source and target files or TSV files.")
        if len(source_files) != len(target_files):
            raise ValueError("%s matches %d file(s) but %s matches %d; the i-th source file pairs with the "
                             "i-th target file." % (source_flag, len(source_files), target_flag,
                                                   len(target_files)))
        self.source_files, self.target_files = list(source_files), list(target_files)
        self.tsv_files = list(tsv_files)
        self.source_flag, self.target_flag, self.tsv_flag = source_flag, target_flag, tsv_flag

    @classmethod
    def from_files(cls, source_pattern, target_pattern, source_flag="--train_src", target_flag="--train_tgt"):
        """Pairs from two aligned plain-text patterns (comma-separated files or globs).

        Raises:
          ValueError: naming the flag when a pattern matches nothing or a file is
            empty; naming both flags when they match different numbers of files.
        """
        return cls(source_files=text_files.expand(source_pattern, source_flag),
                   target_files=text_files.expand(target_pattern, target_flag),
                   source_flag=source_flag, target_flag=target_flag)

    @classmethod
    def from_tsv(cls, pattern, flag="--train_tsv"):
        """Pairs from TSV files, `source<TAB>target[<TAB>ignored...]` per line."""
        return cls(tsv_files=text_files.expand(pattern, flag), tsv_flag=flag)

    @property
    def is_tsv(self):
        return bool(self.tsv_files)

    def describe(self):
        """A short description for logs."""
        if self.is_tsv:
            names, what = self.tsv_files, "TSV file(s)"
        else:
            names = ["%s | %s" % pair for pair in zip(self.source_files, self.target_files)]
            what = "file pair(s)"
        return "%d %s: %s" % (len(names), what, ", ".join(names[:3]) + (", ..." if len(names) > 3 else ""))

    def python_pairs(self):
        """(source, target) Python strings in file order, checked line by line as they are read.

        A difference in line counts is found, and raised, only when the shorter
        file ends.
        """
        if self.is_tsv:
            return self._tsv_pairs()
        return self._file_pairs()

    def _file_pairs(self):
        for source_path, target_path in zip(self.source_files, self.target_files):
            sources, targets = _read(source_path, self.source_flag), _read(target_path, self.target_flag)
            for number in itertools.count(1):
                source, target = next(sources, None), next(targets, None)
                if source is None and target is None:
                    break
                if source is None or target is None:
                    # Count the rest of the longer file, so the message gives both totals.
                    rest = sum(1 for _ in (targets if source is None else sources))
                    counts = (number - 1, number + rest) if source is None else (number + rest, number - 1)
                    raise ValueError("%s=%s has %s but %s=%s has %d; the files must be aligned line by line."
                                     % (self.source_flag, source_path, _lines(counts[0]), self.target_flag,
                                        target_path, counts[1]))
                yield (_sentence(source, "source", self.source_flag, source_path, number),
                       _sentence(target, "target", self.target_flag, target_path, number))

    def _tsv_pairs(self):
        for path in self.tsv_files:
            for number, line in enumerate(_read(path, self.tsv_flag), 1):
                fields = line.split("\t")
                if len(fields) < 2:
                    raise ValueError("%s=%s:%d: no tab; expected source<TAB>target." % (self.tsv_flag, path, number))
                yield (_sentence(fields[0], "source", self.tsv_flag, path, number),
                       _sentence(fields[1], "target", self.tsv_flag, path, number))

    def check(self):
        """The number of pairs, after reading every file once (streaming).

        Raises:
          ValueError: one line naming the flag, file and line, for a line count
            that differs between a source and its target file, an empty
            sentence, a TSV row without a tab, bytes that are not UTF-8, or no
            pair at all.
        """
        count = sum(1 for _ in self.python_pairs())
        if not count:
            flags = self.tsv_flag if self.is_tsv else "%s, %s" % (self.source_flag, self.target_flag)
            raise ValueError("%s hold no sentence pairs." % flags)
        return count

    def sample_lines(self, max_lines):
        """Up to `max_lines` sentences, source and target alternating, in file order.

        For learning one joint vocabulary (tokenization.sentencepiece_vocabulary.get).
        """
        lines = []
        for pair in self.python_pairs():
            lines.extend(pair)
            if len(lines) >= max_lines:
                break
        return lines[:max_lines]

    def _read_file(self, *paths):
        """A Dataset of (source, target) scalar strings from one file (TSV) or one file pair."""
        if not self.is_tsv:
            source_path, target_path = paths
            return tf.data.Dataset.zip((tf.data.TextLineDataset(source_path).map(tf.strings.strip),
                                        tf.data.TextLineDataset(target_path).map(tf.strings.strip)))

        def split(line):
            fields = tf.strings.split(line, "\t", maxsplit=2)
            return tf.strings.strip(fields[0]), tf.strings.strip(fields[1])

        return tf.data.TextLineDataset(paths[0]).map(split)

    def pairs(self, seed=None, input_context=None):
        """A Dataset of (source, target) scalar tf.string pairs.

        Without a seed: every pair once, in file order. With a seed: files (or
        file pairs) shuffled every epoch, read four at a time, repeated
        endlessly; with an `input_context` of several input pipelines each
        reads its own share of the files (or, with fewer files than pipelines,
        of the lines).
        """
        if self.is_tsv:
            files = tf.data.Dataset.from_tensor_slices(self.tsv_files)
            count = len(self.tsv_files)
        else:
            files = tf.data.Dataset.from_tensor_slices((self.source_files, self.target_files))
            count = len(self.source_files)
        if seed is None:
            return files.flat_map(self._read_file)
        pipelines = input_context.num_input_pipelines if input_context else 1
        shard_files = pipelines > 1 and count >= pipelines
        if shard_files:
            files = files.shard(pipelines, input_context.input_pipeline_id)
        files = files.shuffle(count, seed=seed, reshuffle_each_iteration=True).repeat()
        pairs = files.interleave(self._read_file, cycle_length=min(count, 4), block_length=16)
        if pipelines > 1 and not shard_files:
            pairs = pairs.shard(pipelines, input_context.input_pipeline_id)
        return pairs
