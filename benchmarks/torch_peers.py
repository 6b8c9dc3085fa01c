"""The PyTorch peers of the turn-taking benchmarks: child processes run by --torch_python's interpreter.

Needs torch and transformers, neither TensorFlow nor absl. Run with harness.peer_command's request (its
contender names the peer, PEERS), it answers and reads the batches as the TensorFlow children (child.py).
What each peer builds: docs/performance.md, the section of its benchmark.
"""

import itertools
import os
import sys

import torch
import torch.nn.functional as F
import transformers
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import child  # noqa: E402  pylint: disable=wrong-import-position


def _autocast(dtype):
    """bfloat16: the forward pass under autocast, float32 weights and loss, as our mixed bfloat16."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16")


def _tensor(array):
    """A tensor of a NumPy array, integers as int64 (torch's indices)."""
    value = torch.as_tensor(array)
    return value if value.is_floating_point() else value.long()


def _count(parameters):
    return sum(parameter.numel() for parameter in parameters)


def _bert_config(spec):
    return transformers.BertConfig(vocab_size=spec["vocab_size"], hidden_size=spec["hidden_size"],
                                   num_hidden_layers=spec["num_layers"], num_attention_heads=spec["num_heads"],
                                   intermediate_size=spec["intermediate_size"], max_position_embeddings=512)


def _adamw(model, no_decay, **options):
    """torch AdamW with weight decay 0.01 on the parameters but those no_decay(name, parameter) picks."""
    groups = ([], [])
    for name, parameter in model.named_parameters():
        groups[bool(no_decay(name, parameter))].append(parameter)
    return torch.optim.AdamW([dict(params=groups[0], weight_decay=0.01), dict(params=groups[1], weight_decay=0.0)],
                             **options)


def _training(loss_of, arrays, steps, update, before_step=None):
    """run_round: `steps` steps of before_step(index), compiled loss_of(next batch), backward, update(): mean loss.

    The batches are child.py's `arrays` [NUM_BATCHES, ...], cycled from the first."""
    batches = itertools.cycle([{name: _tensor(array[i]) for name, array in arrays.items()}
                               for i in range(child.NUM_BATCHES)])
    compiled, counter = torch.compile(loss_of), itertools.count()

    def run_round():
        total = 0.0
        for _ in range(steps):
            if before_step:
                before_step(next(counter))
            loss = compiled(next(batches))
            loss.backward()
            update()
            total = total + loss.detach()
        return float(total) / steps  # float() waits for the last step.

    return run_round


def encoder_forward(spec, dtype):
    """inference_benchmark's peer: BertModel, compiled, `forward_calls` calls per round under inference_mode."""
    torch.manual_seed(spec["model_seed"])
    model = transformers.BertModel(_bert_config(spec)).eval()
    batch = child.pretraining_batches(spec["model_seed"], spec["batch_size"], spec["seq_length"], 1, spec["vocab_size"])
    inputs = [_tensor(batch[name][0]) for name in ("input_ids", "input_mask", "segment_ids")]

    @torch.compile
    def forward(input_ids, input_mask, segment_ids):
        with _autocast(dtype):
            sequence, pooled = model(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids,
                                     return_dict=False)[:2]
        return sequence.float(), pooled.float()  # fetched as float32, as the TensorFlow contenders'

    def run_round():
        with torch.inference_mode():
            for _ in range(spec["forward_calls"]):
                sequence, _ = forward(*inputs)
        return float(sequence[0, 0, 0])

    return run_round, _count(model.parameters())


def pretraining_step(spec, dtype):
    """pretraining_step_benchmark's peer: BertForPreTraining, the original's losses, AdamW, compiled loss."""
    torch.manual_seed(spec["model_seed"])
    model = transformers.BertForPreTraining(_bert_config(spec)).train()
    optimizer = _adamw(model, lambda name, _: "LayerNorm" in name or "bias" in name, lr=1e-4, eps=1e-6)

    def loss_of(batch):
        with _autocast(dtype):
            sequence, pooled = model.bert(input_ids=batch["input_ids"], attention_mask=batch["input_mask"],
                                          token_type_ids=batch["segment_ids"], return_dict=False)[:2]
            positions = batch["masked_lm_positions"].unsqueeze(-1).expand(-1, -1, sequence.shape[-1])
            scores = model.cls.predictions(sequence.gather(1, positions)).float()  # the masked positions only
            next_sentence = model.cls.seq_relationship(pooled).float()
        weights = batch["masked_lm_weights"].flatten()
        per_prediction = F.cross_entropy(scores.flatten(0, 1), batch["masked_lm_ids"].flatten(), reduction="none")
        masked_lm = (per_prediction * weights).sum() / (weights.sum() + 1e-5)
        return masked_lm + F.cross_entropy(next_sentence, batch["next_sentence_labels"].flatten())

    def update():
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    arrays = child.pretraining_batches(spec["model_seed"], spec["train_batch_size"], spec["seq_length"],
                                       spec["max_predictions_per_seq"], spec["vocab_size"])
    return _training(loss_of, arrays, spec["steps_per_round"], update), _count(model.parameters())


class _LmLayer(nn.Module):
    """Pre-LayerNorm: causal self-attention of h heads of size d_p (separate Q, K, V), then the FFN."""

    def __init__(self, config):
        super().__init__()
        d, ffn, self.heads = config["hidden_size"], config["intermediate_size"], config["num_attention_heads"]
        width, self.dropout = self.heads * (config["head_size"] or d // self.heads), config["hidden_dropout_prob"]
        self.activation = getattr(F, config["hidden_act"])
        self.attention_norm, self.ffn_norm = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
        self.query, self.key, self.value = (nn.Linear(d, width) for _ in range(3))
        self.attention_output = nn.Linear(width, d)
        self.intermediate, self.output = nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x):
        batch, length, _ = x.shape
        y = self.attention_norm(x)
        q, k, v = (p(y).view(batch, length, self.heads, -1).transpose(1, 2) for p in (self.query, self.key, self.value))
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0,
                                                 is_causal=True).transpose(1, 2).reshape(batch, length, -1)
        x = x + F.dropout(self.attention_output(context), self.dropout, self.training)
        y = self.output(self.activation(self.intermediate(self.ffn_norm(x))))
        return x + F.dropout(y, self.dropout, self.training)


class _TransformerLm(nn.Module):
    """lm/model.py's TransformerLm in torch.nn: embeddings, the layers, a final LayerNorm, the tied output layer."""

    def __init__(self, config):
        super().__init__()
        d, self.dropout = config["hidden_size"], config["hidden_dropout_prob"]
        self.word_embeddings = nn.Embedding(config["vocab_size"], d)
        self.position_embeddings = nn.Embedding(config["max_position_embeddings"], d)
        self.layers = nn.ModuleList(_LmLayer(config) for _ in range(config["num_hidden_layers"]))
        self.final_norm = nn.LayerNorm(d, eps=1e-6)
        self.output_bias = nn.Parameter(torch.zeros(config["vocab_size"]))
        stddev = config["initializer_range"]
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.trunc_normal_(module.weight, std=stddev, a=-2 * stddev, b=2 * stddev)
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, input_ids):
        x = self.word_embeddings(input_ids) + self.position_embeddings.weight[:input_ids.shape[1]]
        x = F.dropout(x, self.dropout, self.training)
        for layer in self.layers:
            x = layer(x)
        return F.linear(self.final_norm(x), self.word_embeddings.weight, self.output_bias)  # logits [batch, T, V]


def lm_step(spec, dtype):
    """lm_benchmark's peer: the causal Transformer LM, our loss, AdamW and schedule; compiled loss and update."""
    config = spec["config"]
    if config["attention_probs_dropout_prob"] != config["hidden_dropout_prob"]:
        raise ValueError("The PyTorch LM takes one dropout rate: %s." % config)
    torch.manual_seed(spec["seed"])
    model = _TransformerLm(config).train()
    parameters = list(model.parameters())
    optimizer = _adamw(model, lambda _, parameter: parameter.dim() < 2, lr=torch.tensor(0.0), betas=(0.9, 0.999),
                       eps=1e-6)

    def loss_of(batch):
        with _autocast(dtype):
            logits = model(batch["input_ids"])
        per_token = F.cross_entropy(logits.float().flatten(0, 1), batch["target_ids"].flatten(), reduction="none")
        weights = batch["input_mask"].flatten().float()
        return (per_token * weights).sum() / weights.sum().clamp(min=1.0)

    def set_rate(step):
        """Ours (training/optimization.py, "linear") of the step count before its increment; 1e-12, not 0."""
        rate, warmup = spec["learning_rate"], spec["num_warmup_steps"]
        rate = rate * step / warmup if step < warmup else rate * max(0.0, 1.0 - step / spec["num_train_steps"])
        for group in optimizer.param_groups:
            group["lr"].fill_(max(rate, 1e-12))

    @torch.compile
    def clip_and_step():
        nn.utils.clip_grad_norm_(parameters, 1.0)
        optimizer.step()

    def update():
        clip_and_step()
        optimizer.zero_grad(set_to_none=True)

    arrays = child.lm_batches(spec["seed"], spec["batch_size"], spec["seq_length"], config["vocab_size"])
    return _training(loss_of, arrays, spec["steps_per_round"], update, set_rate), _count(parameters)


def translation_step(spec, dtype):
    """nmt_benchmark's peer: MarianMTModel of the shape; its part "train" (compiled loss, fused Adam) or "decode"."""
    config, seed = spec["config"], spec["seed"]
    torch.manual_seed(seed)
    model = transformers.MarianMTModel(transformers.MarianConfig(
        vocab_size=config["vocab_size"], d_model=config["hidden_size"],
        encoder_layers=config["num_encoder_layers"], decoder_layers=config["num_decoder_layers"],
        encoder_attention_heads=config["num_attention_heads"], decoder_attention_heads=config["num_attention_heads"],
        encoder_ffn_dim=config["intermediate_size"], decoder_ffn_dim=config["intermediate_size"],
        activation_function="relu", dropout=0.1, attention_dropout=0.1, activation_dropout=0.0,
        max_position_embeddings=max(512, spec["source"], spec["target"], spec["decode_length"] + 1),
        scale_embedding=True, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        pad_token_id=child.PAD_ID, decoder_start_token_id=child.BOS_ID, bos_token_id=child.BOS_ID,
        eos_token_id=None, forced_eos_token_id=None))
    if len({id(layer.weight) for layer in (model.model.shared, model.lm_head, model.model.decoder.embed_tokens,
                                           model.model.encoder.embed_tokens)}) != 1:
        raise ValueError("MarianMTModel's embeddings are not tied as configured.")
    trained = [parameter for parameter in model.parameters() if parameter.requires_grad]  # not the sinusoids
    if spec["part"] == "train":
        model.train()
        optimizer = torch.optim.Adam(trained, lr=3e-4, betas=(0.9, 0.98), eps=1e-9, fused=True)

        def loss_of(batch):
            with _autocast(dtype):
                source_ids = batch["source_ids"]
                logits = model(input_ids=source_ids, attention_mask=(source_ids != child.PAD_ID).long(),
                               decoder_input_ids=batch["target_input_ids"], use_cache=False).logits
            return F.cross_entropy(logits.float().flatten(0, 1), batch["target_ids"].flatten(),
                                   ignore_index=child.PAD_ID, label_smoothing=0.1)

        def update():
            optimizer.step()  # eagerly: the fused kernel
            optimizer.zero_grad(set_to_none=True)

        arrays = child.translation_batches(seed, config["vocab_size"], spec["batch"], spec["source"], spec["target"])
        return _training(loss_of, arrays, spec["steps_per_round"], update), _count(trained)

    source_ids = _tensor(child.decode_sources(seed, config["vocab_size"], spec["decode_batch"], spec["source"]))
    model.eval()
    generation_config = transformers.GenerationConfig(
        num_beams=spec["beam"], do_sample=False, length_penalty=spec["length_penalty"],
        max_new_tokens=spec["decode_length"], num_return_sequences=1, decoder_start_token_id=child.BOS_ID,
        bos_token_id=child.BOS_ID, pad_token_id=child.PAD_ID, eos_token_id=None, forced_eos_token_id=None,
        use_cache=True)

    def decode():
        with torch.inference_mode(), _autocast(dtype):
            ids = model.generate(input_ids=source_ids, attention_mask=(source_ids != child.PAD_ID).long(),
                                 generation_config=generation_config)
        if tuple(ids.shape) != (spec["decode_batch"], spec["decode_length"] + 1):
            raise AssertionError("generate returned ids of shape %s, not [%d, 1 + %d]: the search stopped early."
                                 % (tuple(ids.shape), spec["decode_batch"], spec["decode_length"]))
        return ids.shape[1] - 1

    return decode, _count(trained)


PEERS = dict(encoder_forward=encoder_forward, pretraining_step=pretraining_step, lm_step=lm_step,
             translation_step=translation_step)


def classify(error):
    """(tag, reason) of an error to report as the peer's failure (out of memory, or torch's errors); None: raised."""
    if isinstance(error, MemoryError) or "can't allocate memory" in str(error):
        return "OOM", "%s: %s" % (type(error).__name__, error)
    if isinstance(error, (RuntimeError, ValueError, TypeError, AssertionError)):
        return "failed", "%s: %s" % (type(error).__name__, (str(error).strip().splitlines() or [""])[0])
    return None


def main():
    contender, dtype, spec = child.request()
    child.serve(lambda: PEERS[contender](spec, dtype), classify)


if __name__ == "__main__":
    main()
