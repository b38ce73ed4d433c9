"""Whether a run dir holds a finished run of given settings: what a suite
(hydra_plugins/pragexp_suite_sweeper) asks before it runs a job again. Finished: its `metrics.json` and
`run.json` are written (a run writes run.json last, each by a rename: a run stopped halfway has not both).
Its settings: the command line it ran with, as Hydra kept it (`.hydra/overrides.yaml`), without what only
launches a job (`runs.settings.LAUNCH_OVERRIDES`): since the config depends only on the command line, the
same line is the same run."""

from __future__ import annotations

from pathlib import Path

import yaml

from pragexp.runs.record import RUN_FILE
from pragexp.runs.settings import LAUNCH_OVERRIDES


def what_runs(overrides: list[str]) -> list[str]:
    """The settings of a command line that make its run: launch settings left out."""
    return [o for o in overrides if not o.lstrip("+~").startswith(LAUNCH_OVERRIDES)]


def finished_overrides(run_dir: Path) -> list[str] | None:
    """The settings a finished run in `run_dir` was made with; None where no run finished there."""
    run_dir = Path(run_dir)
    saved = run_dir / ".hydra" / "overrides.yaml"
    if not ((run_dir / "metrics.json").is_file() and (run_dir / RUN_FILE).is_file() and saved.is_file()):
        return None
    overrides = yaml.safe_load(saved.read_text(encoding="utf-8")) or []
    if not isinstance(overrides, list):
        raise ValueError(f"{saved}: expected a list of overrides, got {type(overrides).__name__}")
    return what_runs([str(o) for o in overrides])


def finished_as(run_dir: Path, overrides: list[str]) -> bool | None:
    """True: a finished run of these settings is in `run_dir`; False: one of other settings; None: none."""
    found = finished_overrides(run_dir)
    return None if found is None else found == what_runs(overrides)
