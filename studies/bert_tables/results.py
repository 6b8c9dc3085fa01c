"""Collects a finished experiment's numbers into results.json and results.md.

Per row: the config, the mean rank of its heads' attention logits over the
probe's sentences (probe_attention_rank, with the bound min(d_p, n)), parameter counts (at the run's scale and at the
paper's, pre-training heads included, as the paper counts), the pre-training
eval (loss, masked-LM and next-sentence accuracy), MNLI matched and
mismatched accuracy and SQuAD v1.1 EM and F1 in percent, each as mean ±
standard deviation over the fine-tuning seeds (sample standard deviation;
0 with one seed) and per seed. At a scale with held-out text and several
pre-training seeds (small), the held-out masked-LM accuracy and loss are
mean ± std over the pre-training seeds, and fine-tuning that was not run
says so, and the unigram baseline (what word frequencies alone score on the
held-out masked tokens, unigram_baseline.py) stands beside them. results.md sets them out in the paper's
layout with the paper's published numbers in their own, labelled columns, and
the sizes d, h and d_p as the paper's with the run's own in parentheses.
"""

import json
import os

import modeling
from modeling.pretraining import read_eval_history
from reproduction.summary import read_key_values as _read_key_values, summarize
from studies.bert_tables import scales

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
        last_stage = [s for s in own if s.stage == scale.stages[-1].name]
        pretraining = last_stage[0]  # The first seed's.
        eval_file = os.path.join(pretraining.flags["output_dir"], "eval_results.txt")
        # With held-out text the last stage evaluates it, not its training records.
        held_out_runs = [s for s in last_stage if "eval_input_file" in s.flags and s.is_done()]
        pre = _read_key_values(eval_file) if os.path.exists(eval_file) and not held_out_runs else {}
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
        entry["fine_tuning_run"] = dict(mnli=any(s.stage == "mnli" for s in own),
                                        squad=any(s.stage == "squad" for s in own))
        probes = []
        for step in own:
            if step.stage == "probe" and step.is_done():
                with open(step.flags["summary_file"]) as f:
                    probes.append(json.load(f))
        if probes:
            entry.update(mean_logit_rank=summarize([p["mean_rank"] for p in probes])["mean"],
                         mean_logit_rank_per_seed=[p["mean_rank"] for p in probes],
                         rank_bound=probes[0]["mean_bound"])
        held_out = [_read_key_values(os.path.join(s.flags["output_dir"], "eval_results.txt")) for s in held_out_runs]
        if held_out:
            entry["held_out"] = {key: summarize([h[key] for h in held_out]) for key in
                                 ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy")}
            # Per seed, every checkpoint's [step, held-out masked-LM loss, accuracy]: the learning curves.
            entry["held_out_curves"] = [
                [[point["global_step"], point["masked_lm_loss"], point["masked_lm_accuracy"]]
                 for point in read_eval_history(s.flags["output_dir"])] for s in held_out_runs]
        entry.update((extra or {}).get(row.name, {}))
        rows.append(entry)
    found = dict(experiment=experiment.name, title=experiment.title, scale=scale.name,
                 varies=experiment.varies, rows=rows)
    unigram = [s for s in steps if s.program == "unigram_baseline.py" and s.is_done()]
    if unigram:
        with open(unigram[0].flags["output_file"], encoding="utf-8") as f:
            found["unigram"] = json.load(f)
    return found


def _ours(summary, digits=2, run=True):
    if not run:
        return "not run"
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
    has_held_out = any("held_out" in row for row in results["rows"])
    header = ["row", "d", "h", "d_p", "params (ours)", "params (paper scale)", "params (paper)",
              "SQuAD F1", "SQuAD F1 (paper)", "SQuAD EM", "SQuAD EM (paper)", "MNLI-m", "MNLI-mm",
              "MNLI (paper)"] + ([] if has_held_out else ["MLM acc", "NSP acc"]) + (
                  ["held-out MLM acc", "held-out MLM loss", "held-out NSP acc"] if has_held_out else []) + (
                  ["mean logit rank (bound min(d_p, n))"] if has_rank else [])
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in results["rows"]:
        paper = row["paper"] or {}
        pre = row["pretraining"]
        run = row.get("fine_tuning_run", dict(mnli=True, squad=True))
        config = modeling.BertConfig.from_dict(row["config"])
        cells = [row["name"], "%d (%d)" % (row["hidden_size"], config.hidden_size),
                 "%d (%d)" % (row["num_heads"], config.num_attention_heads),
                 "%d (%d)" % (row["head_size"], config.attention_head_size),
                 "%.2fM" % (row["params"]["run_scale"] / 1e6), "%.1fM" % (row["params"]["paper_scale"] / 1e6),
                 "%sM" % paper["params_m"] if paper else "—",
                 _ours(row["squad_f1"], run=run["squad"]), _paper(paper.get("squad_f1")),
                 _ours(row["squad_em"], run=run["squad"]), _paper(paper.get("squad_em")),
                 _ours(row["mnli_m"], run=run["mnli"]), _ours(row["mnli_mm"], run=run["mnli"]),
                 _paper(paper.get("mnli"))]
        if not has_held_out:  # the training records' evaluation, as the original run_pretraining.py makes it
            cells += ["%.3f" % pre["masked_lm_accuracy"] if "masked_lm_accuracy" in pre else "—",
                      "%.3f" % pre["next_sentence_accuracy"] if "next_sentence_accuracy" in pre else "—"]
        if has_held_out:
            held_out = row.get("held_out", {})
            cells += [_ours(held_out.get(key), 4) for key in ("masked_lm_accuracy", "masked_lm_loss",
                                                               "next_sentence_accuracy")]
        if has_rank:
            rank = row.get("mean_logit_rank")
            cells.append("—" if rank is None else "%.1f (bound %.1f)" % (rank, row["rank_bound"]))
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    lines += ["", "d, h and d_p are the paper's, with the run's own in parentheses."]
    if has_held_out:
        lines += ["", "Held-out: mean±std over the pre-training seeds, on --eval_corpus, at the end of "
                  "pre-training (the plot has every checkpoint's). Mean logit rank: over the probe's examples, "
                  "every layer and head, mean over the seeds."]
    unigram = results.get("unigram")
    if unigram:
        lines += ["", "Unigram baseline on the same held-out masked tokens (word frequencies of the training "
                  "records, no context): accuracy %.4f (always %r), loss %.4f. A row near these figures has "
                  "learned word frequencies, not context." % (unigram["accuracy"], unigram["most_frequent_token"],
                                                             unigram["loss"])]
    return "\n".join(lines) + "\n"

