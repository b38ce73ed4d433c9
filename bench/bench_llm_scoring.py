"""Option scoring on real requests: pragexp's whole command, its scorer alone, and lm-evaluation-harness's
`HFLM.loglikelihood` on the very requests the command recorded.

    python bench/bench_llm_scoring.py --path circa-data.tsv [--items 256] [--threads 2] [--batch-size 16]
                                      [--model smollm2|tiny] [--lm-eval-batch-size 16] [--no-lm-eval]
                                      [--eval-batch 64] [--table 512/8/16 ...]

Needs lm-evaluation-harness: `pip install 'pragexp[bench]'` (not part of `make install`).

1. The whole command, from a cold process: `python -m pragexp.eval task=circa model=llm data.path=<path>`
   (RELAXED, matched, template 0, chat template, 4 options, float32 on the CPU, no response cache), limited to
   the first `--items` test items (batches of `--eval-batch`, 256 as Circa's config: each batch one scorer
   call, whose fixed-shape passes fill better with more items); items per second of wall time, start-up and
   loading included, and where that time went (a probe on the scorer in the child process: up to its first
   call, inside its calls, the rest). Its predictions.jsonl records, per item, the text the model read and
   each option's continuation: those are the recorded requests.
2. The scorer alone: `HFBackend.loglikelihood_many` on the recorded requests, in this process (after a warm-up
   on two of them).
3. lm-evaluation-harness: `lm_eval.models.huggingface.HFLM(pretrained=<the same model object>, tokenizer=<the
   same tokenizer>, batch_size=<--lm-eval-batch-size>, add_bos_token=False, prefix_token_id=eos)` and
   `loglikelihood` on the same (context, continuation) pairs (one forward pass per pair).

`--no-lm-eval` leaves out step 3 (at 1,024 items it is the longest by far: one forward pass per option). Each
phase prints its figure as it ends; then the ratios, and max |d loglik| between the recorded, the scorer's and
lm-eval's numbers (and whether the choices agree), all measured in this one run. `--bf16` also times the
scorer alone with `llm.dtype=bfloat16` on the same requests (a CPU without bf16 instructions emulates it:
slower there) and says how far its log-likelihoods and choices are from float32's. `--table T/B/R[/O][/pow2]`
(repeatable) times the scorer alone again under another shape table (`llm.pass_shapes`: T tokens a pass,
widths of B, at most R rows; option passes of at most O rows, options padded to powers of two), with its ratio
to lm-eval's time of the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

STARTED = time.perf_counter()  # the child's clock starts here, before its imports
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from probed_eval import emit, import_frameworks, run_child, run_eval  # noqa: E402

import_frameworks()  # in the timed child, as the entry point imports them
import torch  # noqa: E402
from option_scoring import (  # noqa: E402 (after the frameworks)
    compare,
    lm_eval_alone,
    padding_line,
    scorer_alone,
)

from pragexp.generation.backends.hf import HFBackend  # noqa: E402
from pragexp.generation.scoring.passes import PassShapes  # noqa: E402
from pragexp.generation.scoring.requests import ChoiceRequest  # noqa: E402

EVAL_BATCH = 256  # items per Lightning batch of the command: Circa's data.eval_batch_size, what a user gets
FIXTURE = ROOT / "tests" / "fixtures" / "circa" / "circa-data.tsv"


def whole_command(args, out: Path) -> tuple[float, dict]:
    """Seconds of wall time of `pragexp.eval` from a cold process (its own output is in `out`), and where they
    went: the child's seconds to its first scorer call, inside the scorer, and the rest."""
    overrides = [
        "task=circa",
        "model=llm",
        f"llm.model={args.model}",
        "llm.dtype=float32",
        "llm.device=cpu",
        f"llm.batch_size={args.batch_size}",
        f"data.path={args.path}",
        f"data.eval_batch_size={args.eval_batch}",
        f"trainer.limit_test_batches={math.ceil(args.items / args.eval_batch)}",
        "model.use_cache=false",
        "logger=csv",
        "print_config=false",
        f"hydra.run.dir={out}",
        *([f"threads={args.threads}"] if args.threads else []),
    ]
    wall, report, _ = run_child(__file__, "SCORING", overrides, ROOT, dict(os.environ))
    return wall, report


def child(overrides: list[str]) -> None:
    """Inside the timed process: `pragexp.eval` with a probe on the scorer (`score_choices` as the backend
    calls it), timing from the process's start."""
    import pragexp.generation.backends.hf as hf

    spans = {"calls": 0, "scoring": 0.0, "first": None}
    score = hf.score_choices

    def probed(*args, **kwargs):
        start = time.perf_counter()
        spans["first"] = spans["first"] or start
        try:
            return score(*args, **kwargs)
        finally:
            spans["calls"] += 1
            spans["scoring"] += time.perf_counter() - start

    hf.score_choices = probed
    run_eval(overrides)
    end = time.perf_counter()
    emit(
        "SCORING",
        {
            "to first call": spans["first"] - STARTED,
            "scoring": spans["scoring"],
            "calls": spans["calls"],
            "rest": end - spans["first"] - spans["scoring"],
        },
    )


def recorded(out: Path, items: int) -> tuple[list[ChoiceRequest], list[list[float]]]:
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()[:items]
    records = [json.loads(line) for line in lines]
    # the request as the command asked it: its head (the characters its prompt shares with the others)
    # included
    requests = [ChoiceRequest(r["prompt"], tuple(r["continuations"]), head=r.get("head", 0)) for r in records]
    return requests, [r["loglik"] for r in records]


def say(line: str) -> None:
    print(line, flush=True)  # a long run shows each phase's figure when it ends


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=FIXTURE)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--items", type=int, default=256)
    parser.add_argument(
        "--batch-size", type=int, default=16, help="llm.batch_size: contexts per scoring pass"
    )
    parser.add_argument("--lm-eval-batch-size", type=int, default=16)
    parser.add_argument(
        "--eval-batch",
        type=int,
        default=EVAL_BATCH,
        help="data.eval_batch_size: items per scorer call of the command",
    )
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--bf16", action="store_true", help="also time the scorer in bfloat16")
    parser.add_argument("--no-lm-eval", action="store_true", help="leave out lm-evaluation-harness (step 3)")
    parser.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="TOKENS/BUCKET/MAX_ROWS[/OPTION_ROWS][/pow2]",
        help="also time the scorer alone under this shape table (llm.pass_shapes), e.g. 128/8/4096 (v4)",
    )
    return parser.parse_args()


def report_command(args, requests: list[ChoiceRequest], command_s: float, inside: dict, load: float) -> None:
    """Step 1's figures: items per second of the whole command, and where its time went."""
    n = len(requests)
    say(
        f"{n} Circa items x {len(requests[0].options)} options recorded by pragexp.eval from "
        f"{args.path.name}; model {args.model} float32 cpu, llm.batch_size {args.batch_size}, "
        f"{torch.get_num_threads()} threads, load average {load:.2f} at start"
    )
    say(f"whole command (cold process): {n / command_s:.2f} items/s ({command_s:.1f} s)")
    outside = command_s - sum(inside[k] for k in ("to first call", "scoring", "rest"))
    say(
        f"  of which: {inside['to first call']:.1f} s to its first scorer call (imports, config, data, "
        f"model), {inside['scoring']:.1f} s in the scorer ({inside['calls']} calls), {inside['rest']:.1f} s "
        f"between and after the calls (prompts, records, metrics), {outside:.1f} s the interpreter's start "
        "and exit"
    )


def lm_eval_step(args, backend, requests: list[ChoiceRequest], scorer_s: float, command_s: float) -> list:
    """Step 3: lm-evaluation-harness on the same requests, with its ratios to the scorer and the command."""
    n = len(requests)
    theirs_s, theirs = lm_eval_alone(backend, requests, args.lm_eval_batch_size)
    say(
        f"lm-eval HFLM.loglikelihood (batch {args.lm_eval_batch_size}): {n / theirs_s:.2f} items/s "
        f"({theirs_s:.1f} s); ratios: scorer / lm-eval {theirs_s / scorer_s:.2f}, "
        f"whole command / lm-eval {theirs_s / command_s:.2f}"
    )
    return theirs_s, theirs


def table_step(args, table: str, requests: list[ChoiceRequest], ours: list, theirs_s: float | None) -> None:
    """The scorer alone under another shape table (`--table`): its speed, its ratio to lm-eval's time of
    this run, and how far its numbers are from the default table's (a pass's shapes decide float rounding)."""
    shapes = dataclasses.asdict(PassShapes.parse(table))
    other = HFBackend(
        model=args.model, device="cpu", dtype="float32", batch_size=args.batch_size, pass_shapes=shapes
    )
    n = len(requests)
    other_s, scores = scorer_alone(other, requests)
    d, agree = compare(ours, scores)
    ratio = f", scorer / lm-eval {theirs_s / other_s:.2f}" if theirs_s else ""
    say(f"scorer alone, table {table}: {n / other_s:.2f} items/s ({other_s:.1f} s){ratio}")
    say(padding_line(other, requests))
    say(f"  vs the default table: max |d loglik| {d:.2e}, choices agree {agree}/{n}")


def bfloat16_step(args, requests: list[ChoiceRequest], ours: list, scorer_s: float) -> None:
    """The scorer alone in bfloat16: its speed, and how far its numbers are from float32's."""
    n = len(requests)
    half = HFBackend(model=args.model, device="cpu", dtype="bfloat16", batch_size=args.batch_size)
    half_s, half_scores = scorer_alone(half, requests)
    d, agree = compare(ours, half_scores)
    say(
        f"scorer alone in bfloat16: {n / half_s:.2f} items/s ({half_s:.1f} s), {scorer_s / half_s:.2f}x "
        f"float32's speed; vs float32: max |d loglik| {d:.2e}, choices agree {agree}/{n}"
    )


def main() -> None:
    args = parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not args.no_lm_eval:
        try:
            import lm_eval  # noqa: F401
        except ImportError:
            sys.exit("step 3 needs lm-evaluation-harness: pip install 'pragexp[bench]' (or --no-lm-eval)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "run"
        command_s, inside = whole_command(args, out)
        requests, logged = recorded(out, args.items)
    n = len(requests)
    report_command(args, requests, command_s, inside, load)
    backend = HFBackend(model=args.model, device="cpu", dtype="float32", batch_size=args.batch_size)
    scorer_s, ours = scorer_alone(backend, requests)
    say(f"scorer alone (loglikelihood_many): {n / scorer_s:.2f} items/s ({scorer_s:.1f} s)")
    say(padding_line(backend, requests))
    say(f"ratio whole command / scorer: {scorer_s / command_s:.2f}")
    compared = {"recorded vs scorer": (logged, ours)}
    theirs_s = None
    if not args.no_lm_eval:
        theirs_s, theirs = lm_eval_step(args, backend, requests, scorer_s, command_s)
        compared |= {"scorer vs lm-eval": (ours, theirs), "recorded vs lm-eval": (logged, theirs)}
    for name, (a, b) in compared.items():
        d, agree = compare(a, b)
        say(f"{name}: max |d loglik| {d:.2e}, choices agree {agree}/{n}")
    if args.bf16:
        bfloat16_step(args, requests, ours, scorer_s)
    for table in args.table:
        table_step(args, table, requests, ours, theirs_s)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
