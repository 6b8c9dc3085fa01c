"""Micro data and a micro scale, so that tests run a whole experiment in about a minute."""

import dataclasses
import json

import numpy as np

from studies.bert_tables import scales
from studies.bert_tables.plan import DataPaths

WORDS = ["the", "cat", "dog", "sat", "ran", "on", "a", "mat", "big", "small", "red", "blue", "gold"]
CUES = {"entailment": "yes", "contradiction": "no", "neutral": "maybe"}
_MNLI_HEADER = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
                "sentence1_parse\tsentence2_parse\tsentence1\tsentence2\tlabel1\tgold_label")

# One layer, d/16, d_p/16, I/16; a few steps of everything.
MICRO = dataclasses.replace(
    scales.TINY, name="tiny", num_layers=1, shrink=16, train_batch_size=8,
    stages=(scales.PretrainingStage("pretrain_128", 32, 5, 4, 1),
            scales.PretrainingStage("pretrain_512", 48, 6, 2, 1)),
    dupe_factor=1, max_eval_steps=2,
    mnli=dict(max_seq_length=24, train_batch_size=8, learning_rate=1e-3, num_train_epochs=1.0),
    squad=dict(max_seq_length=32, doc_stride=16, max_query_length=8, train_batch_size=8,
               learning_rate=1e-3, num_train_epochs=1.0))
# The small scale's shape (a vocabulary learned from the corpus, one stage, two pre-training seeds, held-out
# text) at MICRO's sizes. The micro corpus yields fewer than 64 tokens: the configs keep 64 rows.
MICRO_SMALL = dataclasses.replace(
    MICRO, name="small", stages=(scales.PretrainingStage("pretrain_32", 32, 5, 4, 1),), pretraining_seeds=(1, 2),
    held_out=True, held_out_batch_size=2, learned_vocab_size=64)


def _mnli_rows(rng, n):
    rows = []
    for i in range(n):
        label = ["contradiction", "entailment", "neutral"][i % 3]
        fields = [str(i), "0", "0", "fiction", "x", "x", "x", "x", " ".join(rng.choice(WORDS, 5)),
                  " ".join([rng.choice(WORDS), CUES[label]]), label, label]
        rows.append("\t".join(fields))
    return rows


def _squad_v1(rng, n, first_id):
    articles = []
    for i in range(n):
        words = list(rng.choice(WORDS[:-1], 8))
        position = rng.randint(0, 8)
        words.insert(position, "gold")
        start = len(" ".join(words[:position])) + (1 if position else 0)
        qa = {"id": "q%d" % (first_id + i), "question": "where is the gold",
              "answers": [{"text": "gold", "answer_start": start}]}
        articles.append({"title": "t%d" % i, "paragraphs": [{"context": " ".join(words), "qas": [qa]}]})
    return {"version": "1.1", "data": articles}


def write_micro_data(root):
    """A corpus, held-out text, a vocabulary, MNLI and SQuAD v1.1 folders under `root` (a pathlib.Path)."""
    rng = np.random.RandomState(0)
    documents = ["\n".join(" ".join(rng.choice(WORDS, 6)) + " ." for _ in range(6)) for _ in range(36)]
    (root / "corpus.txt").write_text("\n\n".join(documents[:30]) + "\n")
    (root / "held_out.txt").write_text("\n\n".join(documents[30:]) + "\n")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."] + WORDS + list(CUES.values()) + ["where", "is"]
    (root / "vocab.txt").write_text("\n".join(vocab) + "\n")
    mnli = root / "MNLI"
    mnli.mkdir()
    for name, n in (("train", 48), ("dev_matched", 12), ("dev_mismatched", 9)):
        (mnli / ("%s.tsv" % name)).write_text("\n".join([_MNLI_HEADER] + _mnli_rows(rng, n)) + "\n")
    squad = root / "squad"
    squad.mkdir()
    (squad / "train-v1.1.json").write_text(json.dumps(_squad_v1(rng, 40, 0)))
    (squad / "dev-v1.1.json").write_text(json.dumps(_squad_v1(rng, 10, 1000)))
    return DataPaths(corpus=str(root / "corpus.txt"), mnli_dir=str(mnli), squad_dir=str(squad),
                     vocab_file=str(root / "vocab.txt"), eval_corpus=str(root / "held_out.txt"))
