"""The datasets' own report sections, as plugins the task configs declare.

A task config names its dataset's section in `declares.section`: a module of the dataset's package
(`pragexp.data.<dataset>.report_section`), recorded in each run's run.json (`task.section`). The report
imports it by that name (data may not import the report, so the link is a name, not an import) and checks it
against `ReportSection` as it loads it: an error names the task, its config and the members the module lacks.
tests/test_report_sections.py checks every task config's section: it resolves, sits in its dataset's package
and offers the contract.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Protocol

from pragexp.report.runs import Run
from pragexp.reporting.results import Column
from pragexp.utils.contracts import ContractError, require


class ReportSection(Protocol):
    """What a dataset's report section module offers; each function reads the runs of every task and keeps its
    own (those of its dataset's tasks)."""

    def sections(self, runs: list[Run]) -> list[str]:
        """The section's Markdown lines (tables under `###` headings); [] where no run is its own."""

    def figures(self, runs: list[Run], folder: Path) -> list[Path]:
        """The PNG files it writes into `folder` (`--figures`); [] where it draws none for these runs."""

    def columns(self, runs: list[Run]) -> list[Column]:
        """The scorecard columns it computes itself (by the title of a headline its task declares), in place
        of a headline metric's mean over the runs; [] where every column is such a mean."""


def task_config(task: str) -> str:
    return f"conf/task/{task}.yaml"


def load_section(name: str, task: str) -> ModuleType:
    """The report section `name` that `task` declares, checked against `ReportSection`; a `ContractError`
    names the task, its config and what is wrong."""
    where = f"task {task} ({task_config(task)}, declares.section)"
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        raise ContractError(f"{where}: report section {name!r} cannot be imported ({error})") from None
    require(
        module, ReportSection, f"{where}: report section {name}", "a section offers all three, [] for none"
    )
    return module


def section_modules(runs: list[Run]) -> list[ModuleType]:
    """The sections the runs' tasks declare (run.json's `task.section`), once each, in their tasks' order."""
    first: dict[str, str] = {}  # section -> the first task (by name) that declares it
    for run in sorted(runs, key=lambda r: r.task):
        if run.record.task.section:
            first.setdefault(run.record.task.section, run.task)
    return [load_section(name, task) for name, task in first.items()]
