"""Preemption of a DDP run: two CPU processes (gloo) stopped mid-epoch, as SLURM stops a job (SIGTERM to
every task, each at its own moment: here rank 1 a batch before rank 0), and resumed from the `last.ckpt` they
kept (`ckpt_path=last`, as a requeued job does), end with the metrics of the same run never stopped, key for
key, the same checkpoints, and every rank trained on exactly the batches of the run never stopped: before the
stop and after the resume, each rank's examples in the same order, none twice and none left out (the
distributed sampler's place in its epoch restored on every rank).

DDP inside pytest only through a subprocess (strategy=ddp re-runs the command for rank 1);
tests/test_preemption.py has the single-process runs stopped at each point."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import TINY_DATA, TINY_MODEL
from test_preemption import COMMON, STOPPED, checkpoint_summary
from test_signals import Job
from trained_batches import read

pytestmark = pytest.mark.slow  # three runs of two processes each

TESTS = Path(__file__).resolve().parent
# GRICE's LSTM (dropout 0.1) with the default callbacks, on two ranks: 2 epochs of 5 batches a rank.
DDP_GRICE = [
    "task=grice_recovery",
    "model=lstm",
    *TINY_MODEL["lstm"],
    *TINY_DATA["grice"],
    "data.eval_batch_size=16",
    "trainer=ddp",
    "trainer.devices=2",
    "trainer.max_epochs=2",
    *COMMON,
]


def ddp_run(root: Path, cache_dir: Path, extra: tuple[str, ...] = (), status: int = 0, env=None) -> Job:
    """The DDP run in `root/run`, each rank's batches recorded in `root/batches`; it exits with `status`."""
    args = [*DDP_GRICE, f"paths.cache_dir={cache_dir}", f"hydra.run.dir={root / 'run'}"]
    args += ["+callbacks.trained_batches._target_=trained_batches.TrainedBatches"]
    args += [f"+callbacks.trained_batches.folder={root / 'batches'}", *extra]
    cwd = root / f"job{len(list(root.glob('job*')))}"
    cwd.mkdir(parents=True)
    job = Job("pragexp.train", args, cwd, pythonpath=(TESTS,), env={"OMP_NUM_THREADS": "1", **(env or {})})
    try:
        job.proc.wait(timeout=300)  # (about a minute here; ranks that wait for each other wait for ever)
    except subprocess.TimeoutExpired:
        kill_tree(job.proc.pid)
        raise AssertionError(f"still running after 300 s:\n{job.log()[-3000:]}") from None
    assert job.proc.returncode == status, job.log()[-3000:]
    return job


def kill_tree(pid: int) -> None:
    """SIGKILL to a process and its descendants (rank 0's, the rank it started)."""
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            kill_tree(int(child))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def test_a_ddp_run_stopped_mid_epoch_and_resumed_ends_as_the_run_never_stopped(tmp_path, cache_dir):
    plain = tmp_path / "plain"
    ddp_run(plain, cache_dir)

    # SLURM signals every task of the job, each when it gets there: rank 1 after its second batch of epoch 1,
    # rank 0 after its third. The ranks agree at a batch's end to stop and stop after the same batch: the
    # third (a signal that comes after the ranks have agreed on a batch's end counts at the next one).
    stop = []
    for rank, batch in ((1, 1), (0, 2)):
        callback = f"+callbacks.stop_at{rank}"
        stop += [f"{callback}._target_=stop_at.StopAt", f"{callback}.where=train", f"{callback}.epoch=1"]
        stop += [f"{callback}.batch={batch}", f"{callback}.rank={rank}"]
    stopped = tmp_path / "stopped"
    job = ddp_run(stopped, cache_dir, tuple(stop), status=143, env={"STOP_AT": "1"})
    match = re.search(STOPPED, job.stdout())
    assert match and match[1] == "fitting epoch 1 step 8, batch 3 of 5", job.stdout()[-2000:]
    resumed = ddp_run(stopped, cache_dir, ("ckpt_path=last",))

    last = stopped / "run" / "checkpoints" / "last.ckpt"
    assert f"Restoring states from the checkpoint path at {last}" in resumed.log()
    assert "dataloader is not resumable" not in resumed.log()
    metrics = json.loads((stopped / "run" / "metrics.json").read_text())
    assert metrics == json.loads((plain / "run" / "metrics.json").read_text())
    assert checkpoint_summary(stopped / "run") == checkpoint_summary(plain / "run")
    shards = []
    for rank in (0, 1):
        trained = read(plain / "batches", rank)
        assert len(trained) == 10  # 2 epochs of 5 batches
        assert read(stopped / "batches", rank) == trained  # 8 before the stop, then the 2 after it
        shards.append({i for batch in trained[:5] for i in batch["indices"]})
    assert len(shards[0] & shards[1]) <= 1  # each rank its own half of epoch 0 (one example padded)
