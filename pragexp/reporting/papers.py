"""A paper file: the published numbers of one paper (`pragexp/data/<dataset>/paper.json`), cells in our units.

    {"paper": "Authors, title (venue)", "source": "where the numbers come from",
     "unit": "percent", "metric_units": {"mrr": "fraction", "q": "raw"},
     "tasks": {"<task>": {"table": ..., "setting": ..., "setting_keys": {...},
                          "rows": {"<row>": {"test/acc": 87.8}}}},
     "data": {"<name>": {"table": "...", "unit": "percent", "values": {...}}}}

`unit` is every metric's unless `metric_units` names the metric (the key's second part, `r@k` for every
`r@<n>`): percent is shown divided by 100 (fractions, like ours), fraction as is, raw as published. A cell is
a number or {"mean", "std", "min", "max"}, a published summary over folds."""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def read_paper_table(path: Path, task: str) -> dict | None:
    """The table of the paper file `path` for `task`: its "rows" with cells in our units, "paper", "source",
    "table", "setting" and "setting_keys"; None when the file has no table for the task."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    table = doc.get("tasks", {}).get(task)
    if table is None:
        return None
    where = Path(path).name
    rows = {
        name: {key: _scale(cell, _metric_scale(doc, key, f"{where}: {key}")) for key, cell in row.items()}
        for name, row in table.get("rows", {}).items()
    }
    return {
        "paper": doc.get("paper", Path(path).stem),
        "source": doc.get("source", ""),
        **table,
        "rows": rows,
    }


def read_paper_data(path: Path, name: str) -> dict:
    """Published numbers about the data rather than a model: the `name` entry of the file's "data" section,
    percents as fractions (GRICE's Table 4 implicature mix, Hu et al.'s items and options per phenomenon)."""
    entry = json.loads(Path(path).read_text(encoding="utf-8"))["data"][name]
    return _scale(entry["values"], _unit_scale(entry.get("unit", "fraction"), f"{Path(path).name}: {name}"))
