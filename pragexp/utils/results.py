"""A results table's cells and columns, shared by pragexp.report and the datasets' own report sections
(pragexp/data/<name>/report.py): a run's values summed up over seeds or prompt templates, and the scorecard's
column of one headline metric. A run here is anything with `task`, `path`, `metrics` and `config`."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pragexp.utils.markdown import stats_text
from pragexp.utils.run_settings import DATA_LOCATION  # data.path, data.test_path: where the data is

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
    """A paper row's name: `bert_yn (data.labels=strict, data.setting=matched)` -> name, {"data.labels=strict", ...}."""
    name, _, rest = key.partition(" (")
    return name, {c.strip() for c in rest.rstrip(")").split(",") if c.strip()}


@dataclass(frozen=True)
class Cell:
    mean: float
    std: float | None = None
    n: int | None = None  # None: a published summary, whose number of folds the paper file does not give
    collapse: str | None = None  # what its runs predict when one label takes more than 90% of it
    note: str | None = None  # what the cell picked among its runs (LUDWIG best-k: prompt.shots=5)

    @property
    def text(self) -> str:
        return stats_text(self.mean, self.std, n=self.n)


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


def aggregate(runs, metric: str) -> Cell | None:
    """Mean ± sample std (n) of `metric`: across prompt templates (each averaged over its runs first) where
    the runs used several, else across runs."""
    per_template = by_template(runs, metric)
    if not per_template:
        return None
    values = [statistics.fmean(v) for v in per_template.values()]
    if len(per_template) == 1:
        values = next(iter(per_template.values()))
    s = summarise(values)
    return Cell(s["mean"], s["std"] if s["n"] > 1 else None, s["n"])


def population_cell(runs, metric: str) -> Cell | None:
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


def data_facts(record) -> tuple[tuple[str, str], ...]:
    """A run's data as a published row's name states it: (`data.labels`, `strict`), (`data.setting`, `matched`)."""
    facts = {"data.labels": record.data.labels, **{f"data.{k}": v for k, v in record.data.setting.items()}}
    return tuple(sorted((k, str(v)) for k, v in facts.items() if v is not None))


@dataclass(frozen=True)
class Column:
    """A scorecard column: a headline metric a task declares (run.json's `task.headline`), taken by the runs that
    declare it. A dataset's report section may give its own kind (`columns(runs)`)."""

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
        order: those whose name states no other data than the column's runs' (the stated facts leave the name),
        not the paper's chance row where the column has a chance level (the scorecard's chance row shows it)."""
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


# Settings a benchmark's row shows elsewhere (template, k), that name no other model, or say where the data is.
NOT_SHOWN = (
    "prompt.template",
    "prompt.shots",
    "llm.model",
    "llm.batch_size",
    "llm.device",
    "threads",
    "validate",
    "print_config",
    "data.types_file",  # LUDWIG's type labels: which per-type cells a run has, not its accuracy
)


def short_setting(setting: str) -> str:
    """A path-valued setting by its file name, a checkpoint by its run's folder too (`model.ckpt=<run>/best.ckpt`):
    a row's name, not a path to follow (the run's config holds the whole path)."""
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


def llm_label(run) -> str:
    """A benchmark row's model: the LLM and the run's other settings, `smollm2 (prompt=ludwig_contrastive)`."""
    kept = [
        s for s in run.settings if (k := s.split("=", 1)[0]) not in NOT_SHOWN and not DATA_LOCATION.match(k)
    ]
    llm = run.record.model.llm
    return f"{llm.name if llm and llm.name else run.model}" + settings_text(kept)


def metric_suffixes(runs, prefix: str) -> list[str]:
    """`<x>` of every `<prefix><x>` key of the runs' metrics (phenomena, implicature types, distractor kinds)."""
    return sorted({k[len(prefix) :] for r in runs for k in r.metrics if k.startswith(prefix)})
