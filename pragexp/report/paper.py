"""The papers' published numbers beside our rows: which paper file covers a task, and which of its rows fits a
row of runs. A paper file lives in its dataset's package, `pragexp/data/<dataset>/<dataset>.json` (format:
pragexp.utils.papers)."""

from __future__ import annotations

from pathlib import Path

from pragexp.report.runs import Row
from pragexp.utils.papers import STAGES, family, read_paper_data, read_paper_table
from pragexp.utils.results import parse_row_name

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
__all__ = [
    "STAGES",
    "family",
    "load_paper",
    "matching_paper_row",
    "paper_data",
    "paper_row",
    "parse_row_name",
]


def paper_file(record) -> Path | None:
    """The paper file a run's task declares (run.json's `task.paper`), in its dataset's package."""
    return DATA_DIR / record.data.dataset / record.task.paper if record.task.paper else None


def paper_files(paper_dir: Path | None = None, runs=()) -> list[Path]:
    """The paper files the runs' tasks declare; without such runs, every dataset package's (or the `*.json` of
    `paper_dir`)."""
    declared = {paper_file(run.record) for run in runs} - {None}
    if declared:
        return sorted(declared)
    if paper_dir:
        return sorted(Path(paper_dir).glob("*.json"))
    return sorted(p for p in DATA_DIR.glob("*/*.json") if p.stem == p.parent.name)


def load_paper(task: str, paper_dir: Path | None = None, runs=()) -> dict:
    """The table of the paper file that covers `task` (see pragexp.utils.papers); {"rows": {}} when none does."""
    for path in paper_files(paper_dir, runs):
        table = read_paper_table(path, task)
        if table is not None:
            return table
    return {"rows": {}}


def paper_data(paper: str, name: str, paper_dir: Path | None = None) -> dict:
    """The `name` entry of the "data" section of a dataset's paper file: `paper_data("grice",
    "implicature_types")` is GRICE's Table 4, {"train": {"explicit": 0.273, ...}, "dev": {...}}."""
    path = Path(paper_dir) / f"{paper}.json" if paper_dir else DATA_DIR / paper / f"{paper}.json"
    return read_paper_data(path, name)


def matching_paper_row(row: Row, paper: dict) -> str | None:
    """The paper row that applies to `row`: named by its experiment, its name or its model, with every
    setting of its name on the row's command line or in its config; the one with the most such settings."""
    best, best_conditions = None, -1
    for key in paper.get("rows", {}):
        name, conditions = parse_row_name(key)
        if (
            name in (row.experiment, row.name, row.model)
            and all(_holds(c, row) for c in conditions)
            and len(conditions) > best_conditions
        ):
            best, best_conditions = key, len(conditions)
    return best


def paper_row(row: Row, paper: dict) -> dict:
    """The paper's cells for a row ({} when no paper row applies)."""
    key = matching_paper_row(row, paper)
    return paper["rows"][key] if key else {}


def _holds(condition: str, row: Row) -> bool:
    """A paper row's condition (`data.labels=strict`) holds: on the command line or in what the run recorded of
    its paper's keys (run.json's `task.paper_settings`)."""
    key, _, wanted = condition.partition("=")
    return (
        condition in row.settings
        or bool(row.runs)
        and row.runs[0].record.task.paper_settings.get(key) == wanted
    )
