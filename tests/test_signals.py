"""Runs stopped by a real signal, in subprocesses: they exit with 128 + the signal's number, say in one line
what they were doing and what they kept, write no metrics.json, and leave what they kept whole (a checkpoint
that resumes, the response cache's answers). Under SLURM (tests/fake_slurm.py for sbatch, srun, scancel,
scontrol) submitit's time-limit signal saves a checkpoint, requeues the job, and the job goes on from it."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import fake_slurm
import pytest
import torch
from conftest import ROOT, TINY_DATA, TINY_MODEL, run_module

from pragexp.generation.cache import ResponseCache

pytestmark = pytest.mark.slow  # subprocesses, each stopped mid-run

GRICE = [
    "task=grice_recovery",
    "model=lstm",
    *TINY_MODEL["lstm"],
    *TINY_DATA["grice"],
    "logger=none",
    "trainer.accelerator=cpu",
    "callbacks.early_stopping=null",  # trains until stopped (or max_epochs)
    "callbacks.progress_bar.every_percent=1",  # a line per batch (not a terminal: lines, not a live bar)
    "print_config=false",
]
STOPPED_FITTING = (
    r"pragexp: stopped by (SIG\w+) while fitting epoch (\d+) step (\d+), batch (\d+) of (\d+); "
    r"kept: (\S+) \(resume with ckpt_path=last hydra\.run\.dir=(\S+)\); no metrics\.json written(.*)"
)
# An LLM backend that answers two calls, then waits for the signal (10 minutes at most).
SLOW_BACKEND = """
import time

from pragexp.generation.hf import HFBackend


class SlowBackend(HFBackend):
    answered = 0

    def loglikelihood_many(self, requests):
        if SlowBackend.answered == 2:
            print("slow backend: waiting", flush=True)
            time.sleep(600)
        scores = super().loglikelihood_many(requests)
        SlowBackend.answered += 1
        print(f"slow backend: answered {sum(len(r.options) for r in requests)} options", flush=True)
        return scores
"""


class Job:
    """`python -m <module> <args>` in the background, as a user starts it, its output in files."""

    def __init__(self, module: str, args: list[str], cwd: Path, pythonpath: tuple[Path, ...] = ()):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(map(str, (ROOT, *pythonpath))),
            "PRAGEXP_OUTPUTS": str(cwd / "outputs"),
        }
        self.out, self.err = cwd / f"{module}.out", cwd / f"{module}.err"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", module, *args], cwd=cwd, env=env, stdout=out, stderr=err
            )

    def stdout(self) -> str:
        return self.out.read_text()

    def log(self) -> str:
        return self.stdout() + self.err.read_text()

    def wait_for(self, ready: Callable[[], bool], timeout: float = 600) -> None:
        """Until `ready()` (a file or a line that shows the work under way), however slow the machine is."""
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.proc.poll() is None, f"exited {self.proc.returncode} too early:\n{self.log()[-3000:]}"
            assert time.monotonic() < deadline, f"not ready after {timeout} s:\n{self.log()[-3000:]}"
            time.sleep(0.2)

    def stop(self, signum: int) -> int:
        os.kill(self.proc.pid, signum)
        return self.proc.wait(timeout=600)


def stop_line(text: str) -> str:
    (line,) = [line for line in text.splitlines() if line.startswith("pragexp: stopped by")]
    return line


def progress(text: str) -> list[tuple[int, int]]:
    """(epoch, batches done) of each progress line of training (the log-line progress bar's)."""
    return [
        (int(e), int(b)) for e, b in re.findall(r"^epoch (\d+) train (\d+)/\d+", text, flags=re.MULTILINE)
    ]


def every_batch(epochs: int, batches: int) -> list[tuple[int, int]]:
    """The progress of a run that trains `epochs` epochs through, each batch once."""
    return [(epoch, batch) for epoch in range(epochs) for batch in range(1, batches + 1)]


def test_sigterm_stops_training_with_a_checkpoint_that_resumes(tmp_path, cache_dir):
    run_dir = tmp_path / "run"
    args = [*GRICE, f"paths.cache_dir={cache_dir}", f"hydra.run.dir={run_dir}"]
    job = Job("pragexp.train", [*args, "trainer.max_epochs=1000"], tmp_path)
    last = run_dir / "checkpoints" / "last.ckpt"
    job.wait_for(last.is_file)  # epoch 0 has ended: the signal comes while it trains
    assert job.stop(signal.SIGTERM) == 143, job.log()[-3000:]

    match = re.fullmatch(STOPPED_FITTING, stop_line(job.stdout()))
    assert match, job.stdout()[-2000:]
    epoch, step, batch, batches = map(int, match.group(2, 3, 4, 5))
    assert match[1] == "SIGTERM" and (Path(match[6]), Path(match[7]), match[8]) == (last, run_dir, "")
    assert epoch >= 1 and step == epoch * batches + batch  # it stopped after a whole batch
    assert progress(job.err.read_text()) == every_batch(epoch + 1, batches)[:step]
    saved = torch.load(last, weights_only=True)
    assert (saved["epoch"], saved["global_step"]) == (epoch, step)
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "predictions.jsonl").exists()
    names = sorted(p.name for p in last.parent.iterdir())  # nothing half-written beside them
    assert len(names) == 2 and re.fullmatch(r"best-epoch\d{3}\.ckpt", names[0]) and names[1] == "last.ckpt"

    # README's resume: the same command in the run's dir with ckpt_path=last goes on from the next batch.
    resumed = run_module(
        "pragexp.train", [*args, f"trainer.max_epochs={epoch + 2}", "ckpt_path=last"], tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"Restoring states from the checkpoint path at {last}" in resumed.stdout + resumed.stderr
    # It went on from the next batch to the end: no batch trained twice, none left out.
    assert progress(job.err.read_text() + resumed.stderr) == every_batch(epoch + 2, batches)
    assert "test/r@1" in json.loads((run_dir / "metrics.json").read_text())


def test_sigint_stops_a_sweep_at_the_job_it_is_running(tmp_path, cache_dir):
    sweep = tmp_path / "sweep"
    args = ["-m", *GRICE, "trainer.max_epochs=1000", "seed=0,1", f"paths.cache_dir={cache_dir}"]
    job = Job("pragexp.train", [*args, f"hydra.sweep.dir={sweep}"], tmp_path)
    last = sweep / "0" / "checkpoints" / "last.ckpt"
    job.wait_for(last.is_file)
    assert job.stop(signal.SIGINT) == 130, job.log()[-3000:]  # Ctrl-C
    match = re.fullmatch(STOPPED_FITTING, stop_line(job.stdout()))
    assert match and match[1] == "SIGINT" and Path(match[6]) == last, job.stdout()[-2000:]
    assert not (sweep / "0" / "metrics.json").exists()
    assert not (sweep / "1").exists()  # the sweep stopped with its job: the next one never started


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_an_llm_evaluation_keeping_the_answers_it_stored(tmp_path, signum, status):
    (tmp_path / "slow_llm.py").write_text(SLOW_BACKEND)
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    args = [
        "task=circa",
        "model=llm",
        "llm=tiny",
        "llm._target_=slow_llm.SlowBackend",
        *TINY_DATA["circa"],
        "data.eval_batch_size=2",
        "logger=none",
        "trainer.accelerator=cpu",
        "print_config=false",
        f"paths.cache_dir={cache}",
        f"hydra.run.dir={run_dir}",
    ]
    job = Job("pragexp.eval", args, tmp_path, pythonpath=(tmp_path,))
    job.wait_for(lambda: "slow backend: waiting" in job.stdout())  # 2 batches scored, the 3rd under way
    assert job.stop(signum) == status, job.log()[-3000:]

    answered = sum(map(int, re.findall(r"^slow backend: answered (\d+) options$", job.stdout(), flags=re.M)))
    path = cache / "llm" / "responses.sqlite"
    expected = (
        rf"pragexp: stopped by {signal.Signals(signum).name} while testing, batch 3 of \d+; "
        rf"kept: {answered} answers in the response cache {re.escape(str(path))}; no metrics\.json written"
    )
    assert re.fullmatch(expected, stop_line(job.stdout())), job.stdout()[-2000:]
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "predictions.jsonl").exists()
    cache_file = ResponseCache(path)  # opens, and holds every answer stored before the signal
    try:
        assert answered > 0 and len(cache_file) == answered
    finally:
        cache_file.close()
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_slurm_time_limit_signal_saves_requeues_and_the_job_resumes(tmp_path, cache_dir, monkeypatch):
    # SLURM's commands, imitated on this machine; scancel --signal=USR2 stands in for SLURM's signal_delay_s
    # before the time limit (sbatch --signal=USR2@120, as submitit writes it).
    bin_dir = fake_slurm.install(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    sweep = tmp_path / "sweep"
    args = ["launcher=slurm", "hydra.launcher.gpus_per_node=null", "trainer.devices=1", *GRICE]
    args += ["trainer.max_epochs=8", f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep}"]
    job = Job("pragexp.train", args, tmp_path)  # the sweep's process: it submits, then waits for the job
    run_dir = sweep / "0"
    last = run_dir / "checkpoints" / "last.ckpt"
    job.wait_for(last.is_file)
    logs = (run_dir / ".submitit").resolve()  # the job's submitit folder, named by its SLURM job id
    subprocess.run(["scancel", "--signal=USR2", logs.name], check=True)
    assert job.proc.wait(timeout=600) == 0, job.log()[-3000:]

    assert (bin_dir / "requeued.log").read_text().split() == [logs.name]  # submitit asked: scontrol requeue
    (out,) = logs.glob("*_0_log.out")  # both runs of the job append to it
    (err,) = logs.glob("*_0_log.err")
    text = out.read_text()
    line = stop_line(text)
    match = re.fullmatch(STOPPED_FITTING, line)
    assert match and match[1] == "SIGUSR2" and Path(match[6]) == last, text[-2000:]
    assert match[8] == "; requeueing the job, which resumes from its last checkpoint"
    epoch, step, batch, batches = map(int, match.group(2, 3, 4, 5))
    second = text.split(line, 1)[1]  # the requeued run's own output
    assert f"requeued job: resuming the interrupted run from {last}" in second
    assert f"Restoring states from the checkpoint path at {last}" in second
    assert step == epoch * batches + batch and "`Trainer.fit` stopped: `max_epochs=8` reached" in second
    # The requeued run went on from the next batch to the end: no batch trained twice, none left out.
    assert progress(err.read_text()) == every_batch(8, batches)
    assert "test/r@1" in json.loads((run_dir / "metrics.json").read_text())
