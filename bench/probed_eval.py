"""What bench_startup and bench_sweep share: `python -m pragexp.eval` run in a child process of the benchmark
script itself (`--child`), with a Lightning callback of the benchmark's added to every trainer, and its
probe's figures handed back as one tagged JSON line on stdout.

    parent: report = run_child(script, "STARTUP", overrides, code, env)  # -> the child's last "STARTUP {...}"
    child:  add_callback(Probe()); run_eval(overrides); emit("STARTUP", {...})
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "WANDB_MODE": "offline",
}


def run_child(script: str, tag: str, args: list[str], code: Path, env: dict, flags: tuple = ()) -> tuple:
    """(wall seconds, the child's report, its stderr): `python [flags] script --child args` with `code` (a
    checkout holding pragexp/) first on the path, offline; stops the benchmark if the child fails."""
    env = {**env, **OFFLINE, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))}
    start = time.perf_counter()
    command = [sys.executable, *flags, script, "--child", *args]
    done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True)
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith(tag + " ")]
    if done.returncode or not lines:
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, json.loads(lines[-1].removeprefix(tag + " ")), done.stderr


def import_frameworks() -> None:
    """torch, transformers, Lightning and Hydra, imported as the entry point imports them (a checkout from
    before `pragexp.entry.frameworks`: plainly)."""
    try:
        from pragexp.entry.frameworks import importing_frameworks
    except ImportError:
        importing_frameworks = contextlib.nullcontext
    with importing_frameworks():
        import hydra  # noqa: F401
        import pytorch_lightning  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401


def add_callback(callback) -> None:
    """Every Lightning trainer made from now on in this process gets `callback` too."""
    import_frameworks()
    import pytorch_lightning as pl

    init = pl.Trainer.__init__

    def trainer_init(self, *args, **kwargs):
        kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), callback]
        init(self, *args, **kwargs)

    pl.Trainer.__init__ = trainer_init


def run_eval(args: list[str]) -> None:
    """`python -m pragexp.eval args` in this process (a multirun with `-m` among the args)."""
    import pragexp.eval

    sys.argv = ["pragexp.eval", *args]
    try:
        pragexp.eval.main()
    except SystemExit as stop:  # Hydra exits 0 after a run
        if stop.code:
            raise


def emit(tag: str, report: dict) -> None:
    print(f"{tag} {json.dumps(report)}", flush=True)
