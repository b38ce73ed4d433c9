"""Results tables from run directories, side by side with the papers' published numbers.

    python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png]

Runs. Reads every `metrics.json` under the given run or multirun directories, with the run's
`.hydra/hydra.yaml` (task, model and experiment choices), `.hydra/config.yaml` (the composed config)
and `.hydra/overrides.yaml`. Runs that differ only in `seed` (or `data.fold`, the Circa
leave-one-scenario-out folds) form one row: each cell is the mean ± sample std over them, and
`[min, max]` when a row has more than 3 runs.

One table per task; its columns are the overall test metric keys (`test/r@1`, ...), then one table of
per-group metrics (`test/r@1/ignorance`, ...), each column of ours followed by the paper's where a
matched paper row has that key.

Paper files. One per paper, `pragexp/paper_numbers/<paper>.json`:

    {"paper": "Authors, title (venue)", "source": "where the numbers come from",
     "unit": "percent", "metric_units": {"mrr": "fraction", "q": "raw"},
     "tasks": {"<task>": {"table": "which table", "setting": "what the rows were measured under, in words",
                          "setting_keys": {"data.corpus": "the paper's corpus, in words", ...},
                          "rows": {"<row> (<key>=<value>, ...)": {"val/acc": 88.4, "test/acc": 87.8, ...}}}},
     "data": {"<name>": {"table": "...", "unit": "percent", "values": {...}}}}

- Units: `unit` is every metric's unless `metric_units` names the metric (the key's second part:
  `mrr` for `test/mrr`, `r@k` for every `r@<n>`). percent is shown divided by 100 (fractions, like
  ours), fraction as is, raw (a score such as a log-likelihood) as published, never scaled.
- A cell is a number, or {"mean", "std", "min", "max"} for a published summary over folds; it reads like
  ours: `mean ± std [min, max]`.
- A paper row is named by an experiment (`grice/table5_memnn`), an experiment file (`table5_memnn`) or a
  model (`fid`), optionally followed by the settings it was measured under (`bert_yn (data.labels=strict,
  data.setting=matched)`): it applies to a row whose runs have those settings on the command line or in
  their composed config; the paper row with the most such settings wins. Rows no run of ours can
  reproduce get a name that says what they are (`human`, `bert_dis_yn`).
- `setting_keys`: config keys that describe a setting without selecting a paper row (the corpus, the
  scorer behind a metric), with the paper's setting in words.
- `data`: published numbers about the data rather than a model (GRICE Table 4's implicature mix), read
  with `paper_data(paper, name)`.

`--plot` draws per-group bars (test metric per implicature type) for the models of the first task that
has per-group metrics: for `grice_qa` with MemNN and MemNN w/ inf this is the paper's Fig. 5.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pragexp.utils.io import atomic_output, atomic_write_text

PAPER_DIR = Path(__file__).parent / "paper_numbers"
VARYING = ("seed", "data.fold")  # what a row averages over
IGNORED_PREFIXES = (
    "hydra.",
    "paths.",
    "logger",
    "callbacks.progress_bar",
    "ckpt_path",
    "model.inference_ckpt",
    "task=",
    "model=",
    "experiment=",
    "trainer.accelerator",
    "trainer.devices",
)
UNIT_SCALE = {"percent": 0.01, "fraction": 1.0, "raw": 1.0}
STAGES = ("val", "test")


@dataclass
class Run:
    path: Path
    task: str
    model: str
    experiment: str | None
    settings: tuple[str, ...]  # overrides that make a different row
    metrics: dict[str, float]
    config: dict = field(default_factory=dict)  # the run's composed config (.hydra/config.yaml)


@dataclass
class Row:
    task: str
    name: str
    model: str
    experiment: str | None
    settings: tuple[str, ...]
    runs: list[Run] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name + (f" ({', '.join(self.settings)})" if self.settings else "")


def _load_yaml(path: Path, default):
    if not path.is_file():
        return default
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f) or default


def read_run(metrics_path: Path) -> Run:
    run_dir = metrics_path.parent
    try:
        metrics = {k: float(v) for k, v in json.loads(metrics_path.read_text(encoding="utf-8")).items()}
    except (json.JSONDecodeError, TypeError, ValueError) as e:
        raise ValueError(f"{metrics_path}: not a metrics file ({e})") from None
    hydra_dir = run_dir / ".hydra"
    choices = _load_yaml(hydra_dir / "hydra.yaml", {}).get("hydra", {}).get("runtime", {}).get("choices", {})
    overrides = [str(o) for o in _load_yaml(hydra_dir / "overrides.yaml", [])]
    explicit = dict(o.split("=", 1) for o in overrides if "=" in o)
    task = choices.get("task") or explicit.get("task") or "unknown"
    model = choices.get("model") or explicit.get("model") or "unknown"
    experiment = choices.get("experiment") or explicit.get("experiment")
    if experiment in ("none", None):
        experiment = None
    settings = tuple(
        sorted(
            o.lstrip("+~")
            for o in overrides
            if not o.lstrip("+~").startswith(IGNORED_PREFIXES)
            and o.lstrip("+~").split("=", 1)[0] not in VARYING
        )
    )
    config = _load_yaml(hydra_dir / "config.yaml", {})
    return Run(run_dir, task, model, experiment, settings, metrics, config)


def find_runs(dirs: list[str | Path]) -> list[Run]:
    runs = []
    for d in dirs:
        d = Path(d)
        if not d.exists():
            raise FileNotFoundError(f"no such directory: {d}")
        paths = [d] if d.is_file() else sorted(d.rglob("metrics.json"))
        runs += [read_run(p) for p in paths if ".hydra" not in p.parts]
    return runs


def group_runs(runs: list[Run]) -> dict[str, list[Row]]:
    """{task: rows}, rows keyed by everything but seed and fold."""
    rows: dict[tuple, Row] = {}
    for run in runs:
        name = run.experiment.rsplit("/", 1)[-1] if run.experiment else run.model
        key = (run.task, name, run.model, run.settings)
        rows.setdefault(key, Row(run.task, name, run.model, run.experiment, run.settings)).runs.append(run)
    by_task: dict[str, list[Row]] = defaultdict(list)
    for key in sorted(rows):
        by_task[key[0]].append(rows[key])
    return dict(by_task)


def summarise(values: list[float]) -> dict[str, float]:
    out = {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values)}
    out["std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return out


def _stats_text(mean: float, std: float | None = None, span: tuple[float, float] | None = None) -> str:
    text = f"{mean:.3f}"
    if std is not None:
        text += f" ± {std:.3f}"
    if span is not None:
        text += f" [{span[0]:.3f}, {span[1]:.3f}]"
    return text


def format_cell(values: list[float]) -> str:
    """Our runs' values: mean, then ± sample std for several runs, then [min, max] for more than 3."""
    if not values:
        return ""
    s = summarise(values)
    if s["n"] == 1:
        return _stats_text(s["mean"])
    return _stats_text(s["mean"], s["std"], (s["min"], s["max"]) if s["n"] > 3 else None)


def format_paper_cell(cell: float | dict | None) -> str:
    """A published number, or a published summary over folds in the form of ours."""
    if cell is None:
        return ""
    if isinstance(cell, dict):
        return _stats_text(cell["mean"], cell["std"], (cell["min"], cell["max"]))
    return _stats_text(cell)


def _mean(cell: float | dict) -> float:
    return cell["mean"] if isinstance(cell, dict) else cell


def _family(metric: str) -> str:
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
    return _unit_scale(units.get(metric, units.get(_family(metric), doc.get("unit", "fraction"))), where)


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


def config_value(config: dict, dotted: str):
    """`config["data"]["labels"]` for "data.labels"; None when a part is missing."""
    value = config
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _holds(condition: str, row: Row) -> bool:
    if condition in row.settings:
        return True
    dotted, _, wanted = condition.partition("=")
    value = config_value(row.runs[0].config, dotted) if row.runs else None
    return value is not None and str(value) == wanted


def _metric_keys(rows: list[Row], per_group: bool) -> list[str]:
    keys = {k for row in rows for run in row.runs for k in run.metrics if k.startswith("test/")}
    overall = sorted(k for k in keys if k.count("/") == 1 and k not in ("test/count", "test/loss"))
    if not per_group:
        return overall
    return sorted(k for k in keys if k.count("/") == 2)


def _table(rows: list[Row], keys: list[str], paper: dict, title: str) -> list[str]:
    with_paper = [k for k in keys if any(k in paper_row(r, paper) for r in rows)]
    header = ["model", "runs"]
    for k in keys:
        header.append(k)
        if k in with_paper:
            header.append(f"paper {k}")
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [row.label, str(len(row.runs))]
        published = paper_row(row, paper)
        for k in keys:
            cells.append(format_cell([r.metrics[k] for r in row.runs if k in r.metrics]))
            if k in with_paper:
                cells.append(format_paper_cell(published.get(k)))
        lines.append("| " + " | ".join(cells) + " |")
    return lines + [""]


def markdown_report(runs: list[Run], paper_dir: Path | None = None) -> str:
    if not runs:
        return "No metrics.json found.\n"
    out = []
    for task, rows in group_runs(runs).items():
        paper = load_paper(task, paper_dir)
        out.append(f"## {task}")
        out.append("")
        out.append("Mean ± sample std over seeds (and folds); [min, max] when a row has more than 3 runs.")
        if paper.get("rows"):
            out.append(
                f"Paper: {paper['paper']}, {paper.get('table', '')}; {paper['source']} (shown as fractions)."
            )
        out.append("")
        out += _table(rows, _metric_keys(rows, per_group=False), paper, f"{task}: test metrics")
        per_group = _metric_keys(rows, per_group=True)
        if per_group:
            out += _table(rows, per_group, paper, f"{task}: test metrics per group")
    return "\n".join(out)


def plot_per_group(runs: list[Run], out: Path, paper_dir: Path | None = None) -> bool:
    """Bars of the first test metric split by group (implicature type), one bar per row, with the paper's
    value as a black diamond over a bar where the paper has one. False when no task has per-group
    metrics."""
    for task, rows in group_runs(runs).items():
        paper = load_paper(task, paper_dir)
        # Groups split an overall score (test/acc -> test/acc/ignorance); per-class scores such as
        # Circa's test/f1/<label> have no overall twin and are not drawn.
        overall = set(_metric_keys(rows, per_group=False))
        keys = [k for k in _metric_keys(rows, per_group=True) if k.rsplit("/", 1)[0] in overall]
        if not keys:
            continue
        metric = keys[0].split("/")[1]
        groups = [k.split("/", 2)[2] for k in keys if k.split("/")[1] == metric]
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(groups)), 3.5))
        width = 0.8 / len(rows)
        paper_label = "paper"
        for i, row in enumerate(rows):
            means, stds = [], []
            for g in groups:
                values = [
                    r.metrics[f"test/{metric}/{g}"] for r in row.runs if f"test/{metric}/{g}" in r.metrics
                ]
                s = summarise(values) if values else {"mean": math.nan, "std": 0.0}
                means.append(s["mean"])
                stds.append(s["std"])
            positions = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(groups))]
            ax.bar(positions, means, width, yerr=stds, label=row.label, capsize=2)
            published = paper_row(row, paper)
            marks = [
                (x, _mean(published[f"test/{metric}/{g}"]))
                for x, g in zip(positions, groups, strict=True)
                if f"test/{metric}/{g}" in published
            ]
            if marks:
                xs, ys = zip(*marks, strict=True)
                ax.scatter(xs, ys, marker="D", s=28, color="black", label=paper_label, zorder=3)
                paper_label = None  # one legend entry for all the paper's points
        ax.set_xticks(range(len(groups)), groups)
        ax.set_ylabel(f"test {metric}")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{task}: {metric} per implicature type")
        ax.legend(fontsize=8)
        fig.tight_layout()
        try:
            with atomic_output(out, binary=True) as f:
                fig.savefig(f, format="png", dpi=120)
        finally:
            plt.close(fig)
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pragexp.report", description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", help="run or multirun directories (searched for metrics.json)")
    parser.add_argument("--out", type=Path, help="also write the markdown here (atomically)")
    parser.add_argument("--plot", type=Path, help="PNG of per-implicature-type bars (Fig. 5 for grice_qa)")
    args = parser.parse_args(argv)
    try:
        runs = find_runs(args.dirs)
    except (FileNotFoundError, ValueError) as e:
        print(f"pragexp.report: {e}", file=sys.stderr)
        return 2
    text = markdown_report(runs)
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    if args.plot and not plot_per_group(runs, args.plot):
        print("pragexp.report: no per-group metrics to plot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
