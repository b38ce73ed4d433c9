"""Hydra's own flags on both entry points (`--cfg`, `--resolve`, `--package`, `--info`, `--help`,
`--hydra-help`, `-m`), with and without overrides, and the check that runs before Hydra
(pragexp/entry/command_line.py): it reads the line as Hydra does and refuses a task-owned group for a task
that does not take it. The parsing is tested in-process; the commands as users type them in subprocesses."""

import pytest
from conftest import run_module
from omegaconf import DictConfig, OmegaConf

from pragexp.entry.command_line import CommandLineError, MisplacedGroup, check_command_line, hydra_args

CLASSIFICATION = "pragexp.tasks.classification.ClassificationTask"
GRICE_RECOVERY = "pragexp.tasks.grice.GriceRecoveryTask"  # the default task
PRAGMATICQA = "pragexp.tasks.pragmaticqa.PragmatiCQATask"
INTENTIONS_REPLY = "pragexp.tasks.intentions.IntentionsReplyTask"
MISPLACED = "retriever=minilm: task=circa takes no retriever; the tasks that take one: pragmaticqa"


@pytest.mark.parametrize(
    ("argv", "overrides"),
    [
        (["--cfg", "job"], []),
        (["-c", "job", "task=circa"], ["task=circa"]),
        (["--cfg", "hydra", "--resolve", "task=circa", "model=majority"], ["task=circa", "model=majority"]),
        (["-p", "trainer", "--cfg", "all", "task=circa"], ["task=circa"]),
        (["--package", "model", "-c", "job"], []),
        (["--info"], []),
        (["--info", "defaults", "task=circa"], ["task=circa"]),
        (["-i", "defaults-tree"], []),
        (["--help", "task=circa"], ["task=circa"]),
        (["--hydra-help"], []),
        (["-m", "task=circa,nli", "retriever=minilm"], ["task=circa,nli", "retriever=minilm"]),
        (["task=circa", "--multirun"], ["task=circa"]),
        (["-cn", "eval", "task=circa"], ["task=circa"]),
    ],
)
def test_hydra_flags_and_their_values_are_not_overrides(argv, overrides):
    assert hydra_args(argv).overrides == overrides


@pytest.mark.parametrize(
    "argv",
    [
        ["--cfg", "bogus"],  # not a choice of --cfg
        ["--info", "task=circa"],  # --info takes task=circa for its value
        ["task=circa", "--cfg", "job", "retriever=minilm"],  # overrides after a flag's value
        ["--nope", "task=circa", "retriever=minilm"],
    ],
)
def test_a_line_hydra_refuses_is_left_to_hydra(argv):
    assert hydra_args(argv) is None
    assert check_command_line(argv) == argv  # unchecked: Hydra prints its usage and error


@pytest.mark.parametrize(
    "argv",
    [
        ["task=circa", "retriever=minilm"],
        ["--cfg", "job", "task=circa", "retriever=minilm"],
        ["-c", "hydra", "-p", "task", "task=circa", "retriever=minilm"],
        ["--info", "defaults", "task=circa", "retriever=minilm"],
        ["-m", "task=pragmaticqa,circa", "retriever=minilm"],
    ],
)
def test_a_misplaced_group_is_refused_with_or_without_flags(argv):
    with pytest.raises(MisplacedGroup, match=MISPLACED):
        check_command_line(argv)


def test_multirun_with_cfg_or_info_shows_one_job():
    # Hydra refuses -m beside --cfg or --info; they show one job's config, so -m is dropped.
    assert check_command_line(["-m", "--cfg", "job", "task=circa"]) == ["--cfg", "job", "task=circa"]
    assert check_command_line(["--info", "--multirun"]) == ["--info"]
    assert check_command_line(["--multi", "-c", "hydra"]) == ["-c", "hydra"]  # argparse's abbreviation
    assert check_command_line(["-m", "task=circa,nli"]) == ["-m", "task=circa,nli"]  # a sweep, as typed
    with pytest.raises(CommandLineError, match=r"task=circa,nli: --cfg and --info show one job's config"):
        check_command_line(["-m", "--cfg", "job", "task=circa,nli"])


def test_hydra_help_drops_the_overrides_it_cannot_compose_once_they_are_checked():
    assert check_command_line(["--hydra-help", "task=circa", "model=majority"]) == ["--hydra-help"]
    with pytest.raises(MisplacedGroup):
        check_command_line(["--hydra-help", "task=circa", "retriever=minilm"])


def test_good_lines_go_to_hydra_as_typed():
    for argv in (
        [],
        ["--cfg", "job", "task=pragmaticqa", "retriever=minilm"],
        ["-m", "task=circa,nli", "model=majority"],
        ["--help"],
    ):
        assert check_command_line(argv) == argv


def shown(proc) -> DictConfig:
    """The YAML a command printed (it must succeed)."""
    assert proc.returncode == 0, proc.stderr[-3000:]
    return OmegaConf.create(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "args", "target"),
    [
        ("pragexp.train", ["--cfg", "job", "task=circa"], CLASSIFICATION),
        ("pragexp.train", ["-c", "job"], GRICE_RECOVERY),
        ("pragexp.train", ["-m", "--cfg", "job", "task=circa"], CLASSIFICATION),
        ("pragexp.eval", ["--multirun", "-c", "job"], GRICE_RECOVERY),
        # data.path given: its default, the fetched release, is not in the tests' data folder
        (
            "pragexp.eval",
            ["-c", "job", "--resolve", "task=pragmaticqa", "retriever=minilm", "data.path=x"],
            PRAGMATICQA,
        ),
        ("pragexp.eval", ["-c", "job", "task=intentions_reply", "judge=llm"], INTENTIONS_REPLY),
    ],
)
def test_cfg_job_prints_the_job_config(tmp_path, entry, args, target):
    proc = run_module(entry, args, tmp_path)
    cfg = shown(proc)
    assert cfg.task._target_ == target and "hydra" not in cfg
    assert cfg.train is (entry == "pragexp.train")
    if "--resolve" in args:
        assert cfg.task_name == "pragmaticqa" and cfg.retriever.query_encoder == "minilm"
    else:
        assert "\ntask_name: ${hydra:runtime.choices.task}\n" in proc.stdout


@pytest.mark.slow
def test_cfg_hydra_and_package(tmp_path):
    proc = run_module("pragexp.train", ["--cfg", "hydra"], tmp_path)
    assert list(shown(proc)) == ["hydra"] and "\n    subdir: ${hydra.job.num}\n" in proc.stdout
    proc = run_module("pragexp.eval", ["-p", "trainer", "--cfg", "all", "task=circa"], tmp_path)
    assert proc.stdout.startswith("# @package trainer\n")
    assert shown(proc).max_epochs == 3  # circa's


@pytest.mark.slow
def test_info_prints_hydras_sections(tmp_path):
    proc = run_module("pragexp.train", ["--info"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for section in (
        "Installed Hydra Plugins",
        "Config search path",
        "Defaults Tree",
        "Defaults List",
        "Config",
    ):
        assert f"\n{section}\n" in proc.stdout
    proc = run_module("pragexp.eval", ["--info", "defaults", "task=circa"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Defaults List" in proc.stdout and "task/circa" in proc.stdout
    assert "Installed Hydra Plugins" not in proc.stdout


@pytest.mark.slow
def test_help_prints_the_app_help_and_hydra_help_the_flags(tmp_path):
    proc = run_module("pragexp.train", ["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (
        "== Configuration groups ==" in proc.stdout and "\ntask: " in proc.stdout and "circa" in proc.stdout
    )
    proc = run_module("pragexp.eval", ["--help", "task=circa"], tmp_path)
    assert proc.returncode == 0 and CLASSIFICATION in proc.stdout, proc.stderr[-3000:]
    proc = run_module("pragexp.train", ["--hydra-help"], tmp_path)
    assert proc.returncode == 0 and "== Flags ==" in proc.stdout and "--cfg,-c" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "args", "message"),
    [
        ("pragexp.train", ["task=circa", "retriever=minilm"], MISPLACED),
        ("pragexp.train", ["--cfg", "job", "task=circa", "retriever=minilm"], MISPLACED),
        (
            "pragexp.eval",
            ["-m", "--info", "defaults", "task=circa,nli"],
            "task=circa,nli: --cfg and --info show one job's config",
        ),
    ],
)
def test_a_refused_line_stops_with_one_line(tmp_path, entry, args, message):
    proc = run_module(entry, args, tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: {message}") and proc.stderr.count("\n") == 1, proc.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "args"),
    [
        ("pragexp.eval", ["--cfg", "hydra", "task=circa"]),
        ("pragexp.eval", ["--hydra-help", "task=circa"]),
        ("pragexp.train", ["-p", "trainer", "--cfg", "job", "--resolve", "task=circa"]),
        ("pragexp.train", ["--package", "model", "-c", "all", "task=circa", "model=majority"]),
    ],
)
def test_each_flag_works_on_the_other_entry_point_too_with_a_task(tmp_path, entry, args):
    proc = run_module(entry, args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if "--hydra-help" in args:
        assert "== Flags ==" in proc.stdout and "--cfg,-c" in proc.stdout
    elif "hydra" in args:
        assert list(shown(proc)) == ["hydra"] and "task: circa" in proc.stdout  # the runtime choices
    elif "trainer" in args:  # --resolve: numbers, no interpolations
        assert proc.stdout.startswith("# @package trainer\n") and shown(proc).max_epochs == 3
    else:
        assert proc.stdout.startswith("# @package model\n")
        assert shown(proc)._target_ == "pragexp.models.majority.MajorityClassifier"
