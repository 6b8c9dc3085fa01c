"""The experiments of Bhojanapalli et al. (2020), row by row, with the paper's published numbers.

Every row is a 24-layer BERT pre-trained and fine-tuned the same way; rows
differ in the hidden size d, the heads h, the head size d_p (None: the
standard d/h) and the feed-forward width I. The paper does not state I for
its fixed-head-size rows; its parameter counts fix it at 4096 for d = 512
and 3072 for d = 768 (with I = 2048 the 8-head d = 512 model would have 117M
parameters, not 168M).

PAPER numbers are the paper's (dev-set means ± standard deviations over
fine-tuning runs; parameters in millions); they are printed beside ours,
never mixed with them.
"""

import dataclasses
from typing import Optional

NUM_LAYERS = 24


@dataclasses.dataclass(frozen=True)
class PaperResult:
    """A row as the paper publishes it: millions of parameters, (mean, std) per metric."""

    params_m: float
    squad_f1: tuple
    squad_em: tuple
    mnli: tuple


@dataclasses.dataclass(frozen=True)
class Row:
    """One model of a table: its shape, and the paper's numbers when it publishes them."""

    name: str
    hidden_size: int
    num_heads: int
    intermediate_size: int
    head_size: Optional[int] = None
    family: str = ""
    paper: Optional[PaperResult] = None

    @property
    def effective_head_size(self):
        return self.head_size or self.hidden_size // self.num_heads

    def label(self):
        return "d=%d h=%d d_p=%d" % (self.hidden_size, self.num_heads, self.effective_head_size)


@dataclasses.dataclass(frozen=True)
class Experiment:
    """A table or figure: its rows, the column that varies, and how it is drawn."""

    name: str
    title: str
    rows: tuple
    varies: str  # "num_heads", "head_size" or "params" (figure 2: against parameter count)


def _result(params_m, f1, em, mnli):
    return PaperResult(params_m, f1, em, mnli)


TABLE1 = Experiment("table1", "Table 1: BERT-large (d=1024, I=4096), standard head size d/h", (
    Row("h8", 1024, 8, 4096, paper=_result(336, (90.89, 0.15), (84.1, 0.34), (85.0, 0.2))),
    Row("h16", 1024, 16, 4096, paper=_result(336, (90.61, 0.14), (83.75, 0.27), (84.5, 0.4))),
    Row("h32", 1024, 32, 4096, paper=_result(336, (90.45, 0.08), (83.48, 0.13), (84.4, 0.2))),
), varies="num_heads")

TABLE2A = Experiment("table2a", "Table 2A: fixed head size d_p=128, d=512, I=4096, more heads", (
    Row("h8", 512, 8, 4096, 128, paper=_result(168, (89.6, 0.17), (82.73, 0.21), (83.5, 0.2))),
    Row("h12", 512, 12, 4096, 128, paper=_result(193, (90.25, 0.21), (83.18, 0.24), (84.2, 0.2))),
    Row("h16", 512, 16, 4096, 128, paper=_result(218, (90.43, 0.14), (83.59, 0.06), (83.9, 0.2))),
    Row("h32", 512, 32, 4096, 128, paper=_result(319, (90.95, 0.14), (84.4, 0.29), (84.9, 0.2))),
), varies="num_heads")

TABLE2B = Experiment("table2b", "Table 2B: d=512, h=8, I=4096, varying head size d_p", (
    Row("dp32", 512, 8, 4096, 32, paper=_result(130, (88.53, 0.06), (81.19, 0.21), (82.5, 0.1))),
    Row("dp64", 512, 8, 4096, 64, paper=_result(142, (89.51, 0.15), (82.41, 0.32), (83.4, 0.3))),
    Row("dp128", 512, 8, 4096, 128, paper=_result(168, (89.6, 0.17), (82.73, 0.21), (83.5, 0.2))),
    Row("dp256", 512, 8, 4096, 256, paper=_result(218, (90.33, 0.23), (83.36, 0.48), (83.9, 0.2))),
), varies="head_size")

TABLE3 = Experiment("table3", "Table 3: fixed head size d_p=128, d=768, I=3072, more heads", (
    Row("h8", 768, 8, 3072, 128, paper=_result(214, (90.35, 0.14), (83.37, 0.12), (84.4, 0.2))),
    Row("h12", 768, 12, 3072, 128, paper=_result(252, (90.48, 0.09), (83.67, 0.03), (84.4, 0.2))),
    Row("h16", 768, 16, 3072, 128, paper=_result(290, (90.92, 0.14), (84.16, 0.35), (84.7, 0.1))),
    Row("h20", 768, 20, 3072, 128, paper=_result(327, (90.89, 0.08), (84.29, 0.16), (85.1, 0.4))),
), varies="num_heads")

# Figure 2: the fixed family is Table 2A; the baseline grows d at 16 heads of
# size d/h. The paper gives the baseline only as a plot, except d = 1024
# (Table 1's 16-head row); we take I = 4d for it, BERT's rule (an assumption).
FIGURE2 = Experiment("figure2", "Figure 2: standard (16 heads, d from 512 to 1024) vs fixed head size "
                     "(d=512, d_p=128, 8 to 32 heads), against parameter count", tuple(
    [dataclasses.replace(row, name="fixed_" + row.name, family="fixed head size") for row in TABLE2A.rows]
    + [Row("baseline_d%d" % d, d, 16, 4 * d, family="standard",
           paper=TABLE1.rows[1].paper if d == 1024 else None) for d in (512, 768, 1024)]
), varies="params")

EXPERIMENTS = {e.name: e for e in (TABLE1, TABLE2A, TABLE2B, TABLE3, FIGURE2)}


def get(name):
    """The experiment called `name`; ValueError naming the known ones otherwise."""
    if name not in EXPERIMENTS:
        raise ValueError("--experiment=%s is not known; expected one of %s."
                         % (name, ", ".join(EXPERIMENTS)))
    return EXPERIMENTS[name]
