"""End-to-end runs in-process: every (task, model) pair, eval from a checkpoint, resume, seeds, W&B
offline."""

import json
import re
from pathlib import Path

import pytest
import torch
from conftest import CONF, GRICE_FIXTURE, choices, compose_config
from omegaconf import OmegaConf

from pragexp.run import run
from pragexp.tasks.grice import GriceRecoveryTask


def task_setting(task: str, key: str):
    """A top-level setting of a task's config file, or of the shared base it names first in its defaults
    (`_llm_benchmark`, ...): read from the files, as collecting the tests must not compose every config."""
    node = OmegaConf.load(CONF / "task" / f"{task}.yaml")
    if key in node:
        return node[key]
    defaults = [d for d in node.get("defaults", []) if isinstance(d, str)]
    bases = [d for d in defaults if d.startswith("_") and d != "_self_"]
    return task_setting(bases[0], key) if bases else None


def task_model_pairs():
    """Every task with every model it takes, but those that need another run's checkpoint (a mandatory `???`
    setting, such as model=transferred's model.ckpt): their own tests make that run first."""
    for task in choices("task"):
        if task_setting(task, "evaluation_only"):
            # pragexp.train refuses it (ToMATO's licence): tests/test_tomato_data.py checks the refusal
            continue
        for model in task_setting(task, "supported_models"):
            # the model's own file is enough to see a mandatory setting (and costs no composition)
            node = OmegaConf.load(CONF / "model" / f"{model}.yaml")
            if not any(OmegaConf.is_missing(node, key) for key in node):
                yield task, model


def test_the_pairs_read_from_the_files_are_those_hydra_composes():
    for task in choices("task"):
        cfg = compose_config([f"task={task}"], CONF.parent / "outputs" / "unused")
        assert task_setting(task, "evaluation_only") == cfg.get("evaluation_only")
        assert list(task_setting(task, "supported_models")) == list(cfg.supported_models)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "model"), list(task_model_pairs()))
def test_every_task_model_pair_runs_fast_dev_run(task, model, make_config):
    cfg = make_config([f"task={task}", f"model={model}", "debug=fdr"])
    metrics = run(cfg)
    assert metrics, "no metrics returned"
    assert all(key.startswith(("val/", "test/")) for key in metrics)
    assert any(key.startswith(f"test/{cfg.monitor.split('/', 1)[1]}") for key in metrics)
    written = json.loads(Path(cfg.paths.output_dir, "metrics.json").read_text())
    assert written == pytest.approx(metrics)


@pytest.mark.slow
def test_train_writes_checkpoints_metrics_and_summary(make_config, capsys):
    cfg = make_config(["task=grice_recovery", "model=memnn", "trainer.max_epochs=2"])
    metrics = run(cfg)
    out = cfg.paths.output_dir
    ckpts = sorted(p.name for p in Path(out, "checkpoints").iterdir())
    assert "last.ckpt" in ckpts and any(name.startswith("best-") for name in ckpts)
    for key in ("test/r@1", "test/mrr", "val/r@1", "test/count"):
        assert key in metrics
    assert 0.0 <= metrics["test/r@1"] <= metrics["test/mrr"] <= 1.0
    assert any(k.startswith("test/r@1/") for k in metrics), "per-implicature metrics missing"
    last_line = capsys.readouterr().out.strip().splitlines()[-1]
    assert last_line.startswith("pragexp: grice_recovery/memnn") and "test/r@1=" in last_line
    assert re.search(rf"\({re.escape(str(out))}, (\d+ min )?\d+ s\)$", last_line), last_line  # dir, wall time


def test_threads_setting_holds_for_the_job_only(make_config, monkeypatch):
    seen = []
    step = GriceRecoveryTask.training_step

    def recording_step(self, batch, batch_idx):
        seen.append(torch.get_num_threads())
        return step(self, batch, batch_idx)

    monkeypatch.setattr(GriceRecoveryTask, "training_step", recording_step)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        run(make_config(["task=grice_recovery", "model=memnn", "debug=fdr"]))  # the task sets threads: 1
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_eval_from_checkpoint_gives_the_same_test_metrics(make_config):
    cfg = make_config(["task=grice_qa", "model=lstm", "trainer.max_epochs=2"], out="train")
    trained = run(cfg)
    best = next(p for p in Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    # model=memnn on the command line: the checkpoint's architecture (lstm) must win.
    eval_cfg = make_config(["task=grice_qa", "model=memnn", f"ckpt_path={best}"], name="eval", out="eval")
    evaluated = run(eval_cfg)
    tests = {k: v for k, v in trained.items() if k.startswith("test/")}
    assert evaluated == pytest.approx(tests, abs=1e-6)


@pytest.mark.slow
def test_eval_on_other_files_uses_the_checkpoint_vocabulary(make_config):
    cfg = make_config(["task=grice_recovery", "model=memnn"], out="train")
    run(cfg)
    best = next(p for p in Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    sample = GRICE_FIXTURE
    eval_cfg = make_config(
        ["task=grice_recovery", "data=grice_official", f"data.path=[{sample},{sample}]", f"ckpt_path={best}"],
        name="eval",
        out="eval",
    )
    metrics = run(eval_cfg)
    rounds = sum(len(d["dialog"]) for d in json.loads(sample.read_text())["data"]["dialogs"])
    assert metrics["test/count"] == 2 * rounds  # every round of both files, once
    assert "test/r@1/ignorance" in metrics


@pytest.mark.slow
def test_resume_from_last_checkpoint(make_config):
    first = make_config(["task=grice_recovery", "model=lstm", "trainer.max_epochs=1"], out="same")
    run(first)
    ckpt_dir = Path(first.paths.output_dir, "checkpoints")
    steps_one_epoch = torch.load(ckpt_dir / "last.ckpt", weights_only=False)["global_step"]
    resumed = make_config(
        ["task=grice_recovery", "model=lstm", "trainer.max_epochs=2", "ckpt_path=last"], out="same"
    )
    run(resumed)
    state = torch.load(ckpt_dir / "last.ckpt", weights_only=False)
    # Lightning writes last.ckpt after a validation that saved a better checkpoint (epoch 1) or, when the
    # second epoch was no better, as training ends (epoch 2): either way after two epochs of steps.
    assert state["epoch"] in (1, 2) and state["global_step"] == 2 * steps_one_epoch


@pytest.mark.slow
def test_same_seed_same_metrics_different_seed_differs(make_config):
    a = run(make_config(["model=memnn", "seed=0"], out="a"))
    b = run(make_config(["model=memnn", "seed=0"], out="b"))
    c = run(make_config(["model=memnn", "seed=1"], out="c"))
    assert a == b
    assert a != c


@pytest.mark.slow
def test_wandb_offline_writes_a_run_dir(make_config, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = make_config(["logger=wandb_offline", "debug=fdr"])
    run(cfg)
    runs = list(Path(cfg.paths.output_dir, "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and any(runs[0].rglob("*.wandb"))


@pytest.mark.slow
def test_model_that_does_not_fit_the_task_is_refused(make_config):
    cfg = make_config(["task=grice_qa"])
    cfg.supported_models = ["lstm"]
    with pytest.raises(ValueError, match="model=memnn does not fit task=grice_qa"):
        run(cfg)


@pytest.mark.slow
def test_eval_without_a_checkpoint_says_so(make_config):
    cfg = make_config([], name="eval", out="eval")
    with pytest.raises(Exception, match="ckpt_path"):
        run(cfg)
