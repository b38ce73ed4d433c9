"""A LoRA fine-tune preempted at any point: the tiny causal LM trained on Circa (`llm.finetune=lora`, its
dropout drawing random numbers every step) with benchmark curves scored while it trains
(`callbacks.benchmarks`: LUDWIG every 5 optimizer steps and after the last, `training.benchmarks`), stopped by
SIGTERM mid-epoch, while validating, while the curves' callback scores its benchmark, while it scores the pass
after the last step and while a checkpoint is saved, or killed as a checkpoint's adapter folder is written,
then resumed as a requeued job is (the same command in the run's dir, `ckpt_path=last`), ends as the same run
never stopped: metrics.json equal key for key; the same checkpoint files (nothing partial beside them) and
callbacks' states; every checkpoint's adapters and every peft folder's weights
(`<name>.peft/adapter_model.safetensors`) equal bit for bit (torch.equal); the benchmark passes of the two
runs together those of the run never stopped.

The way the stop comes and the resume goes are tests/test_preemption.py's (tests/stop_at.py); the run never
stopped runs once for the module. Each stopped run and its resume have a response cache of their own: the
resume meets the answers the stopped run stored (and no other run's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from conftest import LUDWIG_FIXTURE, TINY_DATA
from safetensors.torch import load_file
from test_preemption import STOPPED
from test_signals import Job

from pragexp.runs import checkpoint

pytestmark = pytest.mark.slow  # a LoRA fine-tune, stopped and resumed, in subprocesses at each point

TESTS = Path(__file__).resolve().parent
# 2 epochs of 6 training batches (12 optimizer steps), 4 validation batches; LUDWIG's 6 pairs scored in 3
# batches at steps 0, 5 and 10 and after the last step (12).
LORA = [
    "task=circa",
    "model=llm",
    "llm=tiny",
    "llm.finetune=lora",
    "optimizer.lr=5e-3",
    "trainer.max_epochs=2",
    *TINY_DATA["circa"],
    "data.eval_batch_size=4",
    "callbacks.benchmarks.names=[ludwig]",
    "callbacks.benchmarks.every_n_steps=5",
    f"+callbacks.benchmarks.overrides.ludwig.data.path={LUDWIG_FIXTURE}",
    "+callbacks.benchmarks.overrides.ludwig.data.eval_batch_size=2",
    "logger=none",
    "trainer.accelerator=cpu",
    "print_config=false",
    "callbacks.progress_bar=null",
]
# Where each stop comes (StopAt: where, epoch, batch index or, for bench, the pass's optimizer step) and what
# the stopped run says it was doing.
POINTS = {
    "mid-epoch": (["where=train", "epoch=1", "batch=2"], r"fitting epoch 1 step 9, batch 3 of 6"),
    "while validating": (
        ["where=val", "epoch=0", "batch=1"],
        r"validating in fitting epoch 0, batch 2 of 4",
    ),
    # the pass at step 5 (after the epoch's 5th batch) goes on to its end; training stops after that batch
    "while scoring a benchmark": (
        ["where=bench", "epoch=0", "batch=5"],
        r"fitting epoch 0 step 5, batch 5 of 6",
    ),
    # the pass after the last step, once training has ended (2 epochs done) goes on to its end; the run stops
    # before it validates and tests its best checkpoint
    "while scoring the last pass": (
        ["where=bench", "epoch=2", "batch=12"],
        r"validating \(before its first batch\)",
    ),
    "while saving a checkpoint": (["where=save", "epoch=0"], r"fitting epoch 1 step 6, batch 0 of 6"),
}


def lora_run(run_dir: Path, cache: Path, cwd: Path, extra: tuple[str, ...] = (), status: int = 0) -> Job:
    """`python -m pragexp.train` of the LoRA fine-tune in `run_dir`, exiting with `status`."""
    cwd.mkdir(parents=True)
    args = [*LORA, f"paths.cache_dir={cache}", f"hydra.run.dir={run_dir}", *extra]
    job = Job("pragexp.train", args, cwd, pythonpath=(TESTS,))
    assert job.proc.wait(timeout=600) == status, job.log()[-3000:]
    return job


@pytest.fixture(scope="module")
def never_stopped(tmp_path_factory) -> tuple[Path, Job]:
    """The run never stopped (once for the module): its dir and its job."""
    root = tmp_path_factory.mktemp("lora-plain")
    job = lora_run(root / "run", root / "cache", root / "job")
    return root / "run", job


def passes(job: Job) -> list[tuple[str, str]]:
    """The benchmark passes a run logged: (optimizer step, its figures), in order."""
    return re.findall(r"\] - step (\d+): (bench/.*)$", job.stdout(), flags=re.M)


def adapters(run_dir: Path) -> dict[str, dict[str, torch.Tensor]]:
    """Every tuned weight the run kept: each checkpoint's adapters and each peft folder's, by file."""
    folder = run_dir / "checkpoints"
    kept = {}
    for path in sorted(folder.glob("*.ckpt")):
        weights = checkpoint.read(path).network_weights()
        kept[path.name] = {k: v for k, v in weights.items() if k != "_extra_state"}
    for path in sorted(folder.glob("*.peft")):
        kept[path.name] = load_file(path / "adapter_model.safetensors")
    return kept


def checkpoint_state(run_dir: Path) -> dict:
    """What the run's checkpoints say besides the weights: their files, last.ckpt's step and callbacks' states
    (less the paths, which name the run's dir, and the top-k's map of them), the base and LoRA settings
    beside the adapters."""
    folder = run_dir / "checkpoints"
    last = torch.load(folder / "last.ckpt", weights_only=True)
    states = {}
    for name, state in last["callbacks"].items():
        kept = {k: v for k, v in state.items() if "path" not in k and k not in ("dirpath", "best_k_models")}
        states[name.split("{")[0]] = {k: v.item() if torch.is_tensor(v) else v for k, v in kept.items()}
    return {
        "files": sorted(p.name for p in folder.iterdir()),
        "global_step": last["global_step"],
        "callbacks": states,
        "extra": checkpoint.read(folder / "last.ckpt").network_weights()["_extra_state"],
        "peft": {p.name: json.loads((p / "pragexp.json").read_text()) for p in sorted(folder.glob("*.peft"))},
    }


def assert_same_adapters(resumed: Path, plain: Path) -> None:
    ours, theirs = adapters(resumed), adapters(plain)
    assert ours.keys() == theirs.keys()
    for name, weights in theirs.items():
        assert ours[name].keys() == weights.keys() and weights, name
        different = [k for k in weights if not torch.equal(ours[name][k], weights[k])]
        assert not different, f"{name}: {different}"


def stopped_then_resumed(stop: list[str], status: int, tmp_path: Path, monkeypatch) -> tuple[Job, Job]:
    """The run stopped where `stop` says (StopAt's settings), exiting with `status`, then the same command
    again in its dir with ckpt_path=last (as a requeued job is)."""
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    monkeypatch.setenv("STOP_AT", "1")
    stop_at = ["+callbacks.stop_at._target_=stop_at.StopAt", *(f"+callbacks.stop_at.{s}" for s in stop)]
    stopped = lora_run(run_dir, cache, tmp_path / "stopped", tuple(stop_at), status=status)
    monkeypatch.delenv("STOP_AT")
    assert not (run_dir / "metrics.json").exists()
    resumed = lora_run(run_dir, cache, tmp_path / "resumed", ("ckpt_path=last",))
    last = run_dir / "checkpoints" / "last.ckpt"
    assert f"Restoring states from the checkpoint path at {last}" in resumed.log()
    assert "dataloader is not resumable" not in resumed.log()
    return stopped, resumed


def assert_same_results(run_dir: Path, plain: Path) -> None:
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics == json.loads((plain / "metrics.json").read_text())
    assert checkpoint_state(run_dir) == checkpoint_state(plain)
    assert_same_adapters(run_dir, plain)


@pytest.mark.parametrize("point", list(POINTS))
def test_a_lora_run_stopped_at_any_point_and_resumed_ends_as_the_run_never_stopped(
    point, never_stopped, tmp_path, monkeypatch
):
    stop, where = POINTS[point]
    plain, plain_job = never_stopped
    stopped, resumed = stopped_then_resumed(stop, 143, tmp_path, monkeypatch)
    match = re.search(STOPPED, stopped.stdout())
    assert match and re.fullmatch(where, match[1]), stopped.log()[-3000:]
    assert_same_results(tmp_path / "run", plain)
    # The curves: each step the run never stopped scored, scored once (none again after the resume, none
    # off the schedule), with the same figures.
    assert len(passes(plain_job)) == 4 and passes(stopped) + passes(resumed) == passes(plain_job)


def test_a_lora_run_killed_while_saving_its_adapters_resumes_as_the_run_never_stopped(
    never_stopped, tmp_path, monkeypatch
):
    """SIGKILL as the last epoch's `last.peft/` is about to replace the previous one (the first adapters saved
    after the epoch's last batch): the checkpoint it belongs to is not there either, so the resumed run trains
    that epoch again and writes both."""
    plain, plain_job = never_stopped
    stop = ["where=train", "epoch=1", "batch=-1", "how=adapter_kill"]
    stopped, resumed = stopped_then_resumed(stop, -9, tmp_path, monkeypatch)
    assert re.search(r"^stop_at: killed as \S+/last\.peft was to be replaced$", stopped.stdout(), re.M)
    assert_same_results(tmp_path / "run", plain)
    # The passes after the checkpoint it resumed from (epoch 0's end, step 6) are scored again.
    assert passes(resumed) == [p for p in passes(plain_job) if int(p[0]) > 6]
