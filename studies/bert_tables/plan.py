"""The plan of a BERT table: every step, as the command line of one of our entry points.

Layout under --output_dir:
  configs/<row>.json                 the row's bert_config.json at this scale
  data/vocab.txt                     create_vocab.py's WordPiece vocabulary of the corpus (scales that
                                     learn one, when --vocab_file is not given)
  data/pretrain_<n>.tfrecord         create_pretraining_data output, per stage
  data/heldout.tfrecord              the same from --eval_corpus (scales with held_out)
  data/unigram.json                  unigram_baseline.py: what word frequencies alone score on the
                                     held-out masked tokens (scales with held_out)
  <row>/pretrain_<n>/                run_pretraining (stage 2 starts from stage 1); with held-out text
                                     (scales with held_out), the last stage evaluates it at every
                                     checkpoint (eval_history.json, the learning curve) and at the end
                                     (eval_results.txt) instead of its training records
  <row>/probe/                       probe_attention_rank on the pre-trained model
  <row>/mnli_seed<k>/, <row>/squad_seed<k>/   fine-tuning, one folder per seed

With several pre-training seeds, pretrain_<n> and probe end in _seed<s>;
fine-tuning starts from the first seed's model.
"""

import dataclasses
import os
from typing import Optional

from modeling.pretraining import EVAL_HISTORY_FILE
from reproduction.plan import Step
from studies.bert_tables.scales import PRETRAINING_SEED
# Fine-tuning seeds: 1, 2, ... (--random_seed of each fine-tuning run).
FIRST_FINE_TUNING_SEED = 1
PROBE_FILES = ("ranks.jsonl", "summary.json", "rank_vs_length.png")
UNIGRAM_FILE = "unigram.json"


@dataclasses.dataclass(frozen=True)
class DataPaths:
    """Where the data lives: --corpus, --mnli_dir, --squad_dir, --vocab_file, --eval_corpus.

    A task directory of None: that fine-tuning is not run (small scale without it).
    learned_vocab_size: when set, vocab_file is learned from the corpus with this
    many entries at most, by the plan's first step (learned_vocab_path).
    """

    corpus: str
    mnli_dir: Optional[str]
    squad_dir: Optional[str]
    vocab_file: str
    do_lower_case: bool = True
    eval_corpus: Optional[str] = None
    learned_vocab_size: Optional[int] = None


def learned_vocab_path(output_dir):
    return os.path.join(output_dir, "data", "vocab.txt")


def unigram_path(output_dir):
    return os.path.join(output_dir, "data", UNIGRAM_FILE)


def config_path(output_dir, row):
    return os.path.join(output_dir, "configs", "%s.json" % row.name)


def probe_input_path(output_dir):
    """Sentence pairs of the corpus that the attention-rank probe reads (driver.write_probe_input)."""
    return os.path.join(output_dir, "data", "probe_input.txt")


def checkpoint(directory, step):
    return os.path.join(directory, "model.ckpt-%d" % step)


def build(experiment, scale, paths, output_dir, num_seeds, dtype="float32"):
    """All steps of `experiment` at `scale`, in the order they run.

    Args:
      experiment: experiments.Experiment.
      scale: scales.Scale.
      paths: DataPaths.
      output_dir: where everything is written.
      num_seeds: fine-tuning runs per row and task.
      dtype: run_pretraining/run_classifier/run_squad --dtype.

    Returns:
      list of Step.
    """
    steps = []
    data = {}
    if paths.learned_vocab_size:
        steps.append(Step(
            "data/vocab", "", "data", "create_vocab.py", dict(
                input_file=paths.corpus, output_file=paths.vocab_file, vocab_size=paths.learned_vocab_size,
                do_lower_case=paths.do_lower_case, num_unused=0),  # every entry learned: nothing is added later
            (paths.vocab_file,)))
    corpora = [(stage.name, paths.corpus, stage) for stage in scale.stages]
    if paths.eval_corpus:
        corpora.append(("heldout", paths.eval_corpus, scale.stages[-1]))
    for name, corpus, stage in corpora:
        data[name] = os.path.join(output_dir, "data", "%s.tfrecord" % name)
        steps.append(Step(
            "data/%s" % name, "", "data", "create_pretraining_data.py", dict(
                input_file=corpus, output_file=data[name], vocab_file=paths.vocab_file,
                do_lower_case=paths.do_lower_case, max_seq_length=stage.max_seq_length,
                max_predictions_per_seq=stage.max_predictions_per_seq, random_seed=PRETRAINING_SEED,
                dupe_factor=scale.dupe_factor),
            (data[name],), kept=()))
    if paths.eval_corpus:
        stage = scale.stages[-1]
        steps.append(Step(
            "data/unigram", "", "data", "unigram_baseline.py", dict(
                input_file=data[stage.name], eval_input_file=data["heldout"], vocab_file=paths.vocab_file,
                output_file=unigram_path(output_dir), max_seq_length=stage.max_seq_length,
                max_predictions_per_seq=stage.max_predictions_per_seq),
            (unigram_path(output_dir),)))
    seeds = scale.pretraining_seeds
    for first, seed in ((index == 0, seed) for index, seed in enumerate(seeds)):
        suffix = "_seed%d" % seed if len(seeds) > 1 else ""
        for row in experiment.rows:
            final = _pretraining_steps(steps, row, scale, data, output_dir, suffix, seed, dtype,
                                       data.get("heldout"))
            probe_dir = os.path.join(output_dir, row.name, "probe" + suffix)
            probe_outputs = tuple(os.path.join(probe_dir, name) for name in PROBE_FILES)
            steps.append(Step(
                "%s/probe%s" % (row.name, suffix), row.name, "probe", "probe_attention_rank.py", dict(
                    input_file=probe_input_path(output_dir), output_file=probe_outputs[0],
                    summary_file=probe_outputs[1], plot_file=probe_outputs[2],
                    bert_config_file=config_path(output_dir, row), init_checkpoint=final,
                    vocab_file=paths.vocab_file, do_lower_case=paths.do_lower_case,
                    max_seq_length=scale.stages[0].max_seq_length),
                probe_outputs, seed if suffix else None, kept=probe_outputs[1:]))
            if first:
                _fine_tuning_steps(steps, row, scale, paths, output_dir, final, num_seeds, dtype)
    return steps


def _pretraining_steps(steps, row, scale, data, output_dir, suffix, seed, dtype, held_out=None):
    """Appends the row's pre-training stages; returns the final checkpoint.

    held_out: records the last stage evaluates (its learning curve and final figures), or None.
    """
    previous = None
    for index, stage in enumerate(scale.stages):
        directory = os.path.join(output_dir, row.name, stage.name + suffix)
        last = index == len(scale.stages) - 1
        flags = dict(
            input_file=data[stage.name], output_dir=directory, bert_config_file=config_path(output_dir, row),
            do_train=True, do_eval=last, train_batch_size=scale.train_batch_size,
            max_seq_length=stage.max_seq_length, max_predictions_per_seq=stage.max_predictions_per_seq,
            num_train_steps=stage.num_train_steps, num_warmup_steps=stage.num_warmup_steps,
            learning_rate=scale.learning_rate,
            save_checkpoints_steps=min(scale.save_checkpoints_steps, stage.num_train_steps),
            max_eval_steps=scale.max_eval_steps, random_seed=seed, dtype=dtype)
        if previous:
            flags["init_checkpoint"] = previous
        outputs = [checkpoint(directory, stage.num_train_steps) + ".index"]
        if last:
            outputs.append(os.path.join(directory, "eval_results.txt"))
        if last and held_out:
            flags.update(eval_input_file=held_out, eval_batch_size=scale.held_out_batch_size)
            outputs.append(os.path.join(directory, EVAL_HISTORY_FILE))
        # The report reads the last stage's evaluation; the checkpoints are for the steps after it.
        steps.append(Step("%s/%s%s" % (row.name, stage.name, suffix), row.name, stage.name, "run_pretraining.py",
                          flags, tuple(outputs), seed if suffix else None, distributed=True,
                          kept=tuple(outputs[1:])))
        previous = checkpoint(directory, stage.num_train_steps)
    return previous


def _fine_tuning_steps(steps, row, scale, paths, output_dir, final, num_seeds, dtype):
    """Appends MNLI and SQuAD fine-tuning per seed, for the tasks whose data is given."""
    fine_tuning = dict(vocab_file=paths.vocab_file, bert_config_file=config_path(output_dir, row),
                       init_checkpoint=final, do_lower_case=paths.do_lower_case, dtype=dtype)
    for seed in range(FIRST_FINE_TUNING_SEED, FIRST_FINE_TUNING_SEED + num_seeds):
        if paths.mnli_dir:
            mnli_dir = os.path.join(output_dir, row.name, "mnli_seed%d" % seed)
            steps.append(Step(
                "%s/mnli_seed%d" % (row.name, seed), row.name, "mnli", "run_classifier.py", dict(
                    task_name="MNLI", data_dir=paths.mnli_dir, output_dir=mnli_dir, do_train=True,
                    do_eval=True, random_seed=seed, **scale.mnli, **fine_tuning),
                (os.path.join(mnli_dir, "eval_results.txt"),
                 os.path.join(mnli_dir, "eval_results_mismatched.txt")), seed, distributed=True))
        if paths.squad_dir:
            squad_dir = os.path.join(output_dir, row.name, "squad_seed%d" % seed)
            steps.append(Step(
                "%s/squad_seed%d" % (row.name, seed), row.name, "squad", "run_squad.py", dict(
                    train_file=os.path.join(paths.squad_dir, "train-v1.1.json"),
                    predict_file=os.path.join(paths.squad_dir, "dev-v1.1.json"), output_dir=squad_dir,
                    do_train=True, do_predict=True, random_seed=seed, **scale.squad, **fine_tuning),
                (os.path.join(squad_dir, "eval_results.json"),), seed, distributed=True))
