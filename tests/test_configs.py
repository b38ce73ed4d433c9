"""Every option of every config group composes, and the train/eval configs resolve."""

import functools
from pathlib import Path

import pytest
from conftest import CONF, choices, compose_config, fetched_paths_replaced, run_module
from omegaconf import OmegaConf

from pragexp.entry.command_line import TASK_GROUPS, MisplacedGroup, check_command_line, tasks_taking

SKIP_GROUPS = {"hydra", "task", "experiment"}  # hydra is Hydra's own; tasks/experiments are run in test_train


def options():
    for group in sorted(p for p in CONF.iterdir() if p.is_dir() and p.name not in SKIP_GROUPS):
        for option in choices(group.name):
            yield f"{group.name}={option}"


@pytest.mark.parametrize("override", list(options()))
def test_every_option_composes(override, tmp_path):
    """Each option with the default task, or, for a task's own group (data included), with a task of its."""
    group, option = override.split("=", 1)
    task = tasks_taking(group)[0] if group in TASK_GROUPS else "grice_recovery"
    if group in (
        "data",
        *TASK_GROUPS,
    ):  # the task whose own choice it is (grice_official: the GRICE tasks' too;
        # a prompt group may read its task's data settings, as circa's reads data.labels)
        task = next((t for t in choices("task") if task_choice(t, group) == option), task)
    extra = ["ckpt_path=x.ckpt"] if override.startswith("debug") else []
    cfg = compose_config([f"task={task}", override, *extra], tmp_path)
    job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
    OmegaConf.to_container(
        fetched_paths_replaced(job), resolve=True
    )  # tests fetch nothing: test_release_paths
    assert cfg.task_name == task


@functools.cache
@functools.cache
def task_choice(task: str, group: str) -> str | None:
    return compose_config([f"task={task}"], Path("unused")).hydra.runtime.choices.get(group)


def task_data(task: str) -> str:
    return task_choice(task, "data")


def test_task_groups_belong_to_their_tasks(tmp_path):
    assert tasks_taking("retriever") == ("pragmaticqa",)
    assert "intentions_reply" in tasks_taking("judge") and "intentions_reply" in tasks_taking("prompt")
    assert "pragmaticqa" in tasks_taking("prompt") and "circa" in tasks_taking(
        "prompt"
    )  # model=llm's prompts
    cfg = compose_config(["task=intentions_mc"], tmp_path)
    # Not global: a task composes without the groups it does not take (every task takes a prompt).
    for group in set(TASK_GROUPS) - {"prompt"}:
        assert group not in cfg
    # The default task takes only its own prompt group, none of the others
    default = compose_config([], tmp_path)
    assert "retriever" not in default and "judge" not in default
    assert default.hydra.runtime.choices.prompt == "grice_recovery"


@pytest.mark.parametrize(
    "argv",
    [
        ["task=circa", "retriever=minilm"],
        ["-m", "task=pragmaticqa,circa", "+retriever=minilm"],
        ["judge=llm"],
    ],
)
def test_a_task_group_for_a_task_that_does_not_take_it_names_the_tasks_that_do(argv):
    with pytest.raises(MisplacedGroup, match=r"takes no (retriever|judge); the tasks that take one: \w+"):
        check_command_line(argv)
    check_command_line(["task=pragmaticqa", "retriever=minilm"])  # its own task: fine
    check_command_line(["experiment=pragmaticqa/offline", "retriever=dpr"])  # the task set by a preset


@pytest.mark.slow
def test_the_entry_point_stops_at_once_with_that_message(tmp_path):
    done = run_module("pragexp.train", ["task=circa", "retriever=minilm"], tmp_path)
    assert done.returncode == 1
    assert (
        "retriever=minilm: task=circa takes no retriever; the tasks that take one: pragmaticqa" in done.stderr
    )


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
