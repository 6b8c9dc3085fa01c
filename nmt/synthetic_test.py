"""The synthetic task: the same files for a seed, held-out splits apart, a target that is no copy of the source."""

import random

import pytest

from nmt import synthetic
from nmt.parallel_text import ParallelText

SIZES = dict(num_train=2000, num_dev=200, num_test=200)


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return synthetic.write_task(str(tmp_path_factory.mktemp("seed0")), seed=0, **SIZES)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _pairs(path):
    return [tuple(line.split("\t")) for line in _read(path).decode("ascii").splitlines()]


def _stem(word):
    """A target word without its suffix: suffixes hold none of the letters stems end in."""
    return word[:max(word.rfind(c) for c in synthetic.TARGET_FINALS) + 1]


def test_the_same_seed_writes_the_same_bytes(task, tmp_path):
    again = synthetic.write_task(str(tmp_path / "again"), seed=0, **SIZES)
    other = synthetic.write_task(str(tmp_path / "other"), seed=1, **SIZES)
    assert [p.rsplit("/", 1)[1] for p in task] == ["train.tsv", "dev.tsv", "test.tsv"]
    assert task.train.endswith("train.tsv") and task.test.endswith("test.tsv")
    for split in ("train", "dev", "test"):
        assert _read(getattr(task, split)) == _read(getattr(again, split))
        assert _read(getattr(task, split)) != _read(getattr(other, split))
    # A split's size changes only that split.
    bigger = synthetic.write_task(str(tmp_path / "bigger"), seed=0, num_train=2100, num_dev=200, num_test=200)
    assert _read(bigger.test) == _read(task.test) and _read(bigger.dev) == _read(task.dev)
    assert _read(bigger.train).startswith(_read(task.train))


def test_files_are_tsv_pairs_that_parallel_text_reads(task):
    for path, count in ((task.train, 2000), (task.dev, 200), (task.test, 200)):
        text = ParallelText.from_tsv(path)
        assert text.check() == count
        for source, target in text.python_pairs():
            assert synthetic.MIN_WORDS <= len(source.split()) <= synthetic.MAX_WORDS
    held_out = [source for source, _ in _pairs(task.dev) + _pairs(task.test)]
    assert len(set(held_out)) == len(held_out)
    assert not set(held_out) & {source for source, _ in _pairs(task.train)}


def test_the_target_follows_the_rules_and_is_no_copy(task):
    pairs = _pairs(task.train) + _pairs(task.dev) + _pairs(task.test)
    lexicon = synthetic._Lexicon(random.Random("0:lexicon"))  # pylint: disable=protected-access
    words = {word.source: word for group in (lexicon.nouns, lexicon.adjectives, lexicon.transitive,
                                             lexicon.intransitive, lexicon.adverbs, lexicon.postpositions,
                                             lexicon.determiners) for word in group}
    assert 240 <= len(words) <= 250
    translations = {}
    reordered = resized = 0
    for source, target in pairs:
        source_words, target_words = source.split(), target.split()
        assert not set(source_words) & set(target_words)
        assert translations.setdefault(source, target) == target  # a function of the source
        # Dictionary: the content words' stems, in the source's order, are the target's stems reordered;
        # the particles PL and PAST have no word of their own.
        in_place = [stem for w in source_words if w in words for stem in words[w].target]
        assert all(w in words or w in (lexicon.plural, lexicon.past) for w in source_words)
        stems = [_stem(w) for w in target_words]
        assert sorted(stems) == sorted(in_place)
        reordered += stems != in_place
        resized += len(target_words) != len(source_words)
        # Agreement: the verb takes the past ending exactly when the source ends with PAST.
        past = any(w.endswith(("og", "ogy")) for w in target_words)
        assert past == (source_words[-1] == lexicon.past)
        # The adverb moves from the start to the end.
        if source_words[0] in {w.source for w in lexicon.adverbs}:
            assert target_words[-1] == words[source_words[0]].target[0]
    assert reordered > 0.6 * len(pairs) and resized > 0.5 * len(pairs)


def test_a_smaller_lexicon_uses_fewer_words(tmp_path):
    def words(directory, scale):
        paths = synthetic.write_task(str(tmp_path / directory), num_train=2000, num_dev=5, num_test=5,
                                     seed=0, lexicon_scale=scale)
        with open(paths.train, encoding="utf-8") as f:
            return {word for line in f for word in line.split("\t")[0].split()}

    full, quarter = words("full", 1.0), words("quarter", 0.25)
    assert len(quarter) < 0.4 * len(full)
    assert len(quarter) >= 2 * 7  # every word class keeps at least two words
