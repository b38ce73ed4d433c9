"""The commands as users type them, in subprocesses: multirun, DDP, and bad input."""

import json
import re
import time

import pytest
from conftest import GRICE_FIXTURE, TINY_DATA, TINY_MODEL, run_module
from omegaconf import OmegaConf

FAST = [
    "logger=none",
    "trainer.max_epochs=1",
    "trainer.accelerator=cpu",
    "callbacks.progress_bar=null",
    *TINY_MODEL["lstm"],
]


@pytest.fixture
def tiny(cache_dir):
    return [*FAST, *TINY_DATA["grice"], f"paths.cache_dir={cache_dir}"]


@pytest.mark.slow
def test_multirun_runs_one_job_per_learning_rate(tmp_path, tiny):
    # No hydra.sweep.dir: the default sweep dir must resolve on its own (outputs/multirun/<task>/<time>).
    began = time.monotonic()
    proc = run_module("pragexp.train", ["-m", "model=lstm", "optimizer.lr=1e-3,5e-4", *tiny], tmp_path)
    elapsed = time.monotonic() - began
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Each job's summary line ends with its own wall time (the first one's counts the imports): together
    # they fit in the process's time, which they would not if the second counted the first.
    walls = re.findall(r"^pragexp: .*, (?:(\d+) min )?(\d+) s\)$", proc.stdout, flags=re.MULTILINE)
    assert len(walls) == 2, proc.stdout[-2000:]
    assert sum(60 * int(m or 0) + int(s) for m, s in walls) <= elapsed + 1
    (sweep,) = (tmp_path / "outputs" / "multirun" / "grice_recovery").iterdir()
    jobs = sorted(p.parent.name for p in sweep.glob("*/metrics.json"))
    assert jobs == ["0", "1"]
    for job, lr in (("0", 1e-3), ("1", 5e-4)):
        config = OmegaConf.load(sweep / job / ".hydra" / "config.yaml")
        assert config.optimizer.lr == lr
        assert "test/r@1" in json.loads((sweep / job / "metrics.json").read_text())


@pytest.mark.slow
def test_ddp_two_processes_count_every_test_example_once(tmp_path):
    sample = GRICE_FIXTURE
    doc = json.loads(sample.read_text())
    # An odd number of rounds, so the distributed sampler must repeat one.
    dialogs = doc["data"]["dialogs"]
    while sum(len(d["dialog"]) for d in dialogs) % 2 == 0:
        dialogs = dialogs[1:]
    doc["data"]["dialogs"] = dialogs
    expected = sum(len(d["dialog"]) for d in dialogs)
    assert expected % 2 == 1 and expected > 20
    test_file = tmp_path / "odd.json"
    test_file.write_text(json.dumps(doc))
    run_dir = tmp_path / "ddp"
    proc = run_module(
        "pragexp.train",
        [
            "task=grice_recovery",
            "model=lstm",
            "trainer=ddp",
            "trainer.devices=2",
            *FAST,
            "data=grice_official",
            f"data.train_path={sample}",
            f"data.val_path={sample}",
            f"data.test_path={test_file}",
            "data.eval_batch_size=4",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test/count"] == expected
    assert proc.stdout.strip().splitlines()[-1].startswith("pragexp: grice_recovery/lstm")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("task=nope", "Could not find 'task/nope'"),
        ("model=nope", "Could not find 'model/nope'"),
    ],
)
def test_unknown_choice_lists_the_options(tmp_path, override, message):
    proc = run_module("pragexp.train", [override, "logger=none"], tmp_path)
    assert proc.returncode != 0
    assert message in proc.stderr and "Available options" in proc.stderr


@pytest.mark.slow
def test_missing_data_file_is_named_and_nothing_is_written(tmp_path):
    run_dir = tmp_path / "run"
    missing = tmp_path / "nowhere" / "train.json"
    sample = GRICE_FIXTURE
    proc = run_module(
        "pragexp.train",
        [
            "data=grice_official",
            f"data.train_path={missing}",
            f"data.val_path={sample}",
            f"data.test_path={sample}",
            *FAST,
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode != 0
    assert str(missing) in proc.stderr
    assert not (run_dir / "metrics.json").exists() and not (run_dir / "checkpoints").exists()


@pytest.mark.slow
def test_malformed_json_is_named_with_its_line(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"data": {"dialogs": [\n  {"dialog_id": 3 "dialog": []}\n]}}')
    run_dir = tmp_path / "run"
    proc = run_module(
        "pragexp.train",
        [
            "data=grice_official",
            f"data.train_path={bad}",
            f"data.val_path={bad}",
            f"data.test_path={bad}",
            *FAST,
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode != 0
    assert f"{bad}:2: malformed JSON" in proc.stderr
    assert not (run_dir / "metrics.json").exists()
