"""Fusion-in-Decoder training speed and peak memory, with and without gradient checkpointing.

    python bench/bench_pragmaticqa_fid.py [--model minilm|tiny|facebook/bart-large] [--k 5] [--batch-size 4]
                                          [--length 512] [--target 128] [--steps 4] [--threads N]

The offline reader by default (MiniLM warm-started encoder-decoder, pragexp.models.fid.FiDReader), on
batches of B questions x K passages of `--length` tokens each (random ids: the cost depends on the shapes
only) and targets of `--target` tokens; one optimizer step (Adam) per batch. Each mode runs in a fresh
process so that its peak memory is its own: the process's peak resident set on a CPU, the peak allocated
by torch on a GPU. Prints examples/s (after one warm-up step), peak memory, and the ratios checkpointing /
no checkpointing (checkpointing trades time for memory: expect a time ratio > 1 and a memory ratio < 1).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_mode(args) -> dict:
    import torch

    from pragexp.models.fid import FiDReader
    from pragexp.pretrained.seq2seq import load_seq2seq  # noqa: F401  (imports transformers before timing)

    torch.manual_seed(0)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = 30524  # MiniLM's vocabulary and the two tags
    special = {"pad": 0, "bos": 101, "eos": 102, "decoder_start": 101}
    reader = FiDReader(vocab, special, pretrained=args.model, gradient_checkpointing=args.checkpointing).to(
        device
    )
    reader.train()
    optimizer = torch.optim.Adam(reader.parameters(), lr=1e-5)
    shape = (args.batch_size, args.k, args.length)
    inputs = torch.randint(1000, 29000, shape, device=device)
    mask = torch.ones(shape, dtype=torch.long, device=device)
    labels = torch.randint(1000, 29000, (args.batch_size, args.target), device=device)
    times = []
    for step in range(args.steps + 1):
        start = time.perf_counter()
        logits = reader(inputs, mask, labels)
        loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        if step:  # the first step warms up allocators and kernels
            times.append(time.perf_counter() - start)
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated() / 2**20
        where = "GPU max allocated"
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        where = "peak RSS"
    seconds = sum(times) / len(times)
    return {"examples_per_s": args.batch_size / seconds, "step_s": seconds, "peak_mib": peak, "memory": where}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--target", type=int, default=128)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--checkpointing", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_mode(args)))
        return
    results = {}
    for checkpointing in (False, True):
        command = [sys.executable, __file__, "--one", *sys.argv[1:]] + (
            ["--checkpointing"] if checkpointing else []
        )
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        results[checkpointing] = json.loads(done.stdout.strip().splitlines()[-1])
    plain, saving = results[False], results[True]
    print(
        f"FiD training, {args.model}, batch {args.batch_size} x {args.k} passages x {args.length} tokens, "
        f"targets of {args.target}, {args.steps} timed steps"
    )
    for name, r in (("no checkpointing", plain), ("gradient checkpointing", saving)):
        print(
            f"  {name:24s} {r['examples_per_s']:8.3f} examples/s  ({r['step_s']:.2f} s/step)  {r['memory']} "
            f"{r['peak_mib']:.0f} MiB"
        )
    print(
        f"ratio checkpointing / none: time {saving['step_s'] / plain['step_s']:.2f}, "
        f"peak memory {saving['peak_mib'] / plain['peak_mib']:.2f}"
    )


if __name__ == "__main__":
    main()
