"""theorem1: what one attention head can represent, measured (Bhojanapalli et al. 2020, Theorems 1 and 2).

One step, measure_head_capacity.py, at every scale: Theorem 1's sweep of the
head size d_p at several lengths n, and Theorem 2's h heads of d/h against h
heads of d_p = n. Inputs are random and full rank unless --init_checkpoint,
--bert_config_file, --vocab_file and --input_file give a BERT checkpoint and
sentences: then each n takes the embedding output of a real sentence.

Layout under --output_dir: capacity.json (every fit), then the engine's
results.json, results.md and theorem1.png.
"""

import dataclasses
import os
from typing import Optional

from analysis.head_capacity import HeadCapacityOptions, run_from_options
from options import Options, option
from reproduction.plan import Step
from reproduction.study import Plan, Study, scale_of
from studies.theorem1 import report

NAME = "theorem1"
OUTPUT_FILE = "capacity.json"


@dataclasses.dataclass(frozen=True)
class Theorem1Scale:
    """The sweep: measure_head_capacity.py's flags at one scale."""

    name: str
    lengths: tuple
    num_targets: int
    fit_steps: int
    restarts: int
    theorem2_length: int
    theorem2_hidden_size: int
    theorem2_num_heads: tuple
    minutes: Optional[float] = None  # Measured on 2 CPU cores.

    def flags(self):
        return dict(lengths=",".join(str(n) for n in self.lengths), num_targets=self.num_targets,
                    fit_steps=self.fit_steps, restarts=self.restarts, theorem2_length=self.theorem2_length,
                    theorem2_hidden_size=self.theorem2_hidden_size,
                    theorem2_num_heads=",".join(str(h) for h in self.theorem2_num_heads))


# Theorem 2 at paper scale is Table 2A's shape: d = 512, n = 128, fixed heads of d_p = 128.
PAPER = Theorem1Scale("paper", lengths=(16, 32, 64, 128), num_targets=3, fit_steps=3000, restarts=3,
                      theorem2_length=128, theorem2_hidden_size=512, theorem2_num_heads=(1, 2, 4, 8, 16, 32))
SMALL = Theorem1Scale("small", lengths=(8, 16, 32), num_targets=2, fit_steps=1500, restarts=2,
                      theorem2_length=16, theorem2_hidden_size=64, theorem2_num_heads=(1, 2, 4, 8, 16), minutes=2)
TINY = Theorem1Scale("tiny", lengths=(4, 8), num_targets=1, fit_steps=300, restarts=1,
                     theorem2_length=4, theorem2_hidden_size=8, theorem2_num_heads=(1, 2, 4))
SCALES = {s.name: s for s in (PAPER, SMALL, TINY)}


@dataclasses.dataclass(kw_only=True)
class Theorem1Options(Options):
    """theorem1's flags: a checkpoint, its vocabulary and sentences for real inputs."""

    bert_config_file: Optional[str] = option(
        None, "theorem1: the config of --init_checkpoint, whose embedding output of a real sentence replaces "
        "the random inputs.", path="file")
    init_checkpoint: Optional[str] = option(None, "theorem1: a BERT checkpoint (prefix or directory).")
    input_file: Optional[str] = option(None, "theorem1: sentences, one per line; each n takes the first with "
                                       "n WordPiece tokens or more.", path="file")
    vocab_file: Optional[str] = option(None, "theorem1: the WordPiece vocabulary of --init_checkpoint.")
    do_lower_case: bool = option(True, "Lower-case the text (an uncased vocabulary).")


def _real_input_flags(options):
    flags = dict(bert_config_file=options.bert_config_file, init_checkpoint=options.init_checkpoint,
                 vocab_file=options.vocab_file, input_file=options.input_file)
    if not any(flags.values()):
        return {}
    return dict(flags, do_lower_case=options.do_lower_case)


class Theorem1Study(Study):
    name = NAME
    options = Theorem1Options
    title = "Theorems 1 and 2: one head's best fit to a target context matrix, against head size d_p"

    def programs(self):
        return {"measure_head_capacity.py": (HeadCapacityOptions, run_from_options)}

    def plan(self, options):
        # Looked up now, so that a test can swap in a smaller scale.
        scale = scale_of(SCALES, options)
        output_file = os.path.join(options.output_dir, OUTPUT_FILE)
        step = Step(NAME, "", "fit", "measure_head_capacity.py",
                    dict(output_file=output_file, **scale.flags(), **_real_input_flags(options)), (output_file,))
        markdown = "\n".join([
            "# Plan: %s at %s scale" % (self.title, scale.name), "",
            "- Theorem 1: n in %s; d_p in n/8, n/4, n/2, 3n/4, n-1, n, 2n; %d near-permutation and %d "
            "Dirichlet targets per n." % (", ".join(map(str, scale.lengths)), scale.num_targets, scale.num_targets),
            "- Theorem 2: n = %d, d = %d, h in %s: standard heads of d/h against fixed heads of d_p = n." % (
                scale.theorem2_length, scale.theorem2_hidden_size, ", ".join(map(str, scale.theorem2_num_heads))),
            "- Each fit: %d Adam steps from %d seeded starts, the best kept." % (scale.fit_steps, scale.restarts),
            "- Inputs: %s." % ("the embedding output of real sentences of %s" % options.init_checkpoint
                               if options.init_checkpoint else "random, full rank"),
            "", "## Steps", "", "1. `%s` — %s" % (step.name, step.program), ""])

        def collect():
            results = report.collect(output_file, scale.name)
            return results, report.markdown(results), report.plot(options.output_dir, results)

        expected = ("Expected time: about %d minutes on 2 CPU cores (measured at %s scale)." % (
            max(1, round(scale.minutes)), scale.name) if scale.minutes else "")
        return Plan([step], (), markdown, collect, expected)


STUDIES = (Theorem1Study(),)
