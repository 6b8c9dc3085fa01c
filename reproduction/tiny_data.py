"""The data of --scale=tiny, made on the machine as `make demo` makes its own.

The demo's sample corpus (the standard library's docstrings), its WordPiece
vocabulary, an MNLI-format set and a SQuAD set built from the corpus; SQuAD
v1.1 files are the 2.0 set without its unanswerable questions. Deterministic:
each piece is made once per directory and reused (the demo's data serves too).
"""

import json
import os

from demo import sample_data
from reproduction.plan import DataPaths


def _squad_v1(source, target):
    with open(source, encoding="utf-8") as f:
        data = json.load(f)["data"]
    for article in data:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [qa for qa in paragraph["qas"] if not qa.get("is_impossible")]
            for qa in paragraph["qas"]:
                qa.pop("is_impossible", None)
    with open(target + ".incomplete", "w", encoding="utf-8") as f:
        json.dump({"version": "1.1", "data": data}, f)
    os.replace(target + ".incomplete", target)


def write_squad_v1(squad_dir):
    """train-v1.1.json and dev-v1.1.json beside the sample's 2.0 files (once)."""
    for split in ("train", "dev"):
        target = os.path.join(squad_dir, "%s-v1.1.json" % split)
        if not os.path.exists(target):
            _squad_v1(os.path.join(squad_dir, "%s-v2.0.json" % split), target)


def make_corpus(data_dir):
    """Makes (or finds) the sample corpus in data_dir; returns its path."""
    corpus = os.path.join(data_dir, "corpus.txt")
    os.makedirs(data_dir, exist_ok=True)
    # Each piece appears only when complete (the builders write in place, so build into place last).
    if not os.path.exists(corpus):
        sample_data.build_corpus(corpus + ".incomplete")
        os.replace(corpus + ".incomplete", corpus)
    return corpus


def make(data_dir):
    """Makes (or finds, piece by piece) the tiny data in data_dir; returns its DataPaths."""
    corpus = make_corpus(data_dir)
    vocab = os.path.join(data_dir, "vocab.txt")
    mnli_dir = os.path.join(data_dir, "MNLI")
    squad_dir = os.path.join(data_dir, "squad")
    if not os.path.exists(vocab):
        sample_data.build_vocab(corpus, vocab + ".incomplete")
        os.replace(vocab + ".incomplete", vocab)
    if not os.path.exists(os.path.join(mnli_dir, "dev_mismatched.tsv")):
        sample_data.build_mnli_sample(corpus, mnli_dir)
    if not os.path.exists(os.path.join(squad_dir, "dev-v2.0.json")):
        sample_data.build_squad_sample(corpus, squad_dir)
    write_squad_v1(squad_dir)
    return DataPaths(corpus=corpus, mnli_dir=mnli_dir, squad_dir=squad_dir, vocab_file=vocab)
