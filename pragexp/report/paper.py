"""The paper file a task declares, in its dataset's package (format: pragexp.utils.papers), and the paper row
that fits a row of runs."""

from __future__ import annotations

from pathlib import Path

from pragexp.report.runs import Row
from pragexp.utils.papers import read_paper_data, read_paper_table
from pragexp.utils.results import parse_row_name

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


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
    tables = (read_paper_table(path, task) for path in paper_files(paper_dir, runs))
    return next((table for table in tables if table is not None), {"rows": {}})


def paper_data(paper: str, name: str, paper_dir: Path | None = None) -> dict:
    """The `name` entry of the "data" section of a dataset's paper file: `paper_data("grice",
    "implicature_types")` is GRICE's Table 4, {"train": {"explicit": 0.273, ...}, "dev": {...}}."""
    return read_paper_data(Path(paper_dir or DATA_DIR / paper) / f"{paper}.json", name)


def matching_paper_row(row: Row, paper: dict) -> str | None:
    """The paper row that applies to `row`: named by its experiment, its name or its model, each of its name's
    conditions (`data.labels=strict`) on the row's command line or in what its run recorded of the paper's keys
    (run.json's `task.paper_settings`); the one with the most conditions."""
    recorded = row.runs[0].record.task.paper_settings if row.runs else {}
    holding = {*row.settings, *(f"{k}={v}" for k, v in recorded.items() if v is not None)}
    best, most = None, -1
    for key in paper.get("rows", {}):
        name, conditions = parse_row_name(key)
        holds = all(c in holding for c in conditions)
        if name in (row.experiment, row.name, row.model) and holds and len(conditions) > most:
            best, most = key, len(conditions)
    return best


def paper_row(row: Row, paper: dict) -> dict:
    """The paper's cells for a row ({} when no paper row applies)."""
    key = matching_paper_row(row, paper)
    return paper["rows"][key] if key else {}
