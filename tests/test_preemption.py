"""Preemption at any point of a training run, with the default callbacks (early stopping, checkpointing) and
each task's own monitor and schedule: stopped mid-epoch, at an epoch's last batch, while validating, while
saving a checkpoint or while testing, and resumed from the `last.ckpt` it kept, a run ends with the metrics of
the same run never stopped (metrics.json equal, key for key, on CPU with the same seed), with the same
checkpoints and the callbacks' states of the run never stopped.

The stop comes at a chosen point, deterministically: tests/stop_at.py sends the run SIGTERM there (the signal
SLURM's scancel and time limit send; submitit's SIGUSR2 takes the same path, then requeues:
tests/test_signals.py and, at this same point on the real cluster, the SLURM test at the end of this file);
the resume is the one a requeued job does (`ckpt_path=last` in the run's dir). The runs log to CSV, and a
resumed run's csv/metrics.csv is the never-stopped run's, row for row."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import torch
from conftest import TINY_DATA, TINY_MODEL
from small_disk import mount_small_disk, unmount
from test_signals import SLURM_JOB, Job, job_states, submitit_logs

pytestmark = pytest.mark.slow  # two or three training runs each, in subprocesses

TESTS = Path(__file__).resolve().parent
# the CSV logger (with its learning-rate monitor): a resumed run's csv/metrics.csv is the never-stopped run's
COMMON = ["logger=csv", "trainer.accelerator=cpu", "print_config=false", "callbacks.progress_bar=null"]
# GRICE with the default callbacks, early stopping made to stop after epoch 2 whatever the scores (no gain of
# 1.0 in R@1 ever counts as one): 3 epochs of 10 batches, 13 validation and 5 test batches.
GRICE = [
    "task=grice_recovery",
    "model=lstm",
    *TINY_MODEL["lstm"],
    *TINY_DATA["grice"],
    "data.eval_batch_size=16",
    "trainer.max_epochs=4",
    "callbacks.early_stopping.patience=2",
    "+callbacks.early_stopping.min_delta=1",
]
TASKS = {
    "grice_recovery": GRICE,  # val/r@1, maximised
    "circa": [  # val/acc, maximised; BERT's linear warm-up stepped every batch
        "task=circa",
        "model=bert",
        *TINY_MODEL["bert"],
        *TINY_DATA["circa"],
        "data.eval_batch_size=4",
    ],
    "pragmaticqa": [  # val/ppl, minimised; Table 4's plateau schedule, validating every quarter epoch
        "task=pragmaticqa",
        "model=fid",
        *TINY_MODEL["fid"],
        *TINY_DATA["pragmaticqa"],
        "data.eval_batch_size=1",
        "scheduler=plateau",
        "+trainer.val_check_interval=0.5",
        "trainer.max_epochs=2",
    ],
}
STOPPED = r"pragexp: stopped by SIGTERM while (.+); kept: (\S+) \(resume with ckpt_path=last"


@pytest.fixture(scope="module")
def never_stopped(tmp_path_factory, cache_dir):
    """Each task's run never stopped (run once per module, when a test first asks for it): its run dir."""
    runs: dict[str, Path] = {}

    def run(task: str) -> Path:
        if task not in runs:
            root = tmp_path_factory.mktemp(f"plain-{task}")
            job = Job("pragexp.train", run_args(task, root / "run", cache_dir), root)
            assert job.proc.wait(timeout=600) == 0, job.log()[-3000:]
            runs[task] = root / "run"
        return runs[task]

    return run


def run_args(task: str, run_dir: Path, cache_dir: Path) -> list[str]:
    return [*TASKS[task], *COMMON, f"paths.cache_dir={cache_dir}", f"hydra.run.dir={run_dir}"]


def stopped_run(task, stop, tmp_path, cache_dir, monkeypatch, run_dir=None, status=143) -> Job:
    """The task's run stopped where `stop` says (StopAt's settings), exiting with `status`."""
    args = run_args(task, run_dir or tmp_path / "run", cache_dir)
    args += ["+callbacks.stop_at._target_=stop_at.StopAt", *(f"+callbacks.stop_at.{s}" for s in stop)]
    (tmp_path / "stopped").mkdir()
    monkeypatch.setenv("STOP_AT", "1")
    stopped = Job("pragexp.train", args, tmp_path / "stopped", pythonpath=(TESTS,))
    assert stopped.proc.wait(timeout=600) == status, stopped.log()[-3000:]
    monkeypatch.delenv("STOP_AT")
    return stopped


def resumed_run(task: str, tmp_path: Path, cache_dir: Path, run_dir: Path | None = None) -> Job:
    """The same command again in the stopped run's dir, with ckpt_path=last (as a requeued job does)."""
    args = [*run_args(task, run_dir or tmp_path / "run", cache_dir), "ckpt_path=last"]
    (tmp_path / "resumed").mkdir()
    resumed = Job("pragexp.train", args, tmp_path / "resumed", pythonpath=(TESTS,))
    assert resumed.proc.wait(timeout=600) == 0, resumed.log()[-3000:]
    return resumed


def checkpoint_summary(run_dir: Path) -> dict:
    """What a run's checkpoints say of its training: their names, and last.ckpt's step, weights and callbacks'
    states (a resumed run with nothing left to train writes last.ckpt again as training ends: its `epoch` then
    counts the last epoch as completed, and the checkpoint callback holds no current score)."""
    folder = run_dir / "checkpoints"
    last = torch.load(folder / "last.ckpt", weights_only=True)
    states = {}
    for name, state in last["callbacks"].items():
        dropped = ("dirpath", "best_k_models", "current_score")
        kept = {k: v for k, v in state.items() if "path" not in k and k not in dropped}
        states[name.split("{")[0]] = {k: v.item() if torch.is_tensor(v) else v for k, v in kept.items()}
    checkpointing = next(v for k, v in last["callbacks"].items() if k.startswith("ModelCheckpoint"))
    return {
        "files": sorted(p.name for p in folder.iterdir()),
        "global_step": last["global_step"],
        "weights": {k: v.tolist() for k, v in last["state_dict"].items()},
        "best": Path(checkpointing["best_model_path"]).name,
        "callbacks": states,
    }


def assert_same_run(stopped: Job, resumed: Job, plain: Path, where: str) -> None:
    match = re.search(STOPPED, stopped.stdout())
    assert match and re.fullmatch(where, match[1]), stopped.stdout()[-2000:]
    assert_same_results(Path(match[2]).parent.parent, resumed, plain)


def assert_same_results(run_dir: Path, resumed: Job, plain: Path) -> None:
    """The resumed run went on from its last.ckpt and ended as the run never stopped did."""
    last = run_dir / "checkpoints" / "last.ckpt"
    assert f"Restoring states from the checkpoint path at {last}" in resumed.log()
    assert "dataloader is not resumable" not in resumed.log()  # Lightning saw a loader that resumes
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics == json.loads((plain / "metrics.json").read_text())
    assert checkpoint_summary(run_dir) == checkpoint_summary(plain)
    # the CSV log whole: the stopped run's rows kept, then the resumed run's (training.csv_log)
    assert csv_rows(run_dir) == csv_rows(plain)


def csv_rows(run_dir: Path) -> list[dict[str, str]]:
    """The run's csv/metrics.csv, row by row, without the training metrics Lightning averages over an epoch
    (`*_epoch`): it does not save their running sums in a checkpoint, so a resumed run averages the epoch it
    resumed in over the batches after the resume, and not at all where it resumed after the epoch's last batch
    (while validating). Every other row and value is the run's never stopped."""
    with open(run_dir / "csv" / "metrics.csv", newline="") as file:
        rows = [
            {k: v for k, v in row.items() if v and not (k.startswith("train/") and k.endswith("_epoch"))}
            for row in csv.DictReader(file)
        ]
    return [row for row in rows if set(row) - {"step", "epoch"}]


# Where each stop comes (StopAt: where, epoch, batch index) and what the stopped run says it was doing.
POINTS = {
    "mid-epoch": (["where=train", "epoch=1", "batch=4"], r"fitting epoch 1 step 15, batch 5 of 10"),
    # The signal during an epoch's last batch: the epoch's validation then stops after its first batch.
    "epoch's last batch": (
        ["where=train", "epoch=1", "batch=-1"],
        r"validating in fitting epoch 1, batch 1 of 13",
    ),
    "while validating": (
        ["where=val", "epoch=1", "batch=1"],
        r"validating in fitting epoch 1, batch 2 of 13",
    ),
    "while saving a checkpoint": (["where=save", "epoch=1"], r"fitting epoch 2 step 20, batch 0 of 10"),
    # After training (early stopping ended it after epoch 2), while testing the best checkpoint.
    "while testing": (["where=test", "batch=1"], r"testing, batch 2 of 5"),
}


@pytest.mark.parametrize("point", list(POINTS))
def test_a_run_stopped_at_any_point_and_resumed_ends_as_the_run_never_stopped(
    point, never_stopped, tmp_path, cache_dir, monkeypatch
):
    stop, where = POINTS[point]
    stopped = stopped_run("grice_recovery", stop, tmp_path, cache_dir, monkeypatch)
    resumed = resumed_run("grice_recovery", tmp_path, cache_dir)
    assert_same_run(stopped, resumed, never_stopped("grice_recovery"), where)


@pytest.mark.parametrize(
    ("task", "stop", "where"),
    [
        ("circa", ["where=val", "epoch=1", "batch=1"], r"validating in fitting epoch 1, batch 2 of \d+"),
        (
            "pragmaticqa",
            ["where=val", "epoch=1", "batch=0"],
            r"validating in fitting epoch 1, batch 1 of \d+",
        ),
    ],
)
def test_each_tasks_run_stopped_while_validating_resumes_as_the_run_never_stopped(
    task, stop, where, never_stopped, tmp_path, cache_dir, monkeypatch
):
    stopped = stopped_run(task, stop, tmp_path, cache_dir, monkeypatch)
    resumed = resumed_run(task, tmp_path, cache_dir)
    assert_same_run(stopped, resumed, never_stopped(task), where)


# -- Checkpoints: a kill or a full disk while one is saved ---------------------------------------------------


def loadable_checkpoints(run_dir: Path) -> dict[str, int]:
    """Every checkpoint in the run's folder, loaded as a resumed run loads it: {name: its epoch}."""
    folder = run_dir / "checkpoints"
    return {p.name: torch.load(p, weights_only=True)["epoch"] for p in sorted(folder.glob("*.ckpt"))}


def test_a_run_killed_while_saving_a_checkpoint_keeps_the_previous_one_and_resumes_from_it(
    never_stopped, tmp_path, cache_dir, monkeypatch
):
    # SIGKILL half-way through the bytes of epoch 1's first checkpoint: nothing to handle, nothing said.
    stop = ["where=save", "epoch=1", "how=kill"]
    stopped = stopped_run("grice_recovery", stop, tmp_path, cache_dir, monkeypatch, status=-9)
    assert re.search(r"^stop_at: killed after \d+ of \d+ bytes$", stopped.stdout(), re.M), stopped.log()[
        -3000:
    ]
    run_dir = tmp_path / "run"
    assert loadable_checkpoints(run_dir) == {"best-epoch000.ckpt": 0, "last.ckpt": 0}  # epoch 0's, whole
    resumed = resumed_run("grice_recovery", tmp_path, cache_dir)
    assert_same_results(run_dir, resumed, never_stopped("grice_recovery"))  # (the half-written file gone too)


def test_a_full_disk_while_saving_a_checkpoint_stops_the_run_naming_it_and_keeps_the_previous_one(
    never_stopped, tmp_path, cache_dir, monkeypatch
):
    disk = tmp_path / "disk"
    mount_small_disk(
        disk, "16m"
    )  # the run's dir on a disk of its own, filled as epoch 1's checkpoint is saved
    try:
        run_dir = disk / "run"
        stop = ["where=save", "epoch=1", "how=fill"]
        stopped = stopped_run("grice_recovery", stop, tmp_path, cache_dir, monkeypatch, run_dir, status=1)
        folder = re.escape(str(run_dir / "checkpoints"))
        said = (
            rf"No space left on device: writing {folder}/(\S+\.ckpt) "
            r"\(not written; a previous \1 is unchanged\)"
        )
        assert re.search(said, stopped.log()), stopped.log()[-3000:]
        assert loadable_checkpoints(run_dir) == {"best-epoch000.ckpt": 0, "last.ckpt": 0}
        assert not [
            p for p in (run_dir / "checkpoints").iterdir() if p.name.startswith(".")
        ]  # nothing partial
        (run_dir / "filler").unlink()  # space made again: the same command goes on from the kept checkpoint
        resumed = resumed_run("grice_recovery", tmp_path, cache_dir, run_dir)
        assert_same_results(run_dir, resumed, never_stopped("grice_recovery"))
    finally:
        unmount(disk)


# -- On the real SLURM cluster (tests/slurm_cluster.py) ------------------------------------------------------


def log_text(run_dir: Path) -> str:
    """The SLURM job's stdout so far ("" before the job has started)."""
    logs = run_dir / ".submitit"
    return "".join(p.read_text() for p in logs.glob("*_0_log.out")) if logs.exists() else ""


@pytest.mark.slurm
def test_a_slurm_job_preempted_while_validating_is_requeued_and_ends_as_the_run_never_stopped(
    slurm, never_stopped, tmp_path, cache_dir, monkeypatch
):
    """The issue's case on the real path: the job waits at epoch 1's second validation batch, SLURM sends it
    SIGUSR2 (scancel --signal=USR2, as its --signal=USR2@... and a preemption do), the job saves, submitit has
    SLURM requeue it (scontrol requeue), and SLURM's second run of the job resumes and ends as the run never
    stopped."""
    sweep = tmp_path / "sweep"
    args = [
        *SLURM_JOB,
        *run_args("grice_recovery", tmp_path / "unused", cache_dir),
        f"hydra.sweep.dir={sweep}",
    ]
    args += ["+callbacks.stop_at._target_=stop_at.StopAt", "+callbacks.stop_at.where=val"]
    args += ["+callbacks.stop_at.epoch=1", "+callbacks.stop_at.batch=1", "+callbacks.stop_at.how=wait"]
    monkeypatch.setenv(
        "STOP_AT", "1"
    )  # (a SLURM job's first run only: a requeued run has SLURM_RESTART_COUNT=1)
    job = Job("pragexp.train", args, tmp_path, pythonpath=(TESTS,))
    run_dir = sweep / "0"
    job.wait_for(lambda: "stop_at: waiting for the signal" in log_text(run_dir))
    slurm.run("scancel", "--signal=USR2", (run_dir / ".submitit").resolve().name)
    plain = never_stopped("grice_recovery")  # (while SLURM requeues the job)
    assert job.proc.wait(timeout=600) == 0, job.log()[-3000:]

    out, err = submitit_logs(run_dir)
    text, last = out.read_text(), run_dir / "checkpoints" / "last.ckpt"
    stop = (
        f"pragexp: stopped by SIGUSR2 while validating in fitting epoch 1, batch 2 of 13; kept: {last} "
        f"(resume with ckpt_path=last hydra.run.dir={run_dir}); no metrics.json written; "
        "requeueing the job, which resumes from its last checkpoint"
    )
    assert stop in text and f"requeued job: resuming the interrupted run from {last}" in text
    assert job_states(slurm, run_dir) == ["REQUEUED", "COMPLETED"]
    assert "dataloader is not resumable" not in text + err.read_text()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics == json.loads((plain / "metrics.json").read_text())
    assert checkpoint_summary(run_dir) == checkpoint_summary(plain)
    # the CSV log whole: the stopped run's rows kept, then the resumed run's (training.csv_log)
    assert csv_rows(run_dir) == csv_rows(plain)
