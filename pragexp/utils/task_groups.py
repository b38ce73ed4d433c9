"""Config groups that belong to tasks: `retriever` (PragmatiCQA), `judge` and `prompt` (the LLM tasks).

A task chooses its own groups in its defaults list (`- /retriever: dpr`), as it chooses its data; they are
not in conf/train.yaml. Choosing one on the command line for a task that does not take it is a mistake
Hydra reports as "Could not override 'retriever'. No match in the defaults list" (or, with `+retriever=`,
silently adds an unused node). `check_task_groups(argv)` runs before Hydra and says instead which tasks
take the group.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser

TASK_GROUPS = ("retriever", "judge", "prompt")
CONFIG_DIR = Path(__file__).resolve().parents[2] / "conf"


class MisplacedGroup(ValueError):
    pass


def _choices(config_name: str, overrides: list[str]) -> dict:
    """The group choices of the config these overrides compose (Hydra's runtime choices)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name, overrides=overrides, return_hydra_config=True)
    GlobalHydra.instance().clear()
    return dict(cfg.hydra.runtime.choices)


@cache
def tasks_taking(group: str) -> tuple[str, ...]:
    tasks = sorted(p.stem for p in (CONFIG_DIR / "task").glob("*.yaml") if not p.stem.startswith("_"))
    return tuple(t for t in tasks if _choices("train", [f"task={t}"]).get(group) is not None)


def check_task_groups(argv: list[str], config_name: str = "train") -> None:
    """Refuse, naming the tasks that take it, a task-owned group chosen for a task that does not take it.
    `argv`: the command line's arguments (Hydra's flags such as -m are skipped)."""
    parsed = OverridesParser.create().parse_overrides([a for a in argv if not a.startswith("-")])
    chosen = [o for o in parsed if o.key_or_group in TASK_GROUPS and not o.is_delete()]
    if not chosen:
        return
    rest, task_values = [], None
    for o in parsed:
        if o in chosen:
            continue
        if o.is_sweep_override():
            values = list(o.sweep_string_iterator())
            if o.key_or_group == "task":
                task_values = values
            rest.append(f"{o.get_key_element()}={values[0]}")
        else:
            rest.append(o.input_line)
    tasks = task_values or [_choices(config_name, rest)["task"]]
    for task in tasks:
        for o in chosen:
            group = o.key_or_group
            if task not in tasks_taking(group):
                raise MisplacedGroup(
                    f"{o.input_line}: task={task} takes no {group}; the tasks that take one: "
                    f"{', '.join(tasks_taking(group))}"
                )


def exit_on_misplaced_groups(argv: list[str], config_name: str) -> None:
    """The entry points' check: the message and exit status 1, as Hydra ends on a bad override."""
    try:
        check_task_groups(argv, config_name)
    except MisplacedGroup as err:
        raise SystemExit(f"error: {err}") from None
