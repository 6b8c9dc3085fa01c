"""The SentencePiece vocabulary: learned deterministically, saved, reused; bad models and sizes named."""

import random

import pytest

from tokenization import sentencepiece_vocabulary as vocabulary

WORDS = "the a cat dog sat ran on mat log big small red blue and then it was".split()


def _lines(count=200, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(count)]


def test_learning_is_deterministic_and_saves_model_and_piece_list(tmp_path):
    a = vocabulary.learn(_lines(), 30, str(tmp_path / "a"))
    b = vocabulary.learn(_lines(), 30, str(tmp_path / "b"))
    assert a.model_proto == b.model_proto and a.size == 30
    assert (a.bos_id, a.eos_id) == (2, 3) and a.processor().pad_id() == 0
    assert vocabulary.load(a.path).model_proto == a.model_proto
    pieces = (tmp_path / "a" / vocabulary.VOCAB_LIST_FILE).read_text().splitlines()
    assert len(pieces) == 30 and pieces[0].startswith("<pad>\t")


def test_get_prefers_the_flag_then_the_saved_model(tmp_path):
    class Source:
        calls = 0

        def sample_lines(self, max_lines):
            Source.calls += 1
            return _lines()[:max_lines]

    learned = vocabulary.get(None, 30, Source(), str(tmp_path))
    again = vocabulary.get(None, 30, Source(), str(tmp_path))
    assert Source.calls == 1 and again.model_proto == learned.model_proto
    with pytest.raises(ValueError, match="holds 30 pieces but --vocab_size=40"):
        vocabulary.get(None, 40, Source(), str(tmp_path))
    assert vocabulary.get(learned.path, 999, None, str(tmp_path / "elsewhere")).size == 30
    with pytest.raises(ValueError, match="No vocabulary: give --vocab_file"):
        vocabulary.get(None, 30, None, str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="No vocabulary: give --spm_model"):
        vocabulary.get(None, 30, None, str(tmp_path / "empty"), flag="--spm_model")


def test_bad_models_and_sizes_are_named(tmp_path):
    (tmp_path / "vocab.txt").write_text("[PAD]\nthe\n")
    with pytest.raises(ValueError, match=r"^--vocab_file=\S+/vocab.txt is not a SentencePiece model \("):
        vocabulary.load(str(tmp_path / "vocab.txt"))
    with pytest.raises(ValueError, match=r"^--spm_model=\S+/vocab.txt is not a SentencePiece model \("):
        vocabulary.load(str(tmp_path / "vocab.txt"), "--spm_model")
    with pytest.raises(ValueError, match="--vocab_file=.*missing.model does not exist"):
        vocabulary.load(str(tmp_path / "missing.model"))
    with pytest.raises(ValueError, match=r"--vocab_size=500 cannot be learned from the training text: "
                                         r"Vocabulary size too high \(500\)"):
        vocabulary.learn(_lines(), 500, str(tmp_path))
