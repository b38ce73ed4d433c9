"""The entry points' command line, checked before Hydra composes anything: `checked_argv(argv, entry)`.

The line is read as Hydra reads it (its own argparse parser), so Hydra's flags and their values (`--cfg job`,
`-p trainer`, `--info defaults`) are never taken for overrides; the checks see the overrides only:

- A task-owned group (`retriever` for PragmatiCQA, `judge` and `prompt` for the LLM tasks) chosen for a task
  that does not take it. A task chooses its own groups in its defaults list (`- /retriever: dpr`), as it
  chooses its data; they are not in conf/train.yaml, so Hydra would report "Could not override 'retriever'.
  No match in the defaults list" (or, with `+retriever=`, silently add an unused node). The check says
  instead which tasks take the group.
- `-m` with `--cfg` or `--info`, which Hydra refuses together ("Only one of --run, --multirun, --cfg..."):
  they show one job's config, so `-m` is dropped, and a sweep is refused.
- `--hydra-help` with overrides: Hydra composes that help from its own config alone, so an app override such
  as `task=circa` fails there ("Could not override 'task'"); the flags it lists do not depend on the job, so
  the overrides are dropped once checked.

A line Hydra refuses (an unknown flag, an override after a flag's value, a task that does not exist) is left
to Hydra to report.
"""

from __future__ import annotations

import argparse
from functools import cache

from hydra import compose, initialize_config_dir
from hydra._internal.utils import get_args_parser  # the parser hydra.main uses (hydra-core 1.3)
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import HydraException

from pragexp import CONFIG_DIR

TASK_GROUPS = ("retriever", "judge", "prompt")


class CommandLineError(ValueError):
    pass


class MisplacedGroup(CommandLineError):
    pass


def hydra_args(argv: list[str]) -> argparse.Namespace | None:
    """`argv` as Hydra parses it (flags, and `.overrides`); None for a line Hydra refuses. `--version`
    prints Hydra's version and exits here, as it would in Hydra."""
    parser = get_args_parser()
    parser.exit_on_error = False  # raise instead of printing: Hydra prints its own message afterwards
    try:
        args, unknown = parser.parse_known_args(argv)
    except argparse.ArgumentError:
        return None
    return None if unknown else args


def _choices(config_name: str, overrides: list[str]) -> dict:
    """The group choices of the config these overrides compose (Hydra's runtime choices)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = compose(config_name, overrides=overrides, return_hydra_config=True)
    GlobalHydra.instance().clear()
    return dict(cfg.hydra.runtime.choices)


@cache
def groups_of(task: str) -> frozenset[str]:
    """The task-owned groups `task` takes."""
    choices = _choices("train", [f"task={task}"])
    return frozenset(g for g in TASK_GROUPS if choices.get(g) is not None)


def tasks_taking(group: str) -> tuple[str, ...]:
    tasks = sorted(p.stem for p in (CONFIG_DIR / "task").glob("*.yaml") if not p.stem.startswith("_"))
    return tuple(t for t in tasks if group in groups_of(t))


def _values(o: Override) -> list[str]:
    return list(o.sweep_string_iterator()) if o.is_sweep_override() else [o.get_value_element_as_str()]


def _check_task_groups(overrides: list[Override], config_name: str) -> None:
    chosen = [o for o in overrides if o.key_or_group in TASK_GROUPS and not o.is_delete()]
    if not chosen:
        return
    # The task: the line's (each value of a sweep), or the one the rest of the line composes (a preset's).
    rest, task_values = [], None
    for o in overrides:
        if o in chosen:
            continue
        if o.is_sweep_override():
            values = _values(o)
            if o.key_or_group == "task":
                task_values = values
            rest.append(f"{o.get_key_element()}={values[0]}")
        else:
            rest.append(o.input_line)
    for task in task_values or [_choices(config_name, rest)["task"]]:
        for o in chosen:
            group = o.key_or_group
            if group not in groups_of(task):  # one compose; all tasks only for the message
                raise MisplacedGroup(
                    f"{o.input_line}: task={task} takes no {group}; the tasks that take one: "
                    f"{', '.join(tasks_taking(group))}"
                )


def check_command_line(argv: list[str], entry: str = "train") -> list[str]:
    """The command line to hand Hydra, or CommandLineError. `entry`: `train` or `eval`, the entry point
    (`python -m pragexp.<entry>`) whose config the line composes."""
    args = hydra_args(argv)
    if args is None:
        return argv
    try:
        overrides = OverridesParser.create().parse_overrides(args.overrides)
        _check_task_groups(overrides, args.config_name or entry)
    except HydraException:
        # An override that does not parse or compose (Hydra reports it), or a sweep only Hydra enumerates
        # (glob, interval).
        return argv
    if args.multirun and (args.cfg or args.info):
        sweep = next((o for o in overrides if o.is_sweep_override()), None)
        if sweep is not None:
            raise CommandLineError(
                f"{sweep.input_line}: --cfg and --info show one job's config; give one value"
            )
        # -m, --multirun, or an abbreviation argparse accepts (--multi)
        return [a for a in argv if not (a == "-m" or (len(a) > 2 and "--multirun".startswith(a)))]
    if args.hydra_help:
        return [a for a in argv if a not in args.overrides]
    return argv


def checked_argv(argv: list[str], entry: str) -> list[str]:
    """The entry points' check: the command line for Hydra, or the message and exit status 1, as Hydra
    ends on a bad override."""
    try:
        return check_command_line(argv, entry)
    except CommandLineError as err:
        raise SystemExit(f"error: {err}") from None
