"""A results table's cells and columns, shared by pragexp.report and the datasets' own report sections
(pragexp/data/<name>/report_section.py): a run's values summed up over seeds or prompt templates, and the
scorecard's column of one headline metric. A run here is anything with `task`, `path`, `metrics` and
`config`."""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pragexp.reporting.markdown import estimate_text


# The figures metrics.json holds beside a mean (pragexp.metrics.uncertainty writes them): read by every table.
def figure_key(name: str, figure: str, group: str | None = None) -> str:
    """`acc`, `stderr` -> `acc_stderr`; with a group, `acc_stderr/Irony` (the metric's own is `acc/Irony`)."""
    return f"{name}_{figure}" + (f"/{group}" if group is not None else "")


def metrics_cell(
    metrics: Mapping[str, float],
    key: str,
    group: str | None = None,
    digits: int = 3,
    units: str | None = None,
) -> str:
    """The cell of a metrics.json key (`test/acc`, with `group` its `test/acc/<group>`) with its figures,
    where the run wrote them (a mean without them shows alone); `units` names what n counts (`units_of`)."""
    mean_key = key if group is None else f"{key}/{group}"
    if mean_key not in metrics:
        raise KeyError(f"{mean_key} is not among the metrics")
    n = metrics.get(figure_key(key, "n", group))
    stderr = metrics.get(figure_key(key, "stderr", group))
    return estimate_text(metrics[mean_key], stderr, None if n is None else int(n), digits, units)


def units_of(runs) -> str | None:
    """What the runs' item counts count, as a plural (`conversations`): their data's sampling unit, where
    every run's record names the same one (None: a record names none, or the runs differ)."""
    units = {r.record.data.sampling_unit for r in runs}
    names = {u.plural if u is not None else None for u in units}
    return names.pop() if len(names) == 1 else None


# A paper's own chance row: the scorecard's chance row shows that level, so it is not a published model row.
CHANCE_ROWS = ("chance", "random")


def summarise(values: list[float]) -> dict[str, float]:
    out = {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values)}
    out["std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return out


def mean_of(runs, key: str) -> float | None:
    """The mean of `key` over the runs that have it (None: none has)."""
    values = [r.metrics[key] for r in runs if key in r.metrics]
    return statistics.fmean(values) if values else None


def config_value(config: dict, dotted: str):
    """`config["data"]["labels"]` for "data.labels"; None when a part is missing."""
    value = config
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def data_report(run) -> dict:
    """The run's data_report.json ({} without one)."""
    path = Path(run.path) / "data_report.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def parse_row_name(key: str) -> tuple[str, set[str]]:
    """A paper row's name: `bert_yn (data.labels=strict, data.setting=matched)` -> name,
    {"data.labels=strict", ...}."""
    name, _, rest = key.partition(" (")
    return name, {c.strip() for c in rest.rstrip(")").split(",") if c.strip()}


def uncertainty_key(key: str, figure: str) -> str:
    """Where metrics.json holds a figure of the mean `key` (pragexp.metrics.uncertainty): `test/acc/Irony`,
    `stderr` -> `test/acc_stderr/Irony`."""
    stage, name, *group = key.split("/")
    return "/".join([stage, f"{name}_{figure}", *group])


def _rms(values: list) -> float | None:
    """The root mean square; None where a value is missing."""
    if any(v is None or math.isnan(v) for v in values):
        return None
    return math.sqrt(statistics.fmean(v * v for v in values))


def item_figures(runs, key: str) -> tuple[float | None, str | None, float | None]:
    """(standard error, units, half-width of the 95% interval) of the runs' means of `key`, where every run
    that has the key wrote them (None: an old run did not). Several runs: the root mean square of their
    figures, the uncertainty of one run (runs on the same items do not shrink it); units (n) `650`, or
    `600–650`."""
    found = [r.metrics for r in runs if key in r.metrics]
    items = [m.get(uncertainty_key(key, "n")) for m in found]
    if not found or None in items:
        return None, None, None
    low, high = min(items), max(items)

    def figure(metrics: dict, name: str) -> float:
        return metrics.get(uncertainty_key(key, name), math.nan)

    errors = [m.get(uncertainty_key(key, "stderr")) for m in found]
    halves = [(figure(m, "ci95_high") - figure(m, "ci95_low")) / 2 for m in found]
    return _rms(errors), f"{low:g}" if low == high else f"{low:g}–{high:g}", _rms(halves)


@dataclass(frozen=True)
class Cell:
    """A table's cell: the mean, its uncertainty over items where the runs wrote it (`± stderr (n=items)`),
    and apart from it the spread over the runs or templates averaged (`; sd 0.061 over 3 templates`)."""

    mean: float
    std: float | None = None  # over the runs (templates, folds) averaged; None for one
    n: int | None = None  # how many (None: a published summary; the paper file does not say over how many)
    collapse: str | None = None  # what its runs predict when one label takes more than 90% of it
    note: str | None = None  # what the cell picked among its runs (LUDWIG best-k: prompt.shots=5)
    stderr: float | None = None  # over the data's sampling units (clustered)
    items: str | None = None  # how many units: `67`, `60–67`
    units: str | None = None  # what they are: `conversations` (None: not known)
    half: float | None = None  # half-width of the 95% interval over items: a figure's error bar
    unit: str = "runs"  # what `std` is over
    spread: str = "sd"  # its name: `sd` (sample), `pop. sd` (population, as LUDWIG reports it)
    span: tuple[float, float] | None = None  # [min, max] of the runs, for more than 3

    @property
    def text(self) -> str:
        text = estimate_text(self.mean, self.stderr, self.items, units=self.units)
        if self.std is not None:
            text += f"; {self.spread} {self.std:.3f} over " + (
                f"{self.n} {self.unit}" if self.n else self.unit
            )
        if self.span is not None:
            text += f" [{self.span[0]:.3f}, {self.span[1]:.3f}]"
        return text


def summary_cell(
    values: list[float], runs, key: str, unit: str = "runs", population: bool = False, span: bool = False
) -> Cell:
    """The cell of `values` (one per run or template) of `runs`' `key`: their mean, spread and items' figures,
    with `span` their [min, max] where there are more than 3."""
    s = summarise(values)
    spread = (statistics.pstdev(values) if population else s["std"]) if s["n"] > 1 else None
    stderr, items, half = item_figures(runs, key)
    return Cell(
        s["mean"],
        spread,
        s["n"],
        stderr=stderr,
        items=items,
        units=units_of([r for r in runs if key in r.metrics]) if items is not None else None,
        half=half,
        unit=unit,
        spread="pop. sd" if population else "sd",
        span=(s["min"], s["max"]) if span and s["n"] > 3 else None,
    )


def runs_cell(runs, key: str, span: bool = False) -> Cell | None:
    """The cell of `key` over the runs that have it (a row of seeds or folds); None: none has."""
    values = [r.metrics[key] for r in runs if key in r.metrics]
    return summary_cell(values, runs, key, span=span) if values else None


def _prompting(run):
    llm = run.record.model.llm
    return llm.prompting if llm is not None else None


def shots(run) -> int:
    """The run's number of demonstrations (0 for a model that is not prompted)."""
    prompting = _prompting(run)
    return prompting.shots if prompting is not None else 0


def template_name(run) -> str:
    """The run's prompt template by name ("None" for a model that is not prompted)."""
    prompting = _prompting(run)
    return prompting.template if prompting is not None else "None"


def by_template(runs, metric: str) -> dict[str, list[float]]:
    """{template: the values of `metric` of its runs (seeds)}."""
    out: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        if metric in run.metrics:
            out[template_name(run)].append(run.metrics[metric])
    return dict(out)


def aggregate(runs, metric: str, population: bool = False) -> Cell | None:
    """The cell of `metric`: across prompt templates (each averaged over its runs first) where the runs used
    several, the spread over them the population std where asked (as LUDWIG reports its score, `np.std`); else
    across runs."""
    per_template = by_template(runs, metric)
    if len(per_template) < 2:
        return runs_cell(runs, metric)
    means = [statistics.fmean(v) for v in per_template.values()]
    return summary_cell(means, runs, metric, "templates", population)


def population_cell(runs, metric: str) -> Cell | None:
    return aggregate(runs, metric, population=True)


def published_value(value) -> Cell:
    """A published number, or a published summary over folds."""
    if isinstance(value, dict):
        return Cell(value["mean"], value["std"], unit="folds", span=(value["min"], value["max"]))
    return Cell(value)


def data_facts(record) -> tuple[tuple[str, str], ...]:
    """A run's data as a published row's name states it: (`data.labels`, `strict`), (`data.setting`,
    `matched`)."""
    facts = {"data.labels": record.data.labels, **{f"data.{k}": v for k, v in record.data.setting.items()}}
    return tuple(sorted((k, str(v)) for k, v in facts.items() if v is not None))


@dataclass(frozen=True)
class Column:
    """A scorecard column: a headline metric a task declares (run.json's `task.headline`), taken by the runs
    that declare it. A dataset's report section may give its own kind (`columns(runs)`)."""

    title: str
    task: str
    metric: str  # the metrics.json key
    chance: float | None = None
    note: str = ""  # printed under the scorecard: what its published cells and chance level cover
    facts: tuple[
        tuple[str, str], ...
    ] = ()  # its runs' data facts: they pick a published row (data.labels=strict)

    def takes(self, run) -> bool:
        headline = run.record.task.headline
        return self.metric in run.metrics and any(h.title == self.title for h in headline)

    def row(self, run) -> str | None:
        """The row the run's cell goes in (None: no model's, e.g. a reference backend's)."""
        return run.record.model.row

    def cell(self, runs) -> Cell | None:
        """The cell of one row's runs in this column."""
        return aggregate(runs, self.metric)

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        """(name, the conditions left in its name, cell) of the published rows in this column, in the paper's
        order: those whose name states no other data than the column's runs' (the stated facts leave the
        name), not the paper's chance row where the column has a chance level (the scorecard's chance row
        shows it)."""
        facts, out = dict(self.facts), []
        for key, cells in rows.items():
            name, conditions = parse_row_name(key)
            stated = {c for c in conditions if c.partition("=")[0] in facts}
            if self.metric not in cells or stated - {f"{k}={v}" for k, v in facts.items()}:
                continue
            if self.chance is not None and name in CHANCE_ROWS:
                continue
            out.append((name, tuple(sorted(conditions - stated)), published_value(cells[self.metric])))
        return out


def short_setting(setting: str) -> str:
    """A path-valued setting by its file name, a checkpoint by its run's folder too
    (`model.ckpt=<run>/best.ckpt`): a row's name, not a path to follow (the run's config holds the whole
    path)."""
    key, _, value = setting.partition("=")
    if "/" not in value:
        return setting
    parts = Path(value).parts
    if len(parts) >= 3 and parts[-2] == "checkpoints":
        return f"{key}={parts[-3]}/{parts[-1]}"
    return f"{key}={parts[-1]}"


def settings_text(settings) -> str:
    """` (a=1, b=2)` of the settings by their short names; "" for none."""
    return f" ({', '.join(short_setting(s) for s in settings)})" if settings else ""


def llm_label(run, hidden: tuple[str, ...] = ()) -> str:
    """A benchmark row's model: the LLM and the run's settings that make another model or qualify its cells
    (run.json's `settings.model` and `.task`), but for the `hidden` keys a section shows otherwise or that
    change no score: `smollm2 (prompt=ludwig_contrastive)`."""
    declared = run.record.settings
    kept = [s for s in (*declared.model, *declared.task) if s.split("=", 1)[0] not in hidden]
    llm = run.record.model.llm
    return f"{llm.name if llm and llm.name else run.model}" + settings_text(sorted(kept))


def metric_suffixes(runs, prefix: str) -> list[str]:
    """`<x>` of every `<prefix><x>` key of the runs' metrics (phenomena, implicature types, distractor
    kinds)."""
    return sorted({k[len(prefix) :] for r in runs for k in r.metrics if k.startswith(prefix)})
