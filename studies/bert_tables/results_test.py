"""results.json/results.md from finished runs' files, and the plots drawn from them."""

import json
import os

import pytest
from PIL import Image

from studies.bert_tables import experiments, plan, plots, results, scales

PATHS = plan.DataPaths(corpus="c", mnli_dir="m", squad_dir="s", vocab_file="v")


def _finish(steps, scores):
    """Writes each step's outputs as its entry point would, with scores[row] = (mnli-m, mnli-mm, em, f1)."""
    for step in steps:
        directory = step.flags.get("output_dir")
        if directory is None:
            continue
        os.makedirs(directory, exist_ok=True)
        m, mm, em, f1 = scores[step.row][(step.seed or 1) - 1]
        if step.stage == "mnli":
            open(os.path.join(directory, "eval_results.txt"), "w").write("eval_accuracy = %s\nloss = 1\n" % m)
            open(os.path.join(directory, "eval_results_mismatched.txt"), "w").write("eval_accuracy = %s\n" % mm)
        elif step.stage == "squad":
            json.dump({"exact_match": em, "f1": f1}, open(os.path.join(directory, "eval_results.json"), "w"))
        elif step.stage == "pretrain_512":
            open(os.path.join(directory, "eval_results.txt"), "w").write(
                "global_step = 30\nloss = 6.5\nmasked_lm_accuracy = 0.125\nnext_sentence_accuracy = 0.5\n")


def test_rows_are_summarised_over_seeds_beside_the_papers_numbers(tmp_path):
    experiment = experiments.get("table2b")
    steps = plan.build(experiment, scales.TINY, PATHS, str(tmp_path), num_seeds=2)
    scores = {row.name: [(0.5 + i / 10, 0.4, 10.0 + i, 20.0 + 2 * i), (0.7 + i / 10, 0.6, 12.0 + i, 24.0 + 2 * i)]
              for i, row in enumerate(experiment.rows)}
    _finish(steps, scores)
    collected = results.collect(experiment, scales.TINY, steps, vocab_size=8000)
    first = collected["rows"][0]
    assert first["mnli_m"] == {"mean": pytest.approx(60.0), "std": pytest.approx(14.142136, rel=1e-6),
                               "per_seed": [50.0, 70.0]}
    assert first["squad_f1"]["mean"] == pytest.approx(22.0) and first["squad_em"]["per_seed"] == [10.0, 12.0]
    assert first["pretraining"] == {"global_step": 30.0, "loss": 6.5, "masked_lm_accuracy": 0.125,
                                    "next_sentence_accuracy": 0.5}
    assert first["params"]["run_scale"] == results.total_parameters(scales.TINY.config(experiment.rows[0], 8000))
    table = results.markdown(collected, "A note.")
    lines = table.splitlines()
    header = next(line for line in lines if line.startswith("| row |"))
    assert "| SQuAD F1 | SQuAD F1 (paper) |" in header and "| MNLI-m | MNLI-mm | MNLI (paper) |" in header
    dp32 = next(line for line in lines if line.startswith("| dp32 |")).split(" | ")
    cells = dict(zip(header.split(" | "), dp32))
    assert cells["SQuAD F1"] == "22.00±2.83" and cells["SQuAD F1 (paper)"] == "88.53±0.06"
    assert cells["MNLI-m"] == "60.00±14.14" and cells["MNLI (paper)"] == "82.5±0.1"
    assert cells["params (paper)"] == "130M" and cells["params (paper scale)"] == "129.9M"
    # The paper's sizes, the run's own beside them: tiny divides d and d_p by 8.
    assert (cells["| row"], cells["d"], cells["h"], cells["d_p"]) == ("| dp32", "512 (64)", "8 (8)", "32 (4)")
    assert "d, h and d_p are the paper's, with the run's own in parentheses." in lines
    assert plots.sizes_as_run(collected) == "tiny scale as run: 2 layers, d = 64, h = 8, d_p = 4, 8, 16, 32, I = 512"

    png = plots.write(str(tmp_path), collected)
    assert Image.open(png).size[0] > 1000


def test_summary_of_one_seed_has_no_spread():
    assert results.summarize([83.5]) == {"mean": 83.5, "std": 0.0, "per_seed": [83.5]}
    assert results.summarize([]) is None


def test_figure2_plot_has_both_families(tmp_path):
    experiment = experiments.get("figure2")
    steps = plan.build(experiment, scales.TINY, PATHS, str(tmp_path), num_seeds=1)
    _finish(steps, {row.name: [(0.5, 0.5, 10.0, 20.0)] for row in experiment.rows})
    collected = results.collect(experiment, scales.TINY, steps, vocab_size=8000)
    assert {row["family"] for row in collected["rows"]} == {"standard", "fixed head size"}
    png = plots.write(str(tmp_path), collected)
    assert png.endswith("figure2.png") and Image.open(png).size[1] > 600
