"""The demo's sample data: docstrings that do not depend on other imports, and the probe passages."""

import pytest

from reproduction import sample_data


def test_own_doc_never_inherits_a_docstring():
    class Base:
        def method(self):
            """Base's words."""

    class Child(Base):
        def method(self):
            pass

    assert sample_data._own_doc(Base.method) == "Base's words."  # pylint: disable=protected-access
    assert sample_data._own_doc(Child.method) is None  # pylint: disable=protected-access


def _corpus(path, documents):
    path.write_text("\n\n".join("\n".join(sentences) for sentences in documents) + "\n")
    return str(path)


def test_probe_passages_are_running_text_of_each_length_from_sentence_starts(tmp_path):
    documents = [["w%d_%d is here now." % (d, s) for s in range(4)] for d in range(10)]
    corpus = _corpus(tmp_path / "corpus.txt", documents)
    passages = sample_data.probe_passages(corpus, word_counts=(2, 5, 9), per_length=2)
    assert [len(p.split()) for p in passages] == [2, 2, 5, 5, 9, 9]
    text = " ".join(s for d in documents for s in d)
    starts = {s.split()[0] for d in documents for s in d}
    for passage in passages:
        assert passage in text and passage.split()[0] in starts
    assert len(set(passages)) == len(passages)


def test_probe_passages_name_a_corpus_too_short(tmp_path):
    corpus = _corpus(tmp_path / "corpus.txt", [["Only four words here.", "And two."]])
    with pytest.raises(ValueError, match=r"corpus.txt has fewer than 9 words: too short for the probe passages"):
        sample_data.probe_passages(corpus, word_counts=(2, 9))
