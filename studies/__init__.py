"""Every experiment reproduce_paper_tables.py runs, by name, and its flags.

A study lives with its family (`lm/study.py`, `nmt/study.py`, the BERT tables
in `reproduction/bert_tables/`) and implements `reproduction.study.Study`. This
package, above the engine and the families, is the one place that lists them:
a new experiment is a new study file plus one line in STUDIES.
"""

import dataclasses

from lm import study as lm_study
from lm.task import LmTextOptions
from nmt import study as nmt_study
from nmt.task import NmtDataOptions
from options import option
from reproduction import driver
from reproduction.bert_tables import study as bert_tables_study
from reproduction.registry import Registry
from reproduction.theorem1 import study as theorem1_study

STUDIES = Registry([
    *bert_tables_study.STUDIES,  # table1, table2a, table2b, figure2
    *lm_study.STUDIES,  # lm_figure1, lm_figure3a, lm_figure3b, lm_figure4, freezing_lm
    *nmt_study.STUDIES,  # freezing_nmt
    *theorem1_study.STUDIES,  # theorem1
])


@dataclasses.dataclass(kw_only=True)
class ReproduceOptions(driver.ReproduceOptions, bert_tables_study.BertTableOptions, LmTextOptions,
                       NmtDataOptions, theorem1_study.Theorem1Options):
    """The reproduce_paper_tables.py flags: the engine's, then each study's data flags (the lm_* and
    freezing_lm experiments read run_lm.py's text flags, freezing_nmt run_translation.py's data flags,
    theorem1 a checkpoint's)."""

    experiment: str = option(help="The table or figure: %s." % ", ".join(STUDIES.names()),
                             choices=STUDIES.names())


def run(options):
    """Plans, runs and reports the experiment of `options` (see reproduction.driver.run)."""
    return driver.run(options, STUDIES)
