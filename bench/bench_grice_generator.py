"""Throughput of the GRICE generator: train dialogues (10 rounds, 3 questions) written to a file.

    python bench/bench_grice_generator.py [--dialogs 5000] [--seed 0] [--repeats 3]

Runs in this one process (one core). Reports dialogues/s against the 2,000 dialogues/s target, both
on wall-clock time and on CPU time of the process (the latter is less sensitive to other jobs
sharing the machine). The best of ``--repeats`` runs is reported.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pragexp.data.grice.generator import write_dataset  # noqa: E402

TARGET = 2000.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dialogs", type=int, default=5000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split", default="train", choices=("train", "dev", "test"))
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    best_wall = best_cpu = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        for _ in range(args.repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            counts = write_dataset(out, args.split, args.dialogs, args.seed)
            best_wall = min(best_wall, time.perf_counter() - w0)
            best_cpu = min(best_cpu, time.process_time() - c0)
        size = os.path.getsize(out)
    wall_rate, cpu_rate = args.dialogs / best_wall, args.dialogs / best_cpu
    rounds = sum(counts["rounds"].values())
    print(
        f"{args.dialogs} {args.split} dialogues ({rounds} rounds, {size / 1e6:.1f} MB) "
        f"best of {args.repeats}: {best_wall:.2f}s wall, {best_cpu:.2f}s cpu"
    )
    print(f"wall: {wall_rate:,.0f} dialogues/s ({wall_rate / TARGET:.2f}x the {TARGET:,.0f}/s target)")
    print(f"cpu:  {cpu_rate:,.0f} dialogues/s ({cpu_rate / TARGET:.2f}x the {TARGET:,.0f}/s target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
