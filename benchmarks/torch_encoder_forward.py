"""The PyTorch peer of the inference benchmark: Hugging Face BertModel, torch.compile.

Run by `inference_benchmark.py` as a child process in any interpreter that has
torch and transformers (`--torch_python`), driven like the TensorFlow children
(child_protocol.py): one round = `--forward_calls` forward passes of one batch
under torch.inference_mode, returning the sequence and pooled outputs as
float32, as the TensorFlow contenders do; bfloat16 through torch.autocast. The
batch is the TensorFlow contenders' (`pretraining_batches`).
"""

import argparse
import os
import sys
import time

import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import child_protocol  # noqa: E402  pylint: disable=wrong-import-position
import pretraining_batches  # noqa: E402  pylint: disable=wrong-import-position


def build(args):
    """(forward of the batch -> (sequence, pooled) float32, model)."""
    torch.manual_seed(args.model_seed)
    config = transformers.BertConfig(
        vocab_size=args.vocab_size, hidden_size=args.hidden_size,
        num_hidden_layers=args.num_layers, num_attention_heads=args.num_heads,
        intermediate_size=args.intermediate_size, max_position_embeddings=512)
    model = transformers.BertModel(config).eval()
    batch = pretraining_batches.make_batches(args.model_seed, args.batch_size, args.seq_length, 1,
                                             args.vocab_size)
    inputs = [torch.from_numpy(batch[name][0]).long()
              for name in ("input_ids", "input_mask", "segment_ids")]
    autocast = args.dtype == "bfloat16"

    def forward(input_ids, input_mask, segment_ids):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            sequence, pooled = model(input_ids=input_ids, attention_mask=input_mask,
                                     token_type_ids=segment_ids, return_dict=False)[:2]
        return sequence.float(), pooled.float()

    compiled = torch.compile(forward)

    def run():
        with torch.inference_mode():
            for _ in range(args.forward_calls):
                sequence, _ = compiled(*inputs)
        return float(sequence[0, 0, 0])

    return run, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("num_layers", "hidden_size", "num_heads", "intermediate_size", "vocab_size",
                 "seq_length", "batch_size", "forward_calls", "model_seed"):
        parser.add_argument("--" + name, type=int, required=True)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    args = parser.parse_args()

    start = time.perf_counter()
    run, model = build(args)
    child_protocol.serve(lambda: child_protocol.timed(run),
                         sum(p.numel() for p in model.parameters()), time.perf_counter() - start)


if __name__ == "__main__":
    main()
