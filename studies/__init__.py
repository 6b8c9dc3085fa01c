"""Every experiment reproduce_paper_tables.py runs, by name, and its flags.

Each study is a folder of this package, with its experiments, plan, report
and a README giving its command and where its results are: `bert_tables`
(paper 1's BERT tables and figure), `lm` (paper 1's language-model figures
and paper 2's language-model study), `lm_sequence_length` (the head
size against the sequence length, beyond paper 1), `freezing_nmt` (paper 2's translation
study), `theorem1`. A study implements `reproduction.study.Study` and declares
the flags it reads (`Study.options`). This package is the one place that lists
them, above both the engine and the model families: a new experiment is a new
folder plus one line in STUDIES, its flags included.
"""

from reproduction import driver
from reproduction.registry import Registry
from studies.bert_tables import study as bert_tables
from studies.freezing_nmt import study as freezing_nmt
from studies.lm import study as lm
from studies.lm_sequence_length import study as lm_sequence_length
from studies.theorem1 import study as theorem1

STUDIES = Registry([
    *bert_tables.STUDIES,  # table1, table2a, table2b, figure2
    *lm.STUDIES,  # lm_figure1, lm_figure3a, lm_figure3b, lm_figure4, freezing_lm
    *lm_sequence_length.STUDIES,  # lm_sequence_length
    *freezing_nmt.STUDIES,  # freezing_nmt
    *theorem1.STUDIES,  # theorem1
])

# The reproduce_paper_tables.py flags: the engine's, --experiment, then every study's own.
ReproduceOptions = driver.options_class(STUDIES)


def run(options):
    """Plans, runs and reports the experiment of `options` (see reproduction.driver.run)."""
    return driver.run(options, STUDIES)
