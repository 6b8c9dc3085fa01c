"""The scales a table runs at: the paper's, a small one for real text on 2 cores, a tiny one that proves the pipeline.

`paper` is the paper's recipe (BERT's): 24 layers; pre-training with batch
1024, 450k steps at sequence length 128 (5k warm-up) then 50k at 512 from the
stage-1 weights (3k re-warm-up), Adam at 1e-4 with weight decay 0.01, dropout
0.1; fine-tuning with the original BERT recipes for MNLI (128 tokens, batch
32, 2e-5, 3 epochs) and SQuAD v1.1 (384 tokens, stride 128, batch 24, 3e-5, 2
epochs).

`tiny` shrinks every row the same way: 2 layers, d/8, d_p/8 (when the row
fixes it), I/8, the heads unchanged; pre-training 100 + 20 steps of batch 32
at lengths 64 and 128, fine-tuning half an epoch on the sample sets (MNLI at
64 tokens, SQuAD at 96). It shows that
every stage runs and its numbers land in the tables, not the paper's
findings: a 2-layer model trained for seconds on a few hundred kilobytes of
docstrings says nothing about 24-layer BERT.

`small` is sized for Table 2B on real English text on 2 CPU cores, in hours:
2 layers, d, I, d_p and the sequence length divided by 4 (d = 128, h = 8,
I = 1024; d_p = 8, 16, 32, 64 against n = 32, the same ratios d_p/n as the
paper's 32..256 against 128). The vocabulary is learned from the corpus
(at most 6000 WordPiece entries, what two books support) unless --vocab_file
is given; one pre-training stage of 10000 steps of batch 64 (1000 warm-up), three
pre-training seeds per row, the masked LM evaluated on held-out text
(--eval_corpus) at every checkpoint and set against the unigram baseline.
Fine-tuning runs only when --mnli_dir / --squad_dir are given.
"""

import dataclasses
from typing import Optional

import modeling
from studies.bert_tables import experiments

PRETRAINING_SEED = 12345


@dataclasses.dataclass(frozen=True)
class PretrainingStage:
    """One pre-training stage: its data and schedule."""

    name: str
    max_seq_length: int
    max_predictions_per_seq: int
    num_train_steps: int
    num_warmup_steps: int


@dataclasses.dataclass(frozen=True)
class Scale:
    """How big every row is and how long it trains."""

    name: str
    num_layers: int
    shrink: int  # d, d_p and I are divided by it.
    train_batch_size: int
    learning_rate: float
    stages: tuple
    save_checkpoints_steps: int
    dupe_factor: int
    mnli: dict  # run_classifier flags.
    squad: dict  # run_squad flags.
    default_num_seeds: int
    max_eval_steps: int
    pretraining_seeds: tuple = (PRETRAINING_SEED,)  # run_pretraining --random_seed of each row's runs.
    held_out: bool = False  # The masked LM is evaluated on --eval_corpus, which the scale needs,
    held_out_batch_size: int = 32  # in batches of this many sequences.
    # Without --vocab_file, a WordPiece vocabulary of at most this many entries is learned from --corpus.
    learned_vocab_size: Optional[int] = None
    minutes: Optional[dict] = None  # {experiment: wall-clock minutes measured on 2 CPU cores}.
    parallel_runs: int = 1  # runs at once by default (--parallel_runs), at most one per core: measured
    # per family on 2 cores, docs/performance.md#runs-side-by-side

    def config(self, row, vocab_size, max_position_embeddings=512):
        """The row's BertConfig at this scale."""
        head_size = row.head_size // self.shrink if row.head_size else None
        return modeling.BertConfig(
            vocab_size=vocab_size, hidden_size=row.hidden_size // self.shrink,
            num_hidden_layers=self.num_layers, num_attention_heads=row.num_heads,
            intermediate_size=row.intermediate_size // self.shrink, head_size=head_size,
            hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
            max_position_embeddings=max_position_embeddings, type_vocab_size=2, initializer_range=0.02)


PAPER = Scale(
    name="paper", num_layers=experiments.NUM_LAYERS, shrink=1, train_batch_size=1024, learning_rate=1e-4,
    stages=(PretrainingStage("pretrain_128", 128, 20, 450000, 5000),
            PretrainingStage("pretrain_512", 512, 80, 50000, 3000)),
    save_checkpoints_steps=10000, dupe_factor=10,
    mnli=dict(max_seq_length=128, train_batch_size=32, learning_rate=2e-5, num_train_epochs=3.0),
    squad=dict(max_seq_length=384, doc_stride=128, train_batch_size=24, learning_rate=3e-5,
               num_train_epochs=2.0),
    default_num_seeds=3, max_eval_steps=100,
)

TINY = Scale(
    name="tiny", num_layers=2, shrink=8, train_batch_size=32, learning_rate=1e-3,
    stages=(PretrainingStage("pretrain_128", 64, 10, 100, 10),
            PretrainingStage("pretrain_512", 128, 20, 20, 2)),
    save_checkpoints_steps=1000, dupe_factor=2,
    mnli=dict(max_seq_length=64, train_batch_size=32, learning_rate=5e-4, num_train_epochs=0.5),
    squad=dict(max_seq_length=96, doc_stride=48, max_query_length=32, train_batch_size=32,
               learning_rate=5e-4, num_train_epochs=0.5),
    default_num_seeds=1, max_eval_steps=20,
)

SMALL = Scale(
    name="small", num_layers=2, shrink=4, train_batch_size=64, learning_rate=1e-3,
    stages=(PretrainingStage("pretrain_32", 32, 5, 10000, 1000),),
    save_checkpoints_steps=500, dupe_factor=5,
    mnli=dict(max_seq_length=64, train_batch_size=32, learning_rate=1e-4, num_train_epochs=1.0),
    squad=dict(max_seq_length=128, doc_stride=64, max_query_length=32, train_batch_size=32, learning_rate=1e-4,
               num_train_epochs=1.0),
    default_num_seeds=1, max_eval_steps=100, pretraining_seeds=(1, 2, 3), held_out=True, learned_vocab_size=6000,
)

SCALES = {s.name: s for s in (PAPER, TINY, SMALL)}
