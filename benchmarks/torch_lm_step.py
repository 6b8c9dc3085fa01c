"""The PyTorch peer of the language-model benchmark: the same causal Transformer LM in torch.nn, torch.compile.

Run by `lm_benchmark.py` as a child process, in any interpreter that has torch
(`--torch_python`; not the project's .venv necessarily), and driven like the
TensorFlow children (child_protocol.py): it prints "@@bench ready ...", then
runs one round (`steps_per_round` training steps) per "run" line on stdin,
printing "@@bench round <seconds> <mean loss>", and "@@bench memory ..." on
"quit".

The model has the shape of our `lm/model.py` (`TransformerLm`), written with
torch.nn building blocks:
  - learned token and position embeddings (nn.Embedding), summed, dropout;
  - per layer, pre-LayerNorm (epsilon 1e-6, as tensor2tensor): LayerNorm ->
    separate Q, K, V projections d -> h*d_p (nn.Linear with bias; d_p is any
    head size, independent of d/h) -> F.scaled_dot_product_attention(
    is_causal=True, dropout on the probabilities, scale 1/sqrt(d_p)) -> the
    output projection h*d_p -> d -> dropout -> residual; LayerNorm -> FFN
    (d -> FFN, the activation, FFN -> d) -> dropout -> residual;
  - a final LayerNorm and an output layer tied to the token embeddings, with
    its own bias;
  - dropout 0.1 everywhere ours has it; weights drawn from a truncated normal
    of stddev 0.02 (biases 0, LayerNorm 1 and 0), as ours with the "bert"
    initializer.
`is_causal=True` alone, without the padding mask ours also applies: padding
is only at the end of a sequence, so a real query never sees a padded key
either way; padded queries differ, and their loss weight is 0.

The loss is ours: the mean cross entropy (in float32) of the real target
tokens. The optimizer is torch.optim.AdamW with our settings as far as torch
goes: beta1 0.9, beta2 0.999, epsilon 1e-6, decoupled weight decay 0.01 on
the matrices and embeddings (not on LayerNorm parameters and biases, as ours
excludes by name), gradients clipped to a global norm of 1.0, our learning
rate schedule (linear warm-up, then linear decay to 0), set before each step.
What differs: torch's Adam always bias-corrects m and v, while ours (the
original BERT optimizer) does not; the update is otherwise the same formula.

The training step is compiled with torch.compile in two functions (the
backward would be a graph break in one): the loss (forward, and through
AOTAutograd its backward; `loss.backward()` runs the compiled backward) and
the update (clipping and the optimizer's step, with the learning rate a
tensor so that its changes do not recompile). bfloat16 runs the forward under
torch.autocast("cpu", dtype=torch.bfloat16), with float32 weights and a
float32 loss, as our mixed bfloat16. The first step's rate, 0 in ours, is
1e-12 here: compiled AdamW divides by the rate (a rate of 0 turns the weights
of rows without gradient into NaN). The batches are the TensorFlow
contenders' (`lm_batches`).

Usage (normally by lm_benchmark.py):
  python benchmarks/torch_lm_step.py --dtype=float32 --spec='{"num_layers": 3, ...}'
"""

import argparse
import itertools
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import child_protocol  # noqa: E402  pylint: disable=wrong-import-position
import lm_batches  # noqa: E402  pylint: disable=wrong-import-position

LAYER_NORM_EPSILON = 1e-6
ACTIVATIONS = dict(relu=F.relu, gelu=F.gelu)


class Block(nn.Module):
    """One pre-LayerNorm layer: causal self-attention of h heads of size d_p, then the FFN."""

    def __init__(self, spec):
        super().__init__()
        d, projection = spec["hidden_size"], spec["num_heads"] * spec["head_size"]
        self.num_heads, self.head_size = spec["num_heads"], spec["head_size"]
        self.dropout = spec["dropout"]
        self.activation = ACTIVATIONS[spec["hidden_act"]]
        self.attention_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPSILON)
        self.query = nn.Linear(d, projection)
        self.key = nn.Linear(d, projection)
        self.value = nn.Linear(d, projection)
        self.attention_output = nn.Linear(projection, d)
        self.ffn_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPSILON)
        self.intermediate = nn.Linear(d, spec["intermediate_size"])
        self.output = nn.Linear(spec["intermediate_size"], d)

    def _heads(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_size).transpose(1, 2)

    def forward(self, x):
        batch, length, _ = x.shape
        y = self.attention_norm(x)
        context = F.scaled_dot_product_attention(
            self._heads(self.query(y)), self._heads(self.key(y)), self._heads(self.value(y)),
            dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        context = context.transpose(1, 2).reshape(batch, length, self.num_heads * self.head_size)
        x = x + F.dropout(self.attention_output(context), self.dropout, self.training)
        y = self.output(self.activation(self.intermediate(self.ffn_norm(x))))
        return x + F.dropout(y, self.dropout, self.training)


class TransformerLm(nn.Module):
    """Embeddings, the layers, a final LayerNorm, the tied output layer: logits [batch, T, V]."""

    def __init__(self, spec):
        super().__init__()
        d = spec["hidden_size"]
        self.dropout = spec["dropout"]
        self.word_embeddings = nn.Embedding(spec["vocab_size"], d)
        self.position_embeddings = nn.Embedding(spec["max_position_embeddings"], d)
        self.layers = nn.ModuleList(Block(spec) for _ in range(spec["num_layers"]))
        self.final_norm = nn.LayerNorm(d, eps=LAYER_NORM_EPSILON)
        self.output_bias = nn.Parameter(torch.zeros(spec["vocab_size"]))
        stddev = spec["initializer_range"]
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.trunc_normal_(module.weight, std=stddev, a=-2 * stddev, b=2 * stddev)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, input_ids):
        length = input_ids.shape[1]
        x = self.word_embeddings(input_ids) + self.position_embeddings.weight[:length]
        x = F.dropout(x, self.dropout, self.training)
        for layer in self.layers:
            x = layer(x)
        return F.linear(self.final_norm(x), self.word_embeddings.weight, self.output_bias)


def learning_rate(spec, step):
    """Ours (training/optimization.py, "linear"): warm-up to the rate, then linear decay to 0."""
    rate, warmup, total = spec["learning_rate"], spec["num_warmup_steps"], spec["num_train_steps"]
    if step < warmup:
        return rate * step / warmup
    return rate * max(0.0, 1.0 - step / total)


def build(spec, dtype):
    """(step function: batch -> loss, the model, the batches as tensors)."""
    torch.manual_seed(spec["seed"])
    model = TransformerLm(spec)
    model.train()
    # Ours excludes LayerNorm parameters and biases from the decay by name: here, the 1-D parameters.
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=torch.tensor(0.0), betas=(0.9, 0.999), eps=1e-6)
    parameters = list(model.parameters())
    arrays = lm_batches.make_batches(spec["seed"], spec["batch_size"], spec["seq_length"], spec["vocab_size"])
    batches = [{name: torch.from_numpy(np.ascontiguousarray(arrays[name][i])).long()
                for name in ("input_ids", "target_ids", "input_mask")}
               for i in range(lm_batches.NUM_BATCHES)]
    autocast = dtype == "bfloat16"

    def loss_of(batch):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = model(batch["input_ids"])
        per_token = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                                    batch["target_ids"].reshape(-1), reduction="none")
        weights = batch["input_mask"].reshape(-1).float()
        return (per_token * weights).sum() / weights.sum().clamp(min=1.0)

    def update():
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()

    compiled_loss, compiled_update = torch.compile(loss_of), torch.compile(update)
    counter = itertools.count()

    def step(batch):
        # Ours reads the step count before its increment: the first step's rate is 0. Compiled
        # AdamW divides by the rate (a tensor), which turns 0 into NaN weights: at least 1e-12.
        rate = max(learning_rate(spec, next(counter)), 1e-12)
        for group in optimizer.param_groups:
            group["lr"].fill_(rate)
        loss = compiled_loss(batch)
        loss.backward()
        compiled_update()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step, model, batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", required=True, help="The model, batch and schedule as JSON "
                        "(lm_benchmark.py's child spec).")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = parser.parse_args()
    spec = json.loads(args.spec)

    start = time.perf_counter()
    step, model, batches = build(spec, args.dtype)
    next_batch = itertools.cycle(batches).__next__

    def run_round():
        total = 0.0
        for _ in range(spec["steps_per_round"]):
            total = total + step(next_batch())
        return float(total) / spec["steps_per_round"]  # float() waits for the last step.

    child_protocol.serve(lambda: child_protocol.timed(run_round),
                         sum(p.numel() for p in model.parameters()), time.perf_counter() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
