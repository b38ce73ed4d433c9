"""A six-template LUDWIG sweep in one process (issue 40: a sweep loads its model once).

Runs `python -m pragexp.eval -m task=ludwig prompt.template=0,1,2,3,4,5` (0-shot, SmolLM2 float32 on the CPU,
no response cache: every job scores) in one fresh process, Hydra's basic launcher running the six jobs one
after the other, with a probe that timestamps each job: its set-up (from the job's start to its test loop: the
data module, the task, the trainer; the model's load where it is loaded), its scoring (the test loop, the
model's load taken out) and its finish (metrics and records written). Printed: the start-up (the process's
start to the first job's test loop, the imports and the first load included), each job's figures, the models
loaded, the wall time and the issue's target: the wall at most the start-up plus 1.2 times the six jobs'
scoring.

    python bench/bench_sweep.py [--path DATA_FOLDER] [--test-file FILE] [--code PATH]

`--path`: a LUDWIG data folder (default: the real excerpt in ../shared/samples/ludwig beside a developer's
checkout, else the test fixture); `--code`: another checkout of pragexp to time (before/after).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from probed_eval import add_callback, emit, run_child, run_eval

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT.parent / "shared" / "samples" / "ludwig"
SAMPLE_TEST = "test_conversational_implicatures_first150.csv"
TEMPLATES = 6


def child(overrides: list[str]) -> None:
    """Inside the timed process: the sweep, with probes on each job, the test loop and the model's loads."""
    t0 = time.perf_counter()
    import pytorch_lightning as pl

    import pragexp.eval
    import pragexp.generation.backends.hf as hf
    import pragexp.run

    jobs: list[dict] = []
    run = pragexp.run.run

    def probed_run(*args, **kwargs):
        jobs.append({"start": time.perf_counter(), "load": 0.0})
        try:
            return run(*args, **kwargs)
        finally:
            jobs[-1]["end"] = time.perf_counter()

    pragexp.run.run = probed_run
    load = hf.load_causal_model

    def timed_load(*args, **kwargs):
        start = time.perf_counter()
        try:
            return load(*args, **kwargs)
        finally:
            jobs[-1]["load"] += time.perf_counter() - start

    hf.load_causal_model = timed_load

    class Probe(pl.Callback):
        def on_test_start(self, trainer, module):
            jobs[-1]["test start"] = time.perf_counter()

        def on_test_end(self, trainer, module):
            jobs[-1]["test end"] = time.perf_counter()

    add_callback(Probe())
    run_eval(["-m", *overrides])
    end = time.perf_counter()
    try:
        from pragexp.pretrained import loaded

        loads = loaded.loads
    except ImportError:  # code from before the models were kept
        loads = sum(job["load"] > 0 for job in jobs)
    emit("SWEEP", {"t0": t0, "end": end, "jobs": jobs, "loads": loads})


def figures(report: dict) -> dict:
    jobs = report["jobs"]
    rows = []
    for i, job in enumerate(jobs):
        load_in_test = job["load"] if job["load"] and "test start" in job else 0.0
        rows.append(
            {
                "set-up": job["test start"] - job["start"],
                "load": job["load"],
                "scoring": job["test end"] - job["test start"] - load_in_test,
                "finish": job["end"] - job["test end"],
                "gap": (jobs[i + 1]["start"] if i + 1 < len(jobs) else report["end"]) - job["end"],
            }
        )
    startup = jobs[0]["test start"] - report["t0"] + rows[0]["load"]  # the first load falls in the test loop
    return {"startup": startup, "jobs": rows, "loads": report["loads"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=SAMPLE if SAMPLE.is_dir() else None)
    parser.add_argument("--test-file", default=None)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to time (holds pragexp/)")
    args = parser.parse_args()
    path = args.path or ROOT / "tests" / "fixtures" / "ludwig"
    test_file = args.test_file or (SAMPLE_TEST if (path / SAMPLE_TEST).is_file() else None)
    code = args.code.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        overrides = [
            "task=ludwig",
            "model=llm",
            f"data.path={path}",
            *([f"data.test_file={test_file}", "data.types_file=null"] if test_file else []),
            f"prompt.template={','.join(map(str, range(TEMPLATES)))}",
            "prompt.shots=0",
            "model.use_cache=false",
            "llm.dtype=float32",
            "llm.device=cpu",
            "logger=none",
            "print_config=false",
            "callbacks.progress_bar=null",
            f"hydra.sweep.dir={Path(tmp) / 'sweep'}",
        ]
        wall, report, _ = run_child(
            __file__, "SWEEP", overrides, code, {**os.environ, "PRAGEXP_OUTPUTS": tmp}
        )
    out = figures(report)
    print(f"pragexp from {code}, LUDWIG {path.name}/{test_file or 'test file'}, SmolLM2 float32, seconds")
    print("| job | set-up | model load | scoring | finish | to the next job |")
    print("|---|---|---|---|---|---|")
    for i, row in enumerate(out["jobs"]):
        print(
            f"| {i} | {row['set-up']:.1f} | {row['load']:.1f} | {row['scoring']:.1f} | {row['finish']:.1f} "
            f"| {row['gap']:.1f} |"
        )
    scoring = sum(row["scoring"] for row in out["jobs"])
    target = out["startup"] + 1.2 * scoring
    print(
        f"start-up {out['startup']:.1f} s (imports, the first job's set-up, the model's load); "
        f"scoring {scoring:.1f} s in all; wall {wall:.1f} s; models loaded: {out['loads']}"
    )
    print(
        f"wall / (start-up + scoring) = {wall / (out['startup'] + scoring):.2f}; "
        f"target start-up + 1.2 x scoring = {target:.1f} s: {'met' if wall <= target else 'missed'}"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
