"""The datasets' own report sections: the modules the runs' tasks declare (run.json's `task.section`), each with
`sections(runs)` (markdown lines), `figures(runs, folder)` (the paths written) and optionally `columns(runs)`
(scorecard columns that need more than the mean of a headline metric)."""

from __future__ import annotations

import importlib
from types import ModuleType


def section_modules(runs) -> list[ModuleType]:
    """The sections the runs' tasks declare, by task."""
    declared = (run.record.task.section for run in sorted(runs, key=lambda r: r.task))
    return [importlib.import_module(name) for name in dict.fromkeys(declared) if name]


def sections(runs) -> list[str]:
    return [line for module in section_modules(runs) for line in module.sections(runs)]


def figures(runs, folder) -> list:
    return [path for module in section_modules(runs) for path in module.figures(runs, folder)]


def columns(runs) -> list:
    return [c for module in section_modules(runs) if hasattr(module, "columns") for c in module.columns(runs)]
