"""The PyTorch peer of the pre-training step benchmark: Hugging Face BERT, torch.compile.

Run by `pretraining_step_benchmark.py` as a child process, in any interpreter
that has torch and transformers (`--torch_python`; not the project's .venv
necessarily), and driven like the TensorFlow children: it prints "@@bench
ready ...", then runs one round (`--steps_per_round` steps) per "run" line on
stdin, printing "@@bench round <seconds> <loss>", and "@@bench memory ..." on
"quit".

The model is `transformers.BertForPreTraining` at the benchmark's shapes, its
masked-LM head applied to the masked positions only (as ours and the original
do, not to every position), the original's losses (weighted masked-LM cross
entropy + next-sentence cross entropy), torch.optim.AdamW (weight decay 0.01,
epsilon 1e-6), gradients clipped to norm 1.0; forward and loss compiled with
torch.compile; bfloat16 through torch.autocast. The batches are the
TensorFlow contenders' (`pretraining_batches`).
"""

import argparse
import itertools
import os
import sys
import time

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import child_protocol  # noqa: E402  pylint: disable=wrong-import-position
import pretraining_batches  # noqa: E402  pylint: disable=wrong-import-position


def build(args):
    """(step function, model, batches): one step trains on one batch and returns the loss."""
    torch.manual_seed(args.model_seed)
    config = transformers.BertConfig(
        vocab_size=args.vocab_size, hidden_size=args.hidden_size,
        num_hidden_layers=args.num_layers, num_attention_heads=args.num_heads,
        intermediate_size=args.intermediate_size, max_position_embeddings=512)
    model = transformers.BertForPreTraining(config)
    model.train()
    decay = [p for n, p in model.named_parameters() if "LayerNorm" not in n and "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "LayerNorm" in n or "bias" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=1e-4, eps=1e-6)
    arrays = pretraining_batches.make_batches(args.model_seed, args.train_batch_size,
                                              args.seq_length, args.max_predictions_per_seq,
                                              args.vocab_size)
    batches = [{name: torch.from_numpy(np.ascontiguousarray(array[i])).long()
                if array.dtype != np.float32 else torch.from_numpy(array[i])
                for name, array in arrays.items()}
               for i in range(pretraining_batches.NUM_BATCHES)]
    autocast = args.dtype == "bfloat16"

    def loss_of(batch):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            sequence, pooled = model.bert(
                input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                token_type_ids=batch["segment_ids"], return_dict=False)[:2]
            positions = batch["masked_lm_positions"]
            gathered = sequence.gather(
                1, positions.unsqueeze(-1).expand(-1, -1, sequence.shape[-1]))
            scores = model.cls.predictions(gathered).float()
            next_sentence = model.cls.seq_relationship(pooled).float()
        weights = batch["masked_lm_weights"].reshape(-1)
        per_prediction = torch.nn.functional.cross_entropy(
            scores.reshape(-1, scores.shape[-1]), batch["masked_lm_ids"].reshape(-1),
            reduction="none")
        masked_lm = (per_prediction * weights).sum() / (weights.sum() + 1e-5)
        return masked_lm + torch.nn.functional.cross_entropy(
            next_sentence, batch["next_sentence_labels"].reshape(-1))

    compiled_loss = torch.compile(loss_of)

    def step(batch):
        loss = compiled_loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step, model, batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size",
                 "seq_length", "max_predictions_per_seq", "train_batch_size", "steps_per_round",
                 "model_seed"):
        parser.add_argument("--" + name, type=int, required=True)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = parser.parse_args()

    start = time.perf_counter()
    step, model, batches = build(args)
    next_batch = itertools.cycle(batches).__next__

    def steps():
        for _ in range(args.steps_per_round):
            loss = step(next_batch())
        return float(loss)

    child_protocol.serve(lambda: child_protocol.timed(steps),
                         sum(p.numel() for p in model.parameters()), time.perf_counter() - start)


if __name__ == "__main__":
    main()
