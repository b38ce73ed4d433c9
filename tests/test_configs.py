"""Every option of every config group composes, and the train/eval configs resolve."""

import pytest
from conftest import CONF, choices, compose_config
from omegaconf import OmegaConf

SKIP_GROUPS = {"hydra", "task", "experiment"}  # hydra is Hydra's own; tasks/experiments are run in test_train


def options():
    for group in sorted(p for p in CONF.iterdir() if p.is_dir() and p.name not in SKIP_GROUPS):
        for option in choices(group.name):
            yield f"{group.name}={option}"


@pytest.mark.parametrize("override", list(options()))
def test_every_option_composes(override, tmp_path):
    extra = ["ckpt_path=x.ckpt"] if override.startswith("debug") else []
    cfg = compose_config([override, *extra], tmp_path)
    OmegaConf.to_container(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]), resolve=True)
    assert cfg.task_name == "grice_recovery"


@pytest.mark.parametrize("task", choices("task"))
def test_every_task_composes_with_its_models(task, tmp_path):
    cfg = compose_config([f"task={task}"], tmp_path)
    assert cfg.monitor.startswith("val/") and cfg.supported_models
    for model in cfg.supported_models:
        assert (CONF / "model" / f"{model}.yaml").is_file(), f"task {task} names unknown model {model}"


def test_eval_config_needs_a_checkpoint(tmp_path):
    cfg = compose_config(["ckpt_path=/some/model.ckpt"], tmp_path, "eval")
    assert cfg.train is False and cfg.test is True
    assert "eval" in cfg.hydra.run.dir


def test_run_dirs_follow_task_and_model(tmp_path):
    cfg = compose_config(["task=grice_qa", "model=lstm"], tmp_path)
    assert "/grice_qa/lstm/" in cfg.hydra.run.dir
    assert "/multirun/grice_qa/" in cfg.hydra.sweep.dir
