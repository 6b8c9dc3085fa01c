"""corpus_scores against the sacrebleu command line on files."""

import os
import subprocess
import sys

import pytest

from nmt import metrics

HYPOTHESES = ["the cat sat on the mat .", "a quick brown fox jumps over the dog", "hello world !"]
REFERENCES = ["the cat sat on a mat .", "the quick brown fox jumped over the lazy dog", "hello , world !"]


def test_bleu_and_chrf_equal_the_sacrebleu_command_line(tmp_path):
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("\n".join(HYPOTHESES) + "\n", encoding="utf-8")
    ref.write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    scores = metrics.corpus_scores(HYPOTHESES, REFERENCES)
    for metric, key in (("bleu", "bleu"), ("chrf", "chrf")):
        output = subprocess.run(
            [sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-m", metric, "-b", "-w", "6"],
            check=True, capture_output=True, text=True, env=dict(os.environ, PYTHONIOENCODING="utf-8")).stdout
        assert scores[key] == pytest.approx(float(output.strip()), abs=1e-6)
    assert 0 < scores["bleu"] < 100 and 0 < scores["chrf"] < 100
    assert "tok:13a" in scores["bleu_signature"]


def test_identical_text_scores_100_and_lengths_must_match():
    assert metrics.corpus_scores(REFERENCES, REFERENCES)["bleu"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="2 translations but 3 references"):
        metrics.corpus_scores(HYPOTHESES[:2], REFERENCES)
    assert metrics.bleu_tokenizer("zh") == "zh" and metrics.bleu_tokenizer("tr") == "13a"
