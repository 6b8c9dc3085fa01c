"""The PyTorch peers of the turn-taking benchmarks, each a child process run by --torch_python's interpreter.

Any interpreter with torch and transformers runs this script (not the project's .venv necessarily:
it needs neither TensorFlow nor absl), with the request of harness.peer_command, and answers the
parent as the TensorFlow children do (child.py). The request's contender names the peer (PEERS).
Every peer reads the TensorFlow contenders' random batches (child.py), cycled from the first;
bfloat16 runs the forward pass under torch.autocast("cpu", dtype=torch.bfloat16) with float32
weights and a float32 loss, as our mixed bfloat16.
"""

import itertools
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
import transformers
from torch import nn

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from benchmarks import child  # noqa: E402  pylint: disable=wrong-import-position


def _autocast(dtype):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16")


def _cycled(arrays):
    """() -> the next of the NUM_BATCHES batches as tensors (integers as int64), from the first."""
    def tensor(array):
        value = torch.from_numpy(np.ascontiguousarray(array))
        return value if array.dtype == np.float32 else value.long()

    return itertools.cycle([{name: tensor(array[i]) for name, array in arrays.items()}
                            for i in range(child.NUM_BATCHES)]).__next__


def _parameters(parameters):
    return sum(parameter.numel() for parameter in parameters)


def _bert_config(spec):
    return transformers.BertConfig(vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
                                   num_hidden_layers=spec["num_layers"], num_attention_heads=spec["num_heads"],
                                   intermediate_size=spec["intermediate_size"], max_position_embeddings=512)


def encoder_forward(spec, dtype):
    """inference_benchmark's peer: Hugging Face BertModel under torch.compile and torch.inference_mode.

    One round is `forward_calls` forward passes of one batch, the sequence and pooled outputs returned
    as float32, as the TensorFlow contenders do.
    """
    torch.manual_seed(spec["model_seed"])
    model = transformers.BertModel(_bert_config(spec)).eval()
    batch = child.pretraining_batches(spec["model_seed"], spec["batch_size"], spec["seq_length"], 1, spec["vocab_size"])
    inputs = [torch.from_numpy(batch[name][0]).long() for name in ("input_ids", "input_mask", "segment_ids")]

    def forward(input_ids, input_mask, segment_ids):
        with _autocast(dtype):
            sequence, pooled = model(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids,
                                     return_dict=False)[:2]
        return sequence.float(), pooled.float()

    compiled = torch.compile(forward)

    def run_round():
        with torch.inference_mode():
            for _ in range(spec["forward_calls"]):
                sequence, _ = compiled(*inputs)
        return float(sequence[0, 0, 0])

    return run_round, _parameters(model.parameters())


def pretraining_step(spec, dtype):
    """pretraining_step_benchmark's peer: Hugging Face BertForPreTraining, torch.compile.

    Its masked-LM head applied to the masked positions only (as ours and the original do, not to every
    position), the original's losses (weighted masked-LM cross entropy + next-sentence cross
    entropy), torch.optim.AdamW (weight decay 0.01 but on LayerNorm and biases, epsilon 1e-6),
    gradients clipped to norm 1.0; the forward pass and the loss compiled. One round is
    `steps_per_round` steps; it reports the last step's loss.
    """
    torch.manual_seed(spec["model_seed"])
    model = transformers.BertForPreTraining(_bert_config(spec))
    model.train()
    decay = [p for n, p in model.named_parameters() if "LayerNorm" not in n and "bias" not in n]
    no_decay = [p for n, p in model.named_parameters() if "LayerNorm" in n or "bias" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=1e-4, eps=1e-6)
    next_batch = _cycled(child.pretraining_batches(spec["model_seed"], spec["train_batch_size"], spec["seq_length"],
                                                   spec["max_predictions_per_seq"], spec["vocab_size"]))

    def loss_of(batch):
        with _autocast(dtype):
            sequence, pooled = model.bert(input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                                          token_type_ids=batch["segment_ids"], return_dict=False)[:2]
            positions = batch["masked_lm_positions"]
            gathered = sequence.gather(1, positions.unsqueeze(-1).expand(-1, -1, sequence.shape[-1]))
            scores = model.cls.predictions(gathered).float()
            next_sentence = model.cls.seq_relationship(pooled).float()
        weights = batch["masked_lm_weights"].reshape(-1)
        per_prediction = F.cross_entropy(scores.reshape(-1, scores.shape[-1]), batch["masked_lm_ids"].reshape(-1),
                                         reduction="none")
        masked_lm = (per_prediction * weights).sum() / (weights.sum() + 1e-5)
        return masked_lm + F.cross_entropy(next_sentence, batch["next_sentence_labels"].reshape(-1))

    compiled_loss = torch.compile(loss_of)

    def run_round():
        for _ in range(spec["steps_per_round"]):
            loss = compiled_loss(next_batch())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        return float(loss.detach())

    return run_round, _parameters(model.parameters())


class _LmBlock(nn.Module):
    """One pre-LayerNorm layer: causal self-attention of h heads of size d_p, then the FFN."""

    def __init__(self, spec):
        super().__init__()
        d, projection = spec["hidden_size"], spec["num_heads"] * spec["head_size"]
        self.num_heads, self.head_size = spec["num_heads"], spec["head_size"]
        self.dropout = spec["dropout"]
        self.activation = dict(relu=F.relu, gelu=F.gelu)[spec["hidden_act"]]
        self.attention_norm = nn.LayerNorm(d, eps=1e-6)
        self.query = nn.Linear(d, projection)
        self.key = nn.Linear(d, projection)
        self.value = nn.Linear(d, projection)
        self.attention_output = nn.Linear(projection, d)
        self.ffn_norm = nn.LayerNorm(d, eps=1e-6)
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


class _TransformerLm(nn.Module):
    """Embeddings, the layers, a final LayerNorm, the tied output layer: logits [batch, T, V]."""

    def __init__(self, spec):
        super().__init__()
        d = spec["hidden_size"]
        self.dropout = spec["dropout"]
        self.word_embeddings = nn.Embedding(spec["vocab_size"], d)
        self.position_embeddings = nn.Embedding(spec["max_position_embeddings"], d)
        self.layers = nn.ModuleList(_LmBlock(spec) for _ in range(spec["num_layers"]))
        self.final_norm = nn.LayerNorm(d, eps=1e-6)
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


def _lm_learning_rate(spec, step):
    """Ours (training/optimization.py, "linear"): warm-up to the rate, then linear decay to 0."""
    rate, warmup, total = spec["learning_rate"], spec["num_warmup_steps"], spec["num_train_steps"]
    if step < warmup:
        return rate * step / warmup
    return rate * max(0.0, 1.0 - step / total)


def lm_step(spec, dtype):
    """lm_benchmark's peer: the causal Transformer LM of lm/model.py (TransformerLm) in torch.nn, torch.compile.

    Learned token and position embeddings, summed, dropout; per layer, pre-LayerNorm (epsilon 1e-6,
    as tensor2tensor), separate Q, K, V projections d -> h*d_p with bias (d_p independent of d/h),
    scaled_dot_product_attention(is_causal=True) with dropout on the probabilities, the output
    projection, dropout, residual; LayerNorm, the FFN, dropout, residual; a final LayerNorm and an
    output layer tied to the token embeddings with its own bias; weights from a truncated normal of
    stddev 0.02 (biases 0), as ours with the "bert" initializer. `is_causal` alone, without ours'
    padding mask: padding only ends a sequence, so a real query never sees a padded key either way.

    The loss is ours (the mean float32 cross entropy of the real target tokens); torch.optim.AdamW with
    our settings as far as torch goes (beta2 0.999, epsilon 1e-6, decay 0.01 on the matrices and
    embeddings, clipping at 1.0, our warm-up + linear decay set before each step); torch always
    bias-corrects, ours (the original BERT optimizer) does not. Compiled in two functions (the
    backward would be a graph break in one): the loss (with its backward, through AOTAutograd) and
    the update (the rate a tensor, so that its changes do not recompile). The first step's rate, 0 in
    ours, is 1e-12 here: compiled AdamW divides by it (a rate of 0 turns rows without gradient into
    NaN). One round is `steps_per_round` steps; it reports their mean loss.
    """
    torch.manual_seed(spec["seed"])
    model = _TransformerLm(spec)
    model.train()
    # Ours excludes LayerNorm parameters and biases from the decay by name: here, the 1-D parameters.
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=torch.tensor(0.0), betas=(0.9, 0.999), eps=1e-6)
    parameters = list(model.parameters())
    next_batch = _cycled(child.lm_batches(spec["seed"], spec["batch_size"], spec["seq_length"], spec["vocab_size"]))

    def loss_of(batch):
        with _autocast(dtype):
            logits = model(batch["input_ids"])
        per_token = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), batch["target_ids"].reshape(-1),
                                    reduction="none")
        weights = batch["input_mask"].reshape(-1).float()
        return (per_token * weights).sum() / weights.sum().clamp(min=1.0)

    def update():
        torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()

    compiled_loss, compiled_update = torch.compile(loss_of), torch.compile(update)
    counter = itertools.count()

    def run_round():
        total = 0.0
        for _ in range(spec["steps_per_round"]):
            # Ours reads the step count before its increment: the first step's rate is 0.
            rate = max(_lm_learning_rate(spec, next(counter)), 1e-12)
            for group in optimizer.param_groups:
                group["lr"].fill_(rate)
            loss = compiled_loss(next_batch())
            loss.backward()
            compiled_update()
            optimizer.zero_grad(set_to_none=True)
            total = total + loss.detach()
        return float(total) / spec["steps_per_round"]  # float() waits for the last step.

    return run_round, _parameters(parameters)


class DecodedLengthError(AssertionError):
    """generate stopped before the maximum length."""


def translation_step(spec, dtype):
    """nmt_benchmark's peer: Hugging Face MarianMTModel of the benchmark's shape, its part ("train" or "decode").

    MarianConfig: d_model, encoder and decoder layers, heads (head size d_model / heads), FFN width,
    vocabulary; post-norm (Marian's only layout), ReLU, sinusoidal positions, embeddings scaled by
    sqrt(d_model), one embedding table shared by source, target and the output layer; dropout 0.1 on
    embeddings, sub-layer outputs and attention probabilities, none inside the FFN (as ours). Marian's
    output bias is a buffer of zeros, not trained; ours trains one. Marian's initialisation, untrained.

    train: one round is `steps_per_round` steps, each on the next batch: the encoder on source_ids
    with their padding mask, the decoder on target_input_ids (causal mask only, as ours), cross
    entropy with label smoothing 0.1 against target_ids, padding ignored, the mean over real target
    tokens; torch.optim.Adam (0.9, 0.98, eps 1e-9, fused) at a constant rate. The forward pass and the
    loss are one function under torch.compile; the optimizer step runs eagerly (the fused kernel).
    The round reports its mean loss.

    decode: one round is `model.generate` of the decoding sentences under torch.inference_mode, in
    Hugging Face's default way (eager, dynamic key/value cache): beam search of `beam` beams,
    `length_penalty`, `decode_length` new tokens, decoder start id bos. Neither the model's config nor
    the generation config has an eos id (Marian's defaults would force id 0 at the last step), so every
    beam runs the full length, as the TensorFlow contenders do with their unreachable eos; the round
    checks that the output has 1 + decode_length columns and reports the decoded length.
    """
    sizes = spec["model"]
    torch.manual_seed(spec["seed"])
    model = transformers.MarianMTModel(transformers.MarianConfig(
        vocab_size=sizes["vocab_size"], d_model=sizes["hidden_size"],
        encoder_layers=sizes["num_encoder_layers"], decoder_layers=sizes["num_decoder_layers"],
        encoder_attention_heads=sizes["num_heads"], decoder_attention_heads=sizes["num_heads"],
        encoder_ffn_dim=sizes["intermediate_size"], decoder_ffn_dim=sizes["intermediate_size"],
        activation_function="relu", dropout=0.1, attention_dropout=0.1, activation_dropout=0.0,
        max_position_embeddings=max(512, spec["source"], spec["target"], spec["decode_length"] + 1),
        scale_embedding=True, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        pad_token_id=child.PAD_ID, decoder_start_token_id=child.BOS_ID, bos_token_id=child.BOS_ID,
        eos_token_id=None, forced_eos_token_id=None))
    shared = model.model.shared.weight
    if not (model.lm_head.weight is shared and model.model.decoder.embed_tokens.weight is shared
            and model.model.encoder.embed_tokens.weight is shared):
        raise ValueError("MarianMTModel's embeddings are not tied as configured.")
    # Not the sinusoidal position tables, which Marian keeps as frozen parameters.
    trained = [parameter for parameter in model.parameters() if parameter.requires_grad]
    if spec["part"] == "train":
        next_batch = _cycled(child.translation_batches(spec["seed"], sizes["vocab_size"], spec["batch"],
                                                       spec["source"], spec["target"]))
        model.train()
        optimizer = torch.optim.Adam(trained, lr=3e-4, betas=(0.9, 0.98), eps=1e-9, fused=True)

        def loss_of(source_ids, target_input_ids, target_ids):
            with _autocast(dtype):
                logits = model(input_ids=source_ids, attention_mask=(source_ids != child.PAD_ID).long(),
                               decoder_input_ids=target_input_ids, use_cache=False).logits
            return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), target_ids.reshape(-1),
                                   ignore_index=child.PAD_ID, label_smoothing=0.1)

        compiled_loss = torch.compile(loss_of)

        def run_round():
            total = 0.0
            for _ in range(spec["steps_per_round"]):
                batch = next_batch()
                loss = compiled_loss(batch["source_ids"], batch["target_input_ids"], batch["target_ids"])
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                total += float(loss.detach())
            return total / spec["steps_per_round"]

        return run_round, _parameters(trained)

    source_ids = torch.from_numpy(child.decode_sources(spec["seed"], sizes["vocab_size"], spec["decode_batch"],
                                                       spec["source"])).long()
    attention_mask = (source_ids != child.PAD_ID).long()
    model.eval()
    generation_config = transformers.GenerationConfig(
        num_beams=spec["beam"], do_sample=False, length_penalty=spec["length_penalty"],
        max_new_tokens=spec["decode_length"], num_return_sequences=1, decoder_start_token_id=child.BOS_ID,
        bos_token_id=child.BOS_ID, pad_token_id=child.PAD_ID, eos_token_id=None, forced_eos_token_id=None,
        use_cache=True)

    def decode():
        with torch.inference_mode(), _autocast(dtype):
            ids = model.generate(input_ids=source_ids, attention_mask=attention_mask,
                                 generation_config=generation_config)
        if tuple(ids.shape) != (spec["decode_batch"], spec["decode_length"] + 1):
            raise DecodedLengthError("generate returned ids of shape %s, not [%d, 1 + %d]: the search stopped early."
                                     % (tuple(ids.shape), spec["decode_batch"], spec["decode_length"]))
        return ids.shape[1] - 1

    return decode, _parameters(trained)


PEERS = dict(encoder_forward=encoder_forward, pretraining_step=pretraining_step, lm_step=lm_step,
             translation_step=translation_step)


def classify(error):
    """(tag, reason) of an error to report as the peer's failure (out of memory, or torch's errors); None: raised."""
    if isinstance(error, MemoryError) or "can't allocate memory" in str(error):
        return "OOM", "%s: %s" % (type(error).__name__, error)
    if isinstance(error, (RuntimeError, ValueError, TypeError, AssertionError)):
        lines = str(error).strip().splitlines()
        return "failed", "%s: %s" % (type(error).__name__, lines[0] if lines else "")
    return None


def main():
    contender, dtype, spec = child.request()
    child.serve(lambda: PEERS[contender](spec, dtype), classify)


if __name__ == "__main__":
    main()
