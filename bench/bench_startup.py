"""Where a cold `pragexp.eval` spends its time before and after the first answer (issue 40).

Runs `python -m pragexp.eval task=circa model=llm llm.dtype=float32 trainer.limit_test_batches=1
data.eval_batch_size=8` (8 Circa items, SmolLM2) in fresh processes, each with a probe that timestamps its
phases:

- frameworks: importing torch, transformers, Lightning and Hydra;
- pragexp: importing what pragexp adds on top (the entry point, `run`, the HF backend);
- config: Hydra's composition, up to `run(cfg)`;
- data: from `run(cfg)` to the test loop's start (the data module, the task, the model), model load excluded;
- tokenizer, weights: the time inside the LLM's loaders (the weights read from the GGUF file, or from the
  converted folder);
- first batch: the first test batch, model load excluded; the rest: from there to the process's exit.

Three runs: `gguf` (an empty conversion cache: the file is read, and converted where the code converts),
`converted` (the conversion cache warm) and `cached` (the same outputs folder again: every answer in the
response cache). The probe also lists which optional heavy modules (peft, faiss, wandb, lm_eval,
sentence_transformers) the run imported, and Python's `-X importtime` the seconds pragexp's own modules add to
the imports (their self times). Last, the commands that answer without a job (`--cfg job`, `--help`, a config
error) are timed once each.

    python bench/bench_startup.py [--data tests/fixtures/circa/circa-data.tsv] [--code PATH]

`--code` times another checkout of pragexp (its folder holding `pragexp/`), for a before/after table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from probed_eval import add_callback, emit, import_frameworks, run_child, run_eval

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("peft", "faiss", "wandb", "lm_eval", "sentence_transformers")
PHASES = ("frameworks", "pragexp", "config", "data", "tokenizer", "weights", "first batch", "the rest")


def child(overrides: list[str]) -> None:
    """Inside the timed process: imports, then `pragexp.eval` with probes on the run, the loaders and the
    loop."""
    t0 = time.perf_counter()
    marks: dict[str, float] = {}
    spans: dict[str, float] = {"tokenizer": 0.0, "weights": 0.0}
    import_frameworks()
    import pytorch_lightning as pl

    marks["frameworks"] = time.perf_counter()
    import pragexp.eval
    import pragexp.generation.backends.hf as hf
    import pragexp.run

    marks["pragexp"] = time.perf_counter()

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spans[name] += time.perf_counter() - start

        return wrapper

    for attr, span in (("load_causal_model", "weights"), ("load_causal_tokenizer", "tokenizer")):
        if hasattr(hf, attr):
            setattr(hf, attr, timed(span, getattr(hf, attr)))
    if hasattr(hf, "load_causal_lm"):  # before the tokenizer loaded apart: one call loads both
        hf.load_causal_lm = timed("weights", hf.load_causal_lm)
    run = pragexp.run.run

    def probed_run(*args, **kwargs):
        marks["config"] = time.perf_counter()
        return run(*args, **kwargs)

    pragexp.run.run = probed_run

    class Probe(pl.Callback):
        def on_test_start(self, trainer, module):
            marks.setdefault("data", time.perf_counter())
            spans["at data"] = spans["tokenizer"] + spans["weights"]

        def on_test_batch_end(self, trainer, module, outputs, batch, batch_idx, dataloader_idx=0):
            marks.setdefault("first batch", time.perf_counter())

    add_callback(Probe())
    run_eval(overrides)
    marks["the rest"] = time.perf_counter()
    heavy = [m for m in HEAVY if m in sys.modules]
    emit("STARTUP", {"t0": t0, "marks": marks, "spans": spans, "heavy": heavy})


def phases(report: dict) -> dict[str, float]:
    """Seconds per phase, the loaders' time taken out of the phase it fell in."""
    marks, spans = report["marks"], report["spans"]
    at_data = spans.get("at data", 0.0)
    loads = spans["tokenizer"] + spans["weights"]
    out = {
        "frameworks": marks["frameworks"] - report["t0"],
        "pragexp": marks["pragexp"] - marks["frameworks"],
        "config": marks["config"] - marks["pragexp"],
        "data": marks["data"] - marks["config"] - at_data,
        "tokenizer": spans["tokenizer"],
        "weights": spans["weights"],
        "first batch": marks["first batch"] - marks["data"] - (loads - at_data),
        "the rest": marks["the rest"] - marks["first batch"],
    }
    return out


def timed_run(args, code: Path, outputs: Path, model_cache: Path) -> tuple[float, dict]:
    overrides = [
        "task=circa",
        "model=llm",
        f"data.path={args.data}",
        "llm.dtype=float32",
        "trainer.limit_test_batches=1",
        "data.eval_batch_size=8",
        f"hydra.run.dir={outputs / 'run'}",
    ]
    env = {**os.environ, "PRAGEXP_OUTPUTS": str(outputs), "PRAGEXP_MODEL_CACHE": str(model_cache)}
    wall, report, stderr = run_child(__file__, "STARTUP", overrides, code, env, flags=("-X", "importtime"))
    return wall, {**report, "imports": own_imports(stderr)}


def own_imports(stderr: str) -> dict:
    """Python's `-X importtime` lines read back: the seconds spent in pragexp's own modules (each module's
    self time, what it adds to the frameworks it imports) and the three costliest of them."""
    own = {}
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            fields = [f.strip() for f in line.removeprefix("import time:").split("|")]
            if fields[2].startswith("pragexp") and fields[0].isdigit():
                own[fields[2]] = int(fields[0]) / 1e6
    top = sorted(own, key=own.get, reverse=True)[:3]
    return {"seconds": sum(own.values()), "modules": len(own), "top": {m: round(own[m], 3) for m in top}}


def answer_times(code: Path) -> dict[str, float]:
    """Wall seconds of the commands that must answer without a job: `--cfg job`, `--help` and a config
    error."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")])),
    }
    commands = {
        "--cfg job": ["task=circa", "model=llm", "--cfg", "job"],
        "--help": ["--help"],
        "config error": ["task=circa", "model=no_such_model"],
    }
    times = {}
    for name, args in commands.items():
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pragexp.eval", *args], env=env, cwd=code, capture_output=True)
        times[name] = time.perf_counter() - start
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(ROOT / "tests" / "fixtures" / "circa" / "circa-data.tsv"))
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to time (holds pragexp/)")
    args = parser.parse_args()
    rows, imports = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, outputs in (("gguf", "a"), ("converted", "b"), ("cached", "b")):
            wall, report = timed_run(args, args.code.resolve(), tmp / outputs, tmp / "models")
            rows.append((name, wall, phases(report), report["heavy"]))
            imports.append((name, report))
    print(f"pragexp from {args.code.resolve()}, SmolLM2 float32, 8 Circa items, seconds")
    print("| run | " + " | ".join(PHASES) + " | wall | heavy modules imported |")
    print("|---" * (len(PHASES) + 3) + "|")
    for name, wall, times, heavy in rows:
        cells = " | ".join(f"{times[p]:.1f}" for p in PHASES)
        print(f"| {name} | {cells} | {wall:.1f} | {', '.join(heavy) or 'none'} |")
    for name, report in imports:
        own = report["imports"]
        print(
            f"{name}: pragexp's own {own['modules']} modules took {own['seconds']:.2f} s of the imports "
            f"(-X importtime, self times); the costliest: {own['top']}"
        )
    answers = answer_times(args.code.resolve())
    print("answered without a job: " + ", ".join(f"{k} {v:.1f} s" for k, v in answers.items()))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
