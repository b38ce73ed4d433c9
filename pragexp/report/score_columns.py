"""The scorecard's cells and columns (pragexp.report.scorecard): which runs a column takes, how a cell sums
them up, and which published rows it shows. The LLM benchmarks' columns build on these
(pragexp.report.benchmark_columns)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

from pragexp.report.paper import parse_row_name
from pragexp.report.runs import Run, config_value, summarise

# A paper's own chance row: the scorecard's chance row shows that level, so it is not a published model row.
CHANCE_ROWS = ("chance", "random")


@dataclass(frozen=True)
class Cell:
    mean: float
    std: float | None = None
    n: int | None = None  # None: a published summary, whose number of folds the paper file does not give
    collapse: str | None = None  # what its runs predict when one label takes more than 90% of it
    note: str | None = None  # what the cell picked among its runs (LUDWIG best-k: prompt.shots=5)

    @property
    def text(self) -> str:
        out = f"{self.mean:.3f}"
        if self.std is not None:
            out += f" ± {self.std:.3f}"
        if self.n is not None and self.n > 1:
            out += f" ({self.n})"
        return out


def shots(run: Run) -> int:
    """The run's `prompt.shots` (0 when its config has none)."""
    return int(config_value(run.config, "prompt.shots") or 0)


def template_name(config: dict) -> str:
    """The run's `prompt.template` by name: a position and the name of the same template are one template."""
    which = config_value(config, "prompt.template")
    templates = config_value(config, "prompt.templates")
    if isinstance(which, int | str) and str(which).isdigit() and isinstance(templates, list):
        index = int(which)
        if index < len(templates) and isinstance(templates[index], dict) and templates[index].get("name"):
            return str(templates[index]["name"])
    return str(which)


def by_template(runs: list[Run], metric: str) -> dict[str, list[float]]:
    """{template: the values of `metric` of its runs (seeds)}."""
    out: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        if metric in run.metrics:
            out[template_name(run.config)].append(run.metrics[metric])
    return dict(out)


def aggregate(runs: list[Run], metric: str) -> Cell | None:
    """Mean ± sample std (n) of `metric`: across prompt templates (each averaged over its runs first) where
    the runs used several, else across runs."""
    per_template = by_template(runs, metric)
    if not per_template:
        return None
    if len(per_template) > 1:
        values = [statistics.fmean(v) for v in per_template.values()]
    else:
        values = next(iter(per_template.values()))
    s = summarise(values)
    return Cell(s["mean"], s["std"] if s["n"] > 1 else None, s["n"])


def population_cell(runs: list[Run], metric: str) -> Cell | None:
    """Mean ± population std across prompt templates (each averaged over its runs first), n templates, as
    LUDWIG reports its score (`np.std`); with one template, as `aggregate`."""
    per_template = by_template(runs, metric)
    if len(per_template) < 2:
        return aggregate(runs, metric)
    means = [statistics.fmean(v) for v in per_template.values()]
    return Cell(statistics.fmean(means), statistics.pstdev(means), len(means))


def published_value(value) -> Cell:
    """A published number, or a published summary over folds."""
    return Cell(value["mean"], value["std"]) if isinstance(value, dict) else Cell(value)


@dataclass(frozen=True)
class Column:
    title: str
    task: str
    metric: str  # the metrics.json key
    labels: str | None = None  # Circa: the run's data.labels
    setting: str | None = None  # Circa: the run's data.setting
    chance: float | None = None
    note: str = ""  # printed under the scorecard: what its published cells and chance level cover

    # True: runs at any prompt.shots fill one cell, in the LLM's 0-shot row (LUDWIG best-k).
    pools_shots: ClassVar[bool] = False

    def takes(self, run: Run) -> bool:
        if run.task != self.task or self.metric not in run.metrics:
            return False
        return self.labels is None or (
            str(config_value(run.config, "data.labels")) == self.labels
            and str(config_value(run.config, "data.setting")) == self.setting
        )

    def cell(self, runs: list[Run]) -> Cell | None:
        """The cell of one row's runs in this column."""
        return aggregate(runs, self.metric)

    def consumes(self) -> set[str]:
        """The conditions of a published row's name that pick this column (and so leave the row's name)."""
        return {f"data.labels={self.labels}", f"data.setting={self.setting}"} if self.labels else set()

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        """(name, the conditions left in its name, cell) of the published rows in this column, in the paper's
        order: a row whose name has this column's conditions (Circa's label set and setting), not the paper's
        chance row where the column has a chance level (the scorecard's chance row shows it)."""
        out = []
        for key, cells in rows.items():
            name, conditions = parse_row_name(key)
            if self.metric not in cells or not self.consumes() <= conditions:
                continue
            if self.chance is not None and name in CHANCE_ROWS:
                continue
            out.append(
                (name, tuple(sorted(conditions - self.consumes())), published_value(cells[self.metric]))
            )
        return out
