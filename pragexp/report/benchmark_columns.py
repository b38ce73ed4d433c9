"""The LLM benchmarks' scorecard columns (pragexp.report.scorecard), each added where some run was made on it.

- "Hu et al. acc" (`hu_pragmatics`, `test/acc`). The paper has accuracy per phenomenon only: a published
  row's cell is its item-weighted mean over the phenomena the column's runs cover (the phenomena with items in
  their data_report.json's `per_phenomenon`; all seven when no run says), with the paper's item counts, so
  that a run on five phenomena is compared on the same five. Chance: the item-weighted mean of 1/options.
- "LUDWIG 0-shot acc" (`ludwig` at prompt.shots=0): mean over the templates ± their population std, as the
  paper reports its score (`np.std`).
- "LUDWIG best-k acc": across an LLM's runs of every k (its 0-shot row), the k whose mean over the templates
  is highest (named in the cell's note; a tie goes to the smaller k). A published row: its highest published
  k > 0; people, whom k does not apply to, in both LUDWIG columns.
- "BIG-bench implicatures acc" (`bigbench_implicatures`, `test/acc`). Chance 0.5 for LUDWIG and BIG-bench.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from pragexp.report.paper import paper_data, parse_row_name
from pragexp.report.runs import Run
from pragexp.report.score_columns import CHANCE_ROWS, Cell, Column, population_cell, shots

HU, LUDWIG, BIGBENCH = "hu_pragmatics", "ludwig", "bigbench_implicatures"
SHOTS = "prompt.shots="


def data_report(run: Run) -> dict:
    """The run's data_report.json ({} without one)."""
    path = Path(run.path) / "data_report.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def hu_counts(paper_dir: Path | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """The paper's items and options per phenomenon ({}, {} without the paper file)."""
    try:
        return paper_data(HU, "items", paper_dir), paper_data(HU, "options", paper_dir)
    except (FileNotFoundError, KeyError):
        return {}, {}


def covered_phenomena(runs: list[Run]) -> set[str]:
    """The phenomena with items in the hu_pragmatics runs' data_report.json (empty: no run says)."""
    found: set[str] = set()
    for run in runs:
        if run.task == HU:
            found |= {p for p, n in (data_report(run).get("per_phenomenon") or {}).items() if n}
    return found


def weighted_mean(values: dict[str, float], weights: dict[str, float], keys) -> float | None:
    """Σ weight·value / Σ weight over `keys`; None where a key has no value or no weight."""
    if not keys or any(values.get(k) is None or not weights.get(k) for k in keys):
        return None
    return sum(weights[k] * values[k] for k in keys) / sum(weights[k] for k in keys)


def published_shots(conditions) -> int | None:
    """The k of a published row's name (`prompt.shots=30`); None where k does not apply (people)."""
    found = [int(c[len(SHOTS) :]) for c in conditions if c.startswith(SHOTS)]
    return found[0] if found else None


@dataclass(frozen=True)
class HuColumn(Column):
    covered: tuple[str, ...] = ()  # the phenomena a published cell averages over
    items: tuple[float, ...] = ()  # the paper's item count of each

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        """Each published row's item-weighted mean over the covered phenomena (none where it lacks one)."""
        weights = dict(zip(self.covered, self.items, strict=True))
        out = []
        for key, cells in rows.items():
            name, conditions = parse_row_name(key)
            values = {p: cells.get(f"test/acc/{p}") for p in self.covered}
            mean = weighted_mean(values, weights, self.covered)
            if mean is not None and name not in CHANCE_ROWS:  # the chance row shows the paper's chance
                out.append((name, tuple(sorted(conditions)), Cell(mean)))
        return out


def hu_column(runs: list[Run], paper_dir: Path | None = None) -> HuColumn:
    """The Hu column over the phenomena the runs cover, its chance level and note to match."""
    items, options = hu_counts(paper_dir)
    found = covered_phenomena(runs)
    covered = tuple(p for p in items if p in found) if found else tuple(items)
    chance = weighted_mean({p: 1 / options[p] for p in options}, items, covered)
    said = "the runs' data_report.json" if found else "no run's data_report.json says: all of them"
    note = (
        "(paper) rows and chance are the item-weighted mean over "
        + ", ".join(f"{p} ({items[p]:g} items)" for p in covered)
        + f" ({said})"
        + (f"; not in the paper: {', '.join(sorted(found - set(items)))}" if found - set(items) else "")
        if items
        else f"no {HU}.json paper file: no published cells or chance"
    )
    return HuColumn(
        "Hu et al. acc",
        HU,
        "test/acc",
        chance=chance,
        note=note,
        covered=covered,
        items=tuple(items[p] for p in covered),
    )


@dataclass(frozen=True)
class LudwigColumn(Column):
    """LUDWIG at k = 0: mean ± population std over the templates."""

    def takes(self, run: Run) -> bool:
        return super().takes(run) and shots(run) == 0

    def cell(self, runs: list[Run]) -> Cell | None:
        return population_cell(runs, self.metric)

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        return [
            (name, tuple(c for c in rest if not c.startswith(SHOTS)), cell)
            for name, rest, cell in super().published(rows)
            if published_shots(rest) in (None, 0)
        ]


@dataclass(frozen=True)
class LudwigBestColumn(Column):
    """LUDWIG at the best k: the k whose mean over the templates is highest."""

    pools_shots: ClassVar[bool] = True

    def cell(self, runs: list[Run]) -> Cell | None:
        by_k: dict[int, list[Run]] = {}
        for run in runs:
            by_k.setdefault(shots(run), []).append(run)
        cells = {k: population_cell(group, self.metric) for k, group in sorted(by_k.items())}
        found = [(cell.mean, -k, k, cell) for k, cell in cells.items() if cell is not None]
        if not found:
            return None
        *_, k, cell = max(found, key=lambda f: f[:2])
        return replace(cell, note=f"{SHOTS}{k} (the best k)")

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        best: dict[tuple[str, tuple[str, ...]], Cell] = {}
        for name, rest, cell in super().published(rows):
            k = published_shots(rest)
            if k == 0:  # the 0-shot column's: a row's other k are not all transcribed, so pick among k > 0
                continue
            key = (name, tuple(c for c in rest if not c.startswith(SHOTS)))
            cell = cell if k is None else replace(cell, note=f"{SHOTS}{k} (the highest published k)")
            if key not in best or cell.mean > best[key].mean:
                best[key] = cell
        return [(name, rest, cell) for (name, rest), cell in best.items()]


LUDWIG_NOTE = "mean ± population std across templates, as the paper reports it"


def benchmark_columns(runs: list[Run], paper_dir: Path | None = None) -> list[Column]:
    """The columns of the LLM benchmarks that some run was made on, in this order: Hu, LUDWIG, BIG-bench."""
    tasks = {run.task for run in runs}
    out: list[Column] = [hu_column(runs, paper_dir)] if HU in tasks else []
    if LUDWIG in tasks:
        out += [
            LudwigColumn("LUDWIG 0-shot acc", LUDWIG, "test/acc", chance=0.5, note=LUDWIG_NOTE),
            LudwigBestColumn(
                "LUDWIG best-k acc",
                LUDWIG,
                "test/acc",
                chance=0.5,
                note="the k whose mean over the templates is highest (its prompt.shots noted per cell), "
                "mean ± population std across its templates; (paper): the highest published k > 0",
            ),
        ]
    if BIGBENCH in tasks:
        out.append(Column("BIG-bench implicatures acc", BIGBENCH, "test/acc", chance=0.5))
    return out
