"""Text-file flags: globs, comma lists, empty files and directories, non-UTF-8 bytes named."""

import pytest

from file_system import text_files


def test_expands_globs_and_lists_in_order_without_duplicates(tmp_path):
    for name in ("news.en-00002-of-00100", "news.en-00001-of-00100", "other.txt"):
        (tmp_path / name).write_text("a sentence\n")
    pattern = "%s/news.en-*,%s/other.txt,%s/news.en-00001-of-00100" % (tmp_path, tmp_path, tmp_path)
    assert [p.rsplit("/", 1)[1] for p in text_files.expand(pattern, "--train_file")] == [
        "news.en-00001-of-00100", "news.en-00002-of-00100", "other.txt"]


def test_bad_patterns_are_named(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(ValueError, match=r"^--eval_file: .*/none\*.txt matches no file\.$"):
        text_files.expand(str(tmp_path / "none*.txt"), "--eval_file")
    with pytest.raises(ValueError, match=r"^--eval_file: .*empty.txt is empty\.$"):
        text_files.expand(str(tmp_path / "empty.txt"), "--eval_file")
    with pytest.raises(ValueError, match=r"is a directory; expected text files \(a glob such as .*/\*\)"):
        text_files.expand(str(tmp_path), "--train_file")
    with pytest.raises(ValueError, match="--train_file is empty"):
        text_files.expand(" , ", "--train_file")


def test_sample_lines_skips_empty_lines_and_names_bad_bytes(tmp_path):
    (tmp_path / "a.txt").write_text("one\n\n  two  \n")
    (tmp_path / "b.txt").write_bytes(b"three\nfo\xffur\n")
    files = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    assert text_files.sample_lines(files, 3, "--train_file") == ["one", "two", "three"]
    with pytest.raises(ValueError, match=r"--train_file: .*b.txt line 2 is not UTF-8 \(byte 3\)"):
        text_files.sample_lines(files, 10, "--train_file")
    (tmp_path / "blank.txt").write_text("\n\n")
    with pytest.raises(ValueError, match="hold no text"):
        text_files.sample_lines([str(tmp_path / "blank.txt")], 10, "--train_file")


def test_check_utf8_reads_every_line(tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("one\n" * 1000)
    (tmp_path / "b.txt").write_bytes(b"two\n" * 500 + b"caf\xe9\n")
    text_files.check_utf8([str(tmp_path / "a.txt")], "--eval_file")
    with pytest.raises(ValueError, match=r"^--test_file: \S+/b.txt line 501 is not UTF-8 \(byte 4\)\.$"):
        text_files.check_utf8([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], "--test_file")
    # Decoded in blocks: a character cut by a block's end is no error; a bad byte in a later block is named by
    # its line; a file that ends inside a character too.
    monkeypatch.setattr(text_files, "_BLOCK_BYTES", 3)
    (tmp_path / "c.txt").write_text("caf\u00e9 cr\u00e8me\n" * 3, encoding="utf-8")
    text_files.check_utf8([str(tmp_path / "c.txt")], "--train_file")
    (tmp_path / "d.txt").write_bytes("caf\u00e9\n".encode() * 3 + b"\xff\n")
    with pytest.raises(ValueError, match=r"^--train_file: \S+/d.txt line 4 is not UTF-8 \(byte 1\)\.$"):
        text_files.check_utf8([str(tmp_path / "d.txt")], "--train_file")
    (tmp_path / "e.txt").write_bytes(b"one\ncaf\xc3")
    with pytest.raises(ValueError, match=r"^--train_file: \S+/e.txt line 2 is not UTF-8 \(byte 4\)\.$"):
        text_files.check_utf8([str(tmp_path / "e.txt")], "--train_file")
