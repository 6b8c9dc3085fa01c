"""The PyTorch peer of the translation benchmark: Hugging Face MarianMTModel, torch.compile.

Run by `nmt_benchmark.py` as a child process, in any interpreter that has
torch and transformers (`--torch_python`; not the project's .venv
necessarily), and driven like the TensorFlow children (translation_child.py):
it prints "@@bench ready ...", runs one round per "run" line on stdin, and
reports its peak memory on "quit".

The model is `transformers.MarianMTModel` built from a `MarianConfig` of the
benchmark's shape: d_model, encoder and decoder layers, heads (head size
d_model / heads), FFN width, vocabulary; post-norm (Marian's only layout),
ReLU, sinusoidal positions, embeddings scaled by sqrt(d_model), one embedding
table shared by source, target and the output layer; dropout 0.1 on
embeddings and sub-layer outputs, 0.1 on attention probabilities, none inside
the FFN (as ours). Marian's output bias (`final_logits_bias`) is a buffer of
zeros, not trained; ours trains one. Weights are Marian's initialisation,
untrained.

--part=train: one round is `--steps_per_round` training steps, each on the
next of the cycled random batches (translation_child.make_batches, the
TensorFlow contenders' batches): encoder on source_ids with their padding
mask, decoder on target_input_ids (causal mask only, as ours), cross entropy
with label smoothing 0.1 against target_ids, padding (id 0) ignored, the mean
over real target tokens; torch.optim.Adam (0.9, 0.98, eps 1e-9, fused) at a
constant learning rate. The forward pass and the loss are one function under
torch.compile (its backward is compiled with it); the optimizer step runs
eagerly (the fused kernel). The round reports its mean loss.

--part=decode: one round is `model.generate` of the decoding sentences
(translation_child.decode_sources) under torch.inference_mode, in
Hugging Face's default way (eager, dynamic key/value cache): beam search with
num_beams=--beam_size, length_penalty=--length_penalty,
max_new_tokens=--decode_length, decoder start id bos (2). Neither the model's
config nor the generation config has an eos id (eos_token_id=None,
forced_eos_token_id=None: Marian's defaults would force id 0 at the last
step), so no hypothesis ever ends and every beam runs the full
--decode_length steps,
as the TensorFlow contenders do with their unreachable eos (-1); the round
checks that the output has 1 + --decode_length columns and reports the
decoded length.

bfloat16: the forward pass (and generate) under torch.autocast("cpu",
dtype=torch.bfloat16), float32 weights, the loss in float32.
"""

import argparse
import itertools
import os
import sys

import numpy as np
import torch
import transformers

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from benchmarks import translation_child  # noqa: E402  pylint: disable=wrong-import-position

LEARNING_RATE = 3e-4
LABEL_SMOOTHING = 0.1


class DecodedLengthError(AssertionError):
    pass


def marian_config(args):
    """The MarianConfig of the benchmark's shape (see the module docstring)."""
    return transformers.MarianConfig(
        vocab_size=args.vocab_size, d_model=args.hidden_size,
        encoder_layers=args.num_encoder_layers, decoder_layers=args.num_decoder_layers,
        encoder_attention_heads=args.num_heads, decoder_attention_heads=args.num_heads,
        encoder_ffn_dim=args.intermediate_size, decoder_ffn_dim=args.intermediate_size,
        activation_function="relu", dropout=0.1, attention_dropout=0.1, activation_dropout=0.0,
        max_position_embeddings=max(512, args.source_length, args.target_length, args.decode_length + 1),
        scale_embedding=True, share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        pad_token_id=translation_child.PAD_ID, decoder_start_token_id=translation_child.BOS_ID,
        bos_token_id=translation_child.BOS_ID, eos_token_id=None, forced_eos_token_id=None)


def build_model(args):
    torch.manual_seed(args.seed)
    model = transformers.MarianMTModel(marian_config(args))
    shared = model.model.shared.weight
    if not (model.lm_head.weight is shared and model.model.decoder.embed_tokens.weight is shared
            and model.model.encoder.embed_tokens.weight is shared):
        raise ValueError("MarianMTModel's embeddings are not tied as configured.")
    return model


def trained_parameters(model):
    """The parameters with gradients: not the sinusoidal position tables, which Marian keeps as frozen parameters."""
    return [parameter for parameter in model.parameters() if parameter.requires_grad]


def autocast(args):
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.dtype == "bfloat16")


def build_training(args, model):
    """run_round(): --steps_per_round training steps; returns their mean loss."""
    arrays = translation_child.make_batches(args.seed, args.vocab_size, args.batch_size, args.source_length,
                                            args.target_length)
    batches = [{name: torch.from_numpy(np.ascontiguousarray(array[i])).long() for name, array in arrays.items()}
               for i in range(translation_child.NUM_BATCHES)]
    next_batch = itertools.cycle(batches).__next__
    model.train()
    optimizer = torch.optim.Adam(trained_parameters(model), lr=LEARNING_RATE, betas=(0.9, 0.98), eps=1e-9,
                                 fused=True)

    def loss_of(source_ids, target_input_ids, target_ids):
        with autocast(args):
            logits = model(input_ids=source_ids, attention_mask=(source_ids != translation_child.PAD_ID).long(),
                           decoder_input_ids=target_input_ids, use_cache=False).logits
        return torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), target_ids.reshape(-1),
            ignore_index=translation_child.PAD_ID, label_smoothing=LABEL_SMOOTHING)

    compiled_loss = torch.compile(loss_of)

    def run_round():
        total = 0.0
        for _ in range(args.steps_per_round):
            batch = next_batch()
            loss = compiled_loss(batch["source_ids"], batch["target_input_ids"], batch["target_ids"])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            total += float(loss.detach())
        return total / args.steps_per_round

    return run_round


def build_decoding(args, model):
    """run_round(): beam search of the decoding sentences; returns the decoded length."""
    source_ids = torch.from_numpy(translation_child.decode_sources(
        args.seed, args.vocab_size, args.decode_batch_size, args.source_length)).long()
    attention_mask = (source_ids != translation_child.PAD_ID).long()
    model.eval()
    generation_config = transformers.GenerationConfig(
        num_beams=args.beam_size, do_sample=False, length_penalty=args.length_penalty,
        max_new_tokens=args.decode_length, num_return_sequences=1,
        decoder_start_token_id=translation_child.BOS_ID, bos_token_id=translation_child.BOS_ID,
        pad_token_id=translation_child.PAD_ID, eos_token_id=None, forced_eos_token_id=None, use_cache=True)

    def run_round():
        with torch.inference_mode(), autocast(args):
            ids = model.generate(input_ids=source_ids, attention_mask=attention_mask,
                                 generation_config=generation_config)
        if tuple(ids.shape) != (args.decode_batch_size, args.decode_length + 1):
            raise DecodedLengthError("generate returned ids of shape %s, not [%d, 1 + %d]: the search stopped "
                                     "early." % (tuple(ids.shape), args.decode_batch_size, args.decode_length))
        return ids.shape[1] - 1

    return run_round


def classify(error):
    """(tag, reason) of an error to report as the contender's failure; None for the others."""
    if isinstance(error, MemoryError) or "can't allocate memory" in str(error):
        return "OOM", "%s: %s" % (type(error).__name__, error)
    if isinstance(error, (RuntimeError, ValueError, TypeError, AssertionError)):
        return "failed", "%s: %s" % (type(error).__name__, str(error).strip().splitlines()[0] if str(error).strip()
                                     else "")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("vocab_size", "hidden_size", "num_encoder_layers", "num_decoder_layers", "num_heads",
                 "intermediate_size", "batch_size", "source_length", "target_length", "steps_per_round",
                 "decode_batch_size", "decode_length", "beam_size", "seed"):
        parser.add_argument("--" + name, type=int, required=True)
    parser.add_argument("--length_penalty", type=float, required=True)
    parser.add_argument("--part", choices=["train", "decode"], required=True)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = parser.parse_args()

    def build():
        model = build_model(args)
        run_round = (build_training if args.part == "train" else build_decoding)(args, model)
        return run_round, sum(parameter.numel() for parameter in trained_parameters(model))

    translation_child.serve(build, classify)


if __name__ == "__main__":
    main()
