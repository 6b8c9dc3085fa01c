"""Collects a finished experiment's numbers into results.json and results.md.

Per row: the config, the mean rank of its heads' attention logits over the
probe's sentences (probe_attention_rank, with the bound min(d_p, n)), parameter counts (at the run's scale and at the
paper's, pre-training heads included, as the paper counts), the pre-training
eval (loss, masked-LM and next-sentence accuracy), MNLI matched and
mismatched accuracy and SQuAD v1.1 EM and F1 in percent, each as mean ±
standard deviation over the fine-tuning seeds (sample standard deviation;
0 with one seed) and per seed. results.md sets them out in the paper's
layout with the paper's published numbers in their own, labelled columns.
"""

import json
import os

import modeling
from reproduction.bert_tables import scales
from reproduction.summary import read_key_values as _read_key_values, summarize

PAPER_VOCAB_SIZE = 30522  # BERT's uncased WordPiece vocabulary, as the paper's counts assume.


def total_parameters(config):
    return modeling.count_parameters(config, include_pretraining_heads=True)["total_with_pretraining_heads"]


def collect(experiment, scale, steps, vocab_size, extra=None):
    """The results of every row whose steps are finished.

    Args:
      experiment, scale: what ran.
      steps: the plan's steps.
      vocab_size: the run's vocabulary size.
      extra: optional {row name: {key: value}} merged into each row (e.g. the probe's mean rank).

    Returns:
      dict, as written to results.json.
    """
    rows = []
    for row in experiment.rows:
        config = scale.config(row, vocab_size)
        own = [s for s in steps if s.row == row.name]
        pretraining = [s for s in own if s.program == "run_pretraining.py"][-1]
        eval_file = os.path.join(pretraining.flags["output_dir"], "eval_results.txt")
        pre = _read_key_values(eval_file) if os.path.exists(eval_file) else {}
        mnli_m, mnli_mm, em, f1 = [], [], [], []
        for step in own:
            if not step.is_done():
                continue
            if step.stage == "mnli":
                directory = step.flags["output_dir"]
                mnli_m.append(100 * float(_read_key_values(os.path.join(directory, "eval_results.txt"))["eval_accuracy"]))
                mnli_mm.append(100 * float(_read_key_values(
                    os.path.join(directory, "eval_results_mismatched.txt"))["eval_accuracy"]))
            elif step.stage == "squad":
                with open(os.path.join(step.flags["output_dir"], "eval_results.json")) as f:
                    metrics = json.load(f)
                em.append(metrics["exact_match"])
                f1.append(metrics["f1"])
        entry = dict(
            name=row.name, label=row.label(), family=row.family, num_heads=row.num_heads,
            head_size=row.effective_head_size, hidden_size=row.hidden_size,
            config=config.to_dict(),
            params=dict(run_scale=total_parameters(config),
                        paper_scale=total_parameters(scales.PAPER.config(row, PAPER_VOCAB_SIZE))),
            pretraining={k: float(pre[k]) for k in ("loss", "masked_lm_accuracy", "next_sentence_accuracy",
                                                    "masked_lm_loss", "global_step") if k in pre},
            mnli_m=summarize(mnli_m), mnli_mm=summarize(mnli_mm), squad_em=summarize(em), squad_f1=summarize(f1),
            paper=None if row.paper is None else dict(
                params_m=row.paper.params_m, squad_f1=list(row.paper.squad_f1),
                squad_em=list(row.paper.squad_em), mnli=list(row.paper.mnli)),
        )
        probe = [s for s in own if s.stage == "probe" and s.is_done()]
        if probe:
            with open(probe[0].flags["summary_file"]) as f:
                summary = json.load(f)
            entry.update(mean_logit_rank=summary["mean_rank"], rank_bound=summary["mean_bound"])
        entry.update((extra or {}).get(row.name, {}))
        rows.append(entry)
    return dict(experiment=experiment.name, title=experiment.title, scale=scale.name,
                varies=experiment.varies, rows=rows)


def _ours(summary, digits=2):
    if summary is None:
        return "—"
    if len(summary["per_seed"]) == 1:
        return "%.*f" % (digits, summary["mean"])
    return "%.*f±%.*f" % (digits, summary["mean"], digits, summary["std"])


def _paper(pair):
    return "%s±%s" % (pair[0], pair[1]) if pair else "—"


def markdown(results, scale_note):
    """results.md: the paper's layout, ours beside the paper's published numbers."""
    lines = ["# %s" % results["title"], "", scale_note, "",
             "Ours: mean±std over fine-tuning seeds (one seed: the value). **(paper)** columns are the "
             "paper's published numbers, for comparison only. Parameters include the pre-training heads; "
             "'ours' counts the model as run, 'paper scale' the same row at 24 layers and V = 30522.", ""]
    has_rank = any("mean_logit_rank" in row for row in results["rows"])
    header = ["row", "d", "h", "d_p", "params (ours)", "params (paper scale)", "params (paper)",
              "SQuAD F1", "SQuAD F1 (paper)", "SQuAD EM", "SQuAD EM (paper)", "MNLI-m", "MNLI-mm",
              "MNLI (paper)", "MLM acc", "NSP acc"] + (["mean logit rank (bound min(d_p, n))"] if has_rank else [])
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results["rows"]:
        paper = row["paper"] or {}
        pre = row["pretraining"]
        cells = [row["name"], row["hidden_size"], row["num_heads"], row["head_size"],
                 "%.2fM" % (row["params"]["run_scale"] / 1e6), "%.1fM" % (row["params"]["paper_scale"] / 1e6),
                 "%sM" % paper["params_m"] if paper else "—",
                 _ours(row["squad_f1"]), _paper(paper.get("squad_f1")), _ours(row["squad_em"]),
                 _paper(paper.get("squad_em")), _ours(row["mnli_m"]), _ours(row["mnli_mm"]),
                 _paper(paper.get("mnli")),
                 "%.3f" % pre["masked_lm_accuracy"] if "masked_lm_accuracy" in pre else "—",
                 "%.3f" % pre["next_sentence_accuracy"] if "next_sentence_accuracy" in pre else "—"]
        if has_rank:
            rank = row.get("mean_logit_rank")
            cells.append("—" if rank is None else "%.1f (bound %.1f)" % (rank, row["rank_bound"]))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"

