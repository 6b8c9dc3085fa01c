"""Sentence pairs: plain files and TSV read alike, in Python and tf.data; every bad line named."""

import pytest
import tensorflow as tf

from nmt.parallel_text import ParallelText

PAIRS = [("ein Hund", "a dog"), ("zwei Katzen schlafen", "two cats sleep"), ("Ja.", "Yes."),
         ("Guten Morgen", "good morning"), ("Danke", "thanks")]


def _write(path, lines, raw=None):
    path.write_bytes(raw if raw is not None else ("\n".join(lines) + "\n").encode("utf-8"))
    return str(path)


def _dataset_pairs(dataset):
    return [(s.decode("utf-8"), t.decode("utf-8")) for s, t in dataset.as_numpy_iterator()]


def test_plain_files_and_tsv_give_the_same_pairs_in_python_and_tf_data(tmp_path):
    # Surrounding spaces and a Windows line end are not part of the sentence; a third column is ignored.
    source = _write(tmp_path / "a.de", [" %s " % s for s, _ in PAIRS])
    target = _write(tmp_path / "a.en", [t for _, t in PAIRS[:-1]] + [PAIRS[-1][1] + "\r"])
    tsv = _write(tmp_path / "a.tsv", ["%s\t%s\tCC-BY 2.0 (France) Attribution: tatoeba.org #%d" % (s, t, i)
                                      for i, (s, t) in enumerate(PAIRS)])
    files, tsv_text = ParallelText.from_files(source, target), ParallelText.from_tsv(tsv)
    for text in (files, tsv_text):
        assert text.check() == len(PAIRS)
        assert list(text.python_pairs()) == PAIRS
        assert _dataset_pairs(text.pairs()) == PAIRS
    assert files.describe() == "1 file pair(s): %s | %s" % (source, target)
    assert tsv_text.describe() == "1 TSV file(s): %s" % tsv


def test_globs_pair_the_ith_source_file_with_the_ith_target_file(tmp_path):
    for shard in (2, 1):
        _write(tmp_path / ("train.%d.de" % shard), ["quelle %d %d" % (shard, i) for i in range(3)])
        _write(tmp_path / ("train.%d.en" % shard), ["target %d %d" % (shard, i) for i in range(3)])
    text = ParallelText.from_files(str(tmp_path / "train.*.de"), str(tmp_path / "train.*.en"))
    expected = [("quelle %d %d" % (s, i), "target %d %d" % (s, i)) for s in (1, 2) for i in range(3)]
    assert text.check() == 6 and list(text.python_pairs()) == expected
    assert _dataset_pairs(text.pairs()) == expected
    with pytest.raises(ValueError, match=r"^--train_src matches 2 file\(s\) but --train_tgt matches 1; the i-th "
                                         r"source file pairs with the i-th target file\.$"):
        ParallelText.from_files(str(tmp_path / "train.*.de"), str(tmp_path / "train.1.en"))


def test_sample_lines_alternate_source_and_target(tmp_path):
    text = ParallelText.from_tsv(_write(tmp_path / "a.tsv", ["%s\t%s" % pair for pair in PAIRS]))
    assert text.sample_lines(5) == ["ein Hund", "a dog", "zwei Katzen schlafen", "two cats sleep", "Ja."]
    assert len(text.sample_lines(100)) == 2 * len(PAIRS)


def test_misaligned_line_counts_name_both_files_and_counts(tmp_path):
    source = _write(tmp_path / "a.de", ["eins", "zwei", "drei"])
    target = _write(tmp_path / "a.en", ["one", "two"])
    with pytest.raises(ValueError, match=r"^--train_src=.*/a\.de has 3 lines but --train_tgt=.*/a\.en has 2; "
                                         r"the files must be aligned line by line\.$"):
        ParallelText.from_files(source, target).check()
    with pytest.raises(ValueError, match=r"^--dev_src=.*/a\.en has 2 lines but --dev_tgt=.*/a\.de has 3;"):
        ParallelText.from_files(target, source, "--dev_src", "--dev_tgt").check()


def test_bad_lines_are_named_with_flag_file_and_line(tmp_path):
    source = _write(tmp_path / "a.de", ["eins", "zwei", "drei"])
    blank = _write(tmp_path / "blank.en", ["one", "two", " \t"])
    with pytest.raises(ValueError, match=r"^--train_tgt=.*/blank\.en:3: empty target sentence; every line must "
                                         r"hold one \(nothing is skipped, so the sides stay aligned\)\.$"):
        ParallelText.from_files(source, blank).check()
    # A line that is only a Unicode space is empty too, though tf.strings.strip would keep it.
    nbsp = _write(tmp_path / "nbsp.de", ["eins", "\u00a0", "drei"])
    with pytest.raises(ValueError, match=r"^--train_src=.*/nbsp\.de:2: empty source sentence"):
        ParallelText.from_files(nbsp, str(tmp_path / "a.de")).check()
    no_tab = _write(tmp_path / "no_tab.tsv", ["eins\tone", "zwei two"])
    with pytest.raises(ValueError, match=r"^--train_tsv=.*/no_tab\.tsv:2: no tab; expected source<TAB>target\.$"):
        ParallelText.from_tsv(no_tab).check()
    empty_field = _write(tmp_path / "empty_field.tsv", ["eins\tone", "\ttwo"])
    with pytest.raises(ValueError, match=r"^--dev_tsv=.*/empty_field\.tsv:2: empty source sentence"):
        ParallelText.from_tsv(empty_field, "--dev_tsv").check()
    latin1 = _write(tmp_path / "latin1.tsv", None, raw="eins\tone\nf\xfcnf\tfive\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^--train_tsv=.*/latin1\.tsv:2: not UTF-8 \(byte 2\)\.$"):
        ParallelText.from_tsv(latin1).check()


def test_missing_and_empty_files_are_named(tmp_path):
    target = _write(tmp_path / "a.en", ["one"])
    with pytest.raises(ValueError, match=r"^--train_src: .*/missing\.de matches no file\.$"):
        ParallelText.from_files(str(tmp_path / "missing.de"), target)
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(ValueError, match=r"^--test_tsv: .*/empty\.tsv is empty\.$"):
        ParallelText.from_tsv(str(tmp_path / "empty.tsv"), "--test_tsv")


def test_seeded_pairs_repeat_deterministically_and_shard_by_input_context(tmp_path):
    pairs = [("q%d" % i, "t%d" % i) for i in range(20)]
    for shard in range(2):
        _write(tmp_path / ("%d.tsv" % shard), ["%s\t%s" % pair for pair in pairs[shard::2]])
    text = ParallelText.from_tsv(str(tmp_path / "*.tsv"))

    def first(seed, count, context=None):
        return _dataset_pairs(text.pairs(seed, context).take(count))

    assert first(1, 60) == first(1, 60)
    assert sorted(first(1, 60)) == sorted(pairs * 3)  # three whole epochs
    contexts = [tf.distribute.InputContext(2, i, 2) for i in range(2)]
    shares = [set(first(1, 30, context)) for context in contexts]  # one file each
    assert shares[0] | shares[1] == set(pairs) and not shares[0] & shares[1]
    single = ParallelText.from_tsv(str(tmp_path / "0.tsv"))  # fewer files than pipelines: lines are split
    shares = [_dataset_pairs(single.pairs(1, context).take(5)) for context in contexts]
    assert set(shares[0]) | set(shares[1]) == set(pairs[0::2]) and not set(shares[0]) & set(shares[1])
