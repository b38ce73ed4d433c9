"""Runs stopped by a real signal, in subprocesses: they exit with 128 + the signal's number, say in one line
what they were doing and what they kept, write no metrics.json, and leave what they kept whole (a checkpoint
that resumes, the response cache's answers). On a real one-node SLURM cluster (tests/slurm_cluster.py): the
time limit's signal, as submitit asks for it, saves a checkpoint, SLURM requeues the job and it ends with the
metrics of an uninterrupted run; an LLM evaluation requeued the same way asks the model only what its response
cache lacks; scancel of a sweep leaves no half-written metrics.json. A stop at each point of a run (mid-epoch,
at an epoch's last batch, while validating, saving a checkpoint or testing) and its resume against the run
never stopped: tests/test_preemption.py."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import forked_runs
import pytest
import torch
from conftest import ROOT, TINY_DATA, TINY_MODEL, run_module

from pragexp.generation.cache.cached_backend import ResponseCache

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
# An LLM backend that answers two calls, then waits for the signal (10 minutes at most); a requeued SLURM
# job's run does not wait.
SLOW_BACKEND = """
import os
import time

from pragexp.generation.backends.hf import HFBackend


class SlowBackend(HFBackend):
    answered = 0

    def loglikelihood_many(self, requests):
        if SlowBackend.answered == 2 and os.environ.get("SLURM_RESTART_COUNT", "0") == "0":
            print("slow backend: waiting", flush=True)
            time.sleep(600)
        scores = super().loglikelihood_many(requests)
        SlowBackend.answered += 1
        print(f"slow backend: answered {sum(len(r.options) for r in requests)} options", flush=True)
        return scores
"""


class Job:
    """`python -m <module> <args>` in the background, as a user starts it, its output in files."""

    def __init__(
        self,
        module: str,
        args: list[str],
        cwd: Path,
        pythonpath: tuple[Path, ...] = (),
        env: dict | None = None,
    ):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(map(str, (ROOT, *pythonpath))),
            "PRAGEXP_OUTPUTS": str(cwd / "outputs"),
            **(env or {}),
        }
        self.out, self.err = cwd / f"{module}.out", cwd / f"{module}.err"
        with self.out.open("w") as out, self.err.open("w") as err:
            self.proc = forked_runs.start(module, args, cwd, env, out.fileno(), err.fileno())

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
    # Stopped between two epochs (batch 0), the run keeps the finished epoch's own last.ckpt (resume.py).
    assert (saved["epoch"], saved["global_step"]) == ((epoch - 1) if batch == 0 else epoch, step)
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "predictions.jsonl").exists()
    names = sorted(p.name for p in last.parent.iterdir())  # nothing half-written beside them
    assert len(names) == 2 and re.fullmatch(r"best-epoch\d{3}\.ckpt", names[0]) and names[1] == "last.ckpt"

    # The resume docs/outputs.md shows: the same command in the run's dir with ckpt_path=last goes on from
    # the next batch.
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
    path = cache / "llm" / "responses"
    expected = (
        rf"pragexp: stopped by {signal.Signals(signum).name} while testing, batch 3 of \d+; "
        rf"kept: {answered} answers in the response cache {re.escape(str(path))}; no metrics\.json written"
    )
    assert re.fullmatch(expected, stop_line(job.stdout())), job.stdout()[-2000:]
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "predictions.jsonl").exists()
    cache_folder = ResponseCache(path)  # holds every answer stored before the signal, and nothing torn
    try:
        assert answered > 0 and len(cache_folder) == answered and cache_folder.damaged == {}
    finally:
        cache_folder.close()


# -- On a real SLURM cluster (tests/slurm_cluster.py) --------------------------------------------------------

SLURM_JOB = ["launcher=slurm", "hydra.launcher.gpus_per_node=null", "hydra.launcher.cpus_per_task=1"]
# submitit asks SLURM for its signal `signal_delay_s` before the time limit: --time=1 --signal=USR2@5. SLURM
# sends it between 25 and 55 s after the job starts (it may signal up to 60 s early), and requeues a job 11 s
# after it asks (tests/slurm_cluster.py: cred_expire=10). A time limit counts as a timeout for submitit at
# every signal: up to 5 requeues.
TIME_LIMITED = [
    "hydra.launcher.timeout_min=1",
    "hydra.launcher.signal_delay_s=5",
    "hydra.launcher.max_num_timeout=5",
]
# The first run of a SLURM job trains a batch every 2 s, so the time limit's signal finds it training; its
# requeued runs train at full speed. Sleeping draws no random numbers: the results are those of a plain run.
SLOW_FIRST_RUN = """
import os
import time

from pytorch_lightning import Callback


class SlowFirstRun(Callback):
    def on_train_batch_end(self, *args):
        if os.environ.get("SLURM_RESTART_COUNT", "0") == "0":
            time.sleep(2)
"""


def submitit_logs(run_dir: Path) -> tuple[Path, Path]:
    """The stdout and stderr logs of a SLURM job's first task (every run of a requeued job appends to
    them)."""
    logs = (run_dir / ".submitit").resolve()
    (out,) = logs.glob("*_0_log.out")
    (err,) = logs.glob("*_0_log.err")
    return out, err


def job_states(cluster, run_dir: Path, timeout: float = 60) -> list[str]:
    """SLURM's accounting for the job of a run dir: the state of each of its runs, in order, once the last has
    ended (the accounting hears of a job's end a moment after the job's result is written)."""
    job_id = (run_dir / ".submitit").resolve().name
    sacct = [
        "sacct",
        "--duplicates",
        "--allocations",
        "--noheader",
        "--parsable2",
        "-o",
        "State",
        "-j",
        job_id,
    ]
    deadline = time.monotonic() + timeout
    while True:
        states = [line.split()[0] for line in cluster.run(*sacct).stdout.splitlines() if line]
        if states and states[-1] not in ("PENDING", "RUNNING", "REQUEUED") or time.monotonic() > deadline:
            return states
        time.sleep(0.5)


@pytest.mark.slurm
def test_a_slurm_job_at_its_time_limit_is_requeued_and_ends_as_an_uninterrupted_run(
    slurm, tmp_path, cache_dir
):
    (tmp_path / "slow_training.py").write_text(SLOW_FIRST_RUN)
    same = [*GRICE, "trainer.max_epochs=6", f"paths.cache_dir={cache_dir}"]
    sweep = tmp_path / "sweep"
    args = [*SLURM_JOB, *TIME_LIMITED, "+callbacks.slow._target_=slow_training.SlowFirstRun", *same]
    job = Job("pragexp.train", [*args, f"hydra.sweep.dir={sweep}"], tmp_path, pythonpath=(tmp_path,))
    plain = run_module("pragexp.train", [*same, f"hydra.run.dir={tmp_path / 'plain'}"], tmp_path)
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert job.proc.wait(timeout=600) == 0, job.log()[-3000:]

    run_dir = sweep / "0"
    last = run_dir / "checkpoints" / "last.ckpt"
    out, err = submitit_logs(run_dir)
    text = out.read_text()
    stops = [
        re.fullmatch(STOPPED_FITTING, line)
        for line in text.splitlines()
        if line.startswith("pragexp: stopped")
    ]
    assert stops and all(m and m[1] == "SIGUSR2" and Path(m[6]) == last for m in stops), text[-3000:]
    assert all(m[8] == "; requeueing the job, which resumes from its last checkpoint" for m in stops)
    assert text.count(f"requeued job: resuming the interrupted run from {last}") == len(stops)
    # SLURM requeued the job once per signal, and its last run completed.
    assert job_states(slurm, run_dir) == ["REQUEUED"] * len(stops) + ["COMPLETED"]
    # The runs went on from the batch after each stop to the end: no batch trained twice, none left out.
    epochs, batches = 6, int(stops[0][5])
    assert progress(err.read_text()) == every_batch(epochs, batches)
    # ... and ended where the uninterrupted run did.
    resumed = json.loads((run_dir / "metrics.json").read_text())
    uninterrupted = json.loads((tmp_path / "plain" / "metrics.json").read_text())
    scores = [k for k in uninterrupted if k.startswith(("test/", "val/"))]
    assert scores and {k: resumed[k] for k in scores} == {k: uninterrupted[k] for k in scores}
    print(f"preempted {len(stops)}x: {resumed}\nuninterrupted: {uninterrupted}")


@pytest.mark.slurm
def test_a_requeued_slurm_llm_evaluation_asks_the_model_only_what_its_cache_lacks(slurm, tmp_path):
    (tmp_path / "slow_llm.py").write_text(SLOW_BACKEND)
    sweep, cache = tmp_path / "sweep", tmp_path / "cache"
    args = [
        *SLURM_JOB,
        *TIME_LIMITED,
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
        f"hydra.sweep.dir={sweep}",
    ]
    job = Job("pragexp.eval", args, tmp_path, pythonpath=(tmp_path,))
    assert job.proc.wait(timeout=600) == 0, job.log()[-3000:]

    run_dir = sweep / "0"
    out, _ = submitit_logs(run_dir)
    text = out.read_text()
    first, requeued = text.split("slow backend: waiting", 1)  # the time limit's signal came while it waited
    assert re.search(
        r"pragexp: stopped by SIGUSR2 while testing, batch 3 of \d+; kept: \d+ answers", requeued
    )
    assert job_states(slurm, run_dir) == ["REQUEUED", "COMPLETED"]
    asked = [
        sum(map(int, re.findall(r"^slow backend: answered (\d+) options$", t, flags=re.M)))
        for t in (first, requeued)
    ]
    cache_folder = ResponseCache(cache / "llm" / "responses")
    try:
        stored = len(cache_folder)
    finally:
        cache_folder.close()
    # The requeued run asked the model only what the first had not: every answer was asked for once.
    assert asked[0] > 0 and asked[1] > 0 and asked[0] + asked[1] == stored
    assert "test/count" in json.loads((run_dir / "metrics.json").read_text())


@pytest.mark.slurm
def test_scancel_stops_a_slurm_sweep_and_leaves_no_half_written_metrics(slurm, tmp_path, cache_dir):
    sweep = tmp_path / "sweep"
    args = [*SLURM_JOB, *GRICE, "trainer.max_epochs=1000", "seed=0,1", f"paths.cache_dir={cache_dir}"]
    job = Job("pragexp.train", [*args, f"hydra.sweep.dir={sweep}"], tmp_path)
    runs = [sweep / "0", sweep / "1"]
    job.wait_for(lambda: all((run / "checkpoints" / "last.ckpt").is_file() for run in runs))  # both training
    array = (runs[0] / ".submitit").resolve().name.split("_")[0]
    slurm.run("scancel", array)
    assert job.proc.wait(timeout=300) != 0  # the sweep reports its jobs' end ...
    assert "CANCELLED" in job.log()  # ... as SLURM's accounting has it (submitit reads it with sacct)
    for run in runs:
        out, _ = submitit_logs(run)
        assert re.fullmatch(STOPPED_FITTING, stop_line(out.read_text()))[1] == "SIGTERM"
        assert not (run / "metrics.json").exists() and not (run / "predictions.jsonl").exists()
        assert sorted(p.name for p in run.iterdir() if p.name.startswith(".") and p.name != ".hydra") == [
            ".submitit"
        ]
        assert not [
            p for p in (run / "checkpoints").iterdir() if p.name.startswith(".")
        ]  # no partial checkpoint
        assert job_states(slurm, run) == ["CANCELLED"]
