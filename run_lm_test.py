"""The run_lm.py command line, in a subprocess: --preset=lm1b_paper trains and reports perplexity."""

import json
import os
import random
import subprocess
import sys

REPO_DIR = os.path.dirname(os.path.abspath(__file__))
WORDS = "the a cat dog sat ran on mat log big small red and then it was".split()


def _run(*flags):
    return subprocess.run([sys.executable, os.path.join(REPO_DIR, "run_lm.py")] + list(flags),
                          cwd=REPO_DIR, capture_output=True, text=True, timeout=300)


def test_preset_trains_and_reports_perplexity(tmp_path):
    rng = random.Random(0)
    text = "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 10))) for _ in range(300)) + "\n"
    (tmp_path / "train.txt").write_text(text)
    out = tmp_path / "out"
    # The paper's model (6 layers, d=256, 8 heads of 32) for two steps, with a vocabulary this text can fill.
    process = _run("--preset=lm1b_paper", "--train_file=%s" % (tmp_path / "train.txt"),
                   "--eval_file=%s" % (tmp_path / "train.txt"), "--output_dir=%s" % out, "--do_train",
                   "--do_eval", "--vocab_size=32", "--num_train_steps=2", "--train_batch_size=4",
                   "--max_seq_length=32", "--dtype=bfloat16")
    assert process.returncode == 0, process.stderr[-3000:]
    results = dict(line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines())
    assert int(results["global_step"]) == 2 and 1 < float(results["perplexity"]) < 100
    config = json.loads((out / "lm_config.json").read_text())
    assert (config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"],
            config["head_size"], config["intermediate_size"], config["vocab_size"]) == (256, 6, 8, 32, 1024, 32)
    assert "tokens/s = " in process.stderr and "learning_rate = " in process.stderr


def test_usage_errors_are_one_line(tmp_path):
    process = _run("--preset=lm1b_large", "--output_dir=%s" % tmp_path, "--do_train", "--train_file=x")
    assert process.returncode != 0
    assert process.stderr.strip().splitlines()[-1] == (
        "run_lm.py: error: --preset=lm1b_large is not valid; expected one of lm1b_paper. Try --help.")
    process = _run("--output_dir=%s" % tmp_path, "--do_train", "--train_file=%s" % (tmp_path / "none.txt"))
    assert process.stderr.strip().splitlines()[-1] == (
        "run_lm.py: error: --train_file: %s matches no file." % (tmp_path / "none.txt"))
