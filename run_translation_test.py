"""The run_translation.py command line, in a subprocess: --preset=transformer-tiny trains on a TSV file and reports BLEU."""

import json
import os
import random
import subprocess
import sys

import pytest

REPO_DIR = os.path.dirname(os.path.abspath(__file__))
WORDS = "cat dog sun moon tree river stone bird".split()


def _run(*flags):
    return subprocess.run([sys.executable, os.path.join(REPO_DIR, "run_translation.py")] + list(flags),
                          cwd=REPO_DIR, capture_output=True, text=True, timeout=300)


@pytest.mark.long
def test_tiny_preset_trains_translates_and_reports_bleu(tmp_path):
    rng = random.Random(0)
    pairs = []
    for _ in range(200):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 5))]
        pairs.append("%s\t%s\textra column" % (" ".join(words), " ".join(w.upper() for w in words)))
    (tmp_path / "train.tsv").write_text("\n".join(pairs) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(pairs[:5]) + "\n")
    out = tmp_path / "out"
    # The preset's model (6 encoder + 2 decoder layers, d=256, 8 heads, FFN 1536) for two steps.
    process = _run("--preset=transformer-tiny", "--train_tsv=%s" % (tmp_path / "train.tsv"),
                   "--dev_tsv=%s" % (tmp_path / "test.tsv"), "--test_tsv=%s" % (tmp_path / "test.tsv"),
                   "--output_dir=%s" % out, "--do_train", "--do_eval", "--do_predict", "--vocab_size=40",
                   "--num_train_steps=2", "--train_batch_size=4", "--max_decode_length=6", "--beam_size=2",
                   "--source_language=xx", "--target_language=en")
    assert process.returncode == 0, process.stderr[-3000:]
    for name in ("eval_results.txt", "test_results.txt"):
        results = dict(line.split(" = ", 1) for line in (out / name).read_text().splitlines())
        assert int(results["global_step"]) == 2 and 0 <= float(results["bleu"]) <= 100
        assert results["language_pair"] == "xx-en" and int(results["sentences"]) == 5
    assert len((out / "translations.test.txt").read_text().split("\n")) == 6  # five lines and the last newline
    config = json.loads((out / "nmt_config.json").read_text())
    assert (config["hidden_size"], config["num_encoder_layers"], config["num_decoder_layers"],
            config["num_attention_heads"], config["intermediate_size"], config["vocab_size"]) == (256, 6, 2, 8, 1536, 40)
    assert "tokens/s = " in process.stderr and "Dev BLEU" in process.stderr


def test_usage_errors_are_one_line(tmp_path):
    process = _run("--preset=transformer-huge", "--output_dir=%s" % tmp_path, "--do_train", "--train_tsv=x")
    assert process.returncode != 0
    assert process.stderr.strip().splitlines()[-1] == (
        "run_translation.py: error: --preset=transformer-huge is not valid; expected one of transformer-base, "
        "transformer-big, transformer-tiny. Try --help.")
    (tmp_path / "a.src").write_text("one\ntwo\n")
    (tmp_path / "a.tgt").write_text("eins\n")
    process = _run("--output_dir=%s" % (tmp_path / "o"), "--do_train", "--train_src=%s" % (tmp_path / "a.src"),
                   "--train_tgt=%s" % (tmp_path / "a.tgt"))
    assert process.stderr.strip().splitlines()[-1].startswith("run_translation.py: error: --train_src=")
    assert "has 2 lines but --train_tgt=" in process.stderr
