"""What naming the weights costs, on a ~1B-parameter Llama with random weights (issue 46.7 and 46.8):

    python bench/bench_weight_digest.py [--device cuda|cpu] [--dtype bfloat16|float32] [--items 600]
                                        [--batch 256] [--layers 16]

The model: Llama-3.2-1B's shape (hidden 2048, 16 layers, MLP 8192, 32 heads, 8 KV heads, vocabulary 128,256,
tied embeddings: 1.24B parameters), random weights, on `--device` in `--dtype`. It prints, each the median of
its runs:

- `stamp`: the head cache's `weights_stamp` and `pins` over the model's parameter list (what every scorer call
  pays), against one scorer call of `--batch` items;
- `digest full`: `training.benchmarks.weights_digest` with every weight trainable (a full fine-tune), against
  a benchmark pass;
- `digest lora`: the same over LoRA's adapters only (pragexp's defaults: r 8 on q_proj and v_proj), against a
  pass;
- `pass`: a benchmark pass as the benchmark curves run it: `--items` LUDWIG-shaped items (a 0-shot prompt, the
  options " yes" and " no"; LUDWIG's test split has 600), scored by `scorer.score_choices` in calls of
  `--batch` items with the head cache kept across calls (`head_cache`), CUDA synchronised.

The items are tokenised by the test suite's tiny byte-level BPE (320 tokens), which cuts English into more
tokens than a real 128k vocabulary does (tokens per item are printed): the real pass is shorter, so the
digest's real share of it is larger than printed. The machine may be shared: timings are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pragexp.generation.finetuning.finetune import LORA_DEFAULTS, make_trainable  # noqa: E402
from pragexp.generation.scoring.head_cache import HeadCache, pins, weights_stamp  # noqa: E402
from pragexp.generation.scoring.requests import ChoiceRequest  # noqa: E402
from pragexp.generation.scoring.scorer import score_choices  # noqa: E402
from pragexp.pretrained.causal import tiny_causal_lm  # noqa: E402
from pragexp.training.benchmarks import weights_digest  # noqa: E402

QUESTIONS = [
    "Will the train be on time?",
    "Do you want some more soup?",
    "Are you coming to the party tonight?",
]
ANSWERS = [
    "The signals have failed again.",
    "I could not eat another spoonful.",
    "I have to work late, sadly.",
]


def llama_1b(device: str, dtype: torch.dtype, layers: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=128256,
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=layers,
        num_attention_heads=32,
        num_key_value_heads=8,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    )
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = LlamaForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    return model.eval().requires_grad_(False)


def items(n: int) -> list[ChoiceRequest]:
    """LUDWIG-shaped 0-shot requests: a question, an indirect answer, "which means"; " yes" or " no"."""
    out = []
    for i in range(n):
        q, a = QUESTIONS[i % 3], ANSWERS[(i // 3) % 3]
        context = f'Esther asked "{q} ({i})" and Juan responded "{a}", which means'
        out.append(ChoiceRequest(context, (" yes", " no")))
    return out


def timed(fn, repeats: int, sync: bool) -> float:
    """The median wall time of `repeats` calls of fn(), in seconds (CUDA synchronised)."""
    times = []
    for _ in range(repeats):
        if sync:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def benchmark_pass(model, tokenizer, requests: list[ChoiceRequest], batch: int) -> None:
    heads = HeadCache()
    with torch.inference_mode():
        for start in range(0, len(requests), batch):
            score_choices(model, tokenizer, requests[start : start + batch], heads=heads)


def measure(args) -> dict[str, float]:
    dtype, sync = getattr(torch, args.dtype), args.device.startswith("cuda")
    model = llama_1b(args.device, dtype, args.layers)
    tokenizer = tiny_causal_lm()[1]
    requests = items(args.items)
    out = {"params": sum(p.numel() for p in model.parameters()), "tensors": len(list(model.parameters()))}
    out["tokens/item"] = statistics.mean(len(tokenizer(r.context)["input_ids"]) for r in requests)
    out["stamp"] = timed(lambda: (weights_stamp(model), pins(model)), 50, False)
    benchmark_pass(model, tokenizer, requests[: args.batch], args.batch)  # warm-up: kernels, allocator
    out["scorer call"] = timed(
        lambda: benchmark_pass(model, tokenizer, requests[: args.batch], args.batch), 3, sync
    )
    out["pass"] = timed(lambda: benchmark_pass(model, tokenizer, requests, args.batch), 2, sync)
    for p in model.parameters():
        p.requires_grad_(True)  # a full fine-tune: every weight trains
    out["digest full"] = timed(lambda: weights_digest(model), 3, sync)
    model.requires_grad_(False)
    tuned = make_trainable(model, "lora", LORA_DEFAULTS)
    out["lora params"] = sum(p.numel() for p in tuned.parameters() if p.requires_grad)
    out["digest lora"] = timed(lambda: weights_digest(tuned), 10, sync)
    return out  # the model is let go with this frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--layers", type=int, default=16)
    args = parser.parse_args()
    found = measure(args)
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    print(
        f"device {name}, {args.dtype}, {found['params'] / 1e9:.2f}B parameters in {found['tensors']} tensors"
    )
    print(f"{args.items} items of {found['tokens/item']:.0f} tokens, scorer calls of {args.batch}")
    for key in ("stamp", "scorer call", "pass", "digest full", "digest lora"):
        print(f"{key:>12}: {found[key] * 1000:10.2f} ms")
    print(f"LoRA trains {found['lora params'] / 1e6:.2f}M parameters")
    print(f"stamp / scorer call:  {found['stamp'] / found['scorer call']:.2%}")
    print(f"digest full / pass:   {found['digest full'] / found['pass']:.2%}")
    print(f"digest lora / pass:   {found['digest lora'] / found['pass']:.2%}")


if __name__ == "__main__":
    main()
