"""The papers' published numbers (pragexp/paper_numbers/*.json) and which paper row fits a row of runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pragexp.report.runs import Row, config_value

PAPER_DIR = Path(__file__).resolve().parent.parent / "paper_numbers"
UNIT_SCALE = {"percent": 0.01, "fraction": 1.0, "raw": 1.0}
STAGES = ("val", "test")


def family(metric: str) -> str:
    """`r@5` -> `r@k`: the name shared by a metric's cut-offs."""
    return re.sub(r"@\d+$", "@k", metric)


def _scale(value, factor: float):
    """A number, or every number of a (nested) dict, times `factor`."""
    if isinstance(value, dict):
        return {k: _scale(v, factor) for k, v in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value * factor
    raise ValueError(f"not a number: {value!r}")


def _unit_scale(unit: str, where: str) -> float:
    if unit not in UNIT_SCALE:
        raise ValueError(f"{where}: unknown unit {unit!r} (one of {', '.join(UNIT_SCALE)})")
    return UNIT_SCALE[unit]


def _metric_scale(doc: dict, key: str, where: str) -> float:
    stage, _, metric = key.partition("/")
    metric = metric.split("/")[0]
    if stage not in STAGES or not metric:
        raise ValueError(f"{where}: a paper key is {'|'.join(STAGES)}/<metric>[/<group>]")
    units = doc.get("metric_units", {})
    return _unit_scale(units.get(metric, units.get(family(metric), doc.get("unit", "fraction"))), where)


def load_paper(task: str, paper_dir: Path | None = None) -> dict:
    """The table of the paper file that covers `task`: its "rows" with cells in our units (percents as
    fractions), "paper", "source", "table", "setting" and "setting_keys"; {"rows": {}} when no paper does."""
    for path in sorted(Path(paper_dir or PAPER_DIR).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        table = doc.get("tasks", {}).get(task)
        if table is None:
            continue
        rows = {
            name: {
                key: _scale(cell, _metric_scale(doc, key, f"{path.name}: {key}")) for key, cell in row.items()
            }
            for name, row in table.get("rows", {}).items()
        }
        return {"paper": doc.get("paper", path.stem), "source": doc.get("source", ""), **table, "rows": rows}
    return {"rows": {}}


def paper_data(paper: str, name: str, paper_dir: Path | None = None) -> dict:
    """Published numbers about a paper's data rather than a model: the `name` entry of the "data" section of
    `<paper>.json`, percents as fractions. `paper_data("grice", "implicature_types")` is GRICE's Table 4,
    {"train": {"explicit": 0.273, ...}, "dev": {...}}, to compare a generated mix with."""
    path = Path(paper_dir or PAPER_DIR) / f"{paper}.json"
    entry = json.loads(path.read_text(encoding="utf-8"))["data"][name]
    return _scale(entry["values"], _unit_scale(entry.get("unit", "fraction"), f"{path.name}: {name}"))


def parse_row_name(key: str) -> tuple[str, set[str]]:
    """`bert_yn (data.labels=strict, data.setting=matched)` -> name, {"data.labels=strict", ...}."""
    name, _, rest = key.partition(" (")
    return name, {c.strip() for c in rest.rstrip(")").split(",") if c.strip()}


def matching_paper_row(row: Row, paper: dict) -> str | None:
    """The paper row that applies to `row` (see the module's docstring), or None."""
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
    if condition in row.settings:
        return True
    dotted, _, wanted = condition.partition("=")
    value = config_value(row.runs[0].config, dotted) if row.runs else None
    return value is not None and str(value) == wanted
