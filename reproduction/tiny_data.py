"""The text of --scale=tiny, made on the machine as `make demo` makes its own.

The demo's sample corpus (the standard library's docstrings, one sentence per
line). Deterministic: made once per directory and reused (the demo's data
serves too). Each study builds what else it needs from it.
"""

import os

from reproduction import sample_data


def make_corpus(data_dir):
    """Makes (or finds) the sample corpus in data_dir; returns its path."""
    corpus = os.path.join(data_dir, "corpus.txt")
    os.makedirs(data_dir, exist_ok=True)
    # Each piece appears only when complete (the builders write in place, so build into place last).
    if not os.path.exists(corpus):
        sample_data.build_corpus(corpus + ".incomplete")
        os.replace(corpus + ".incomplete", corpus)
    return corpus
