"""Results tables from run directories, side by side with the papers' published numbers.

    python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png]

Runs. Reads every `metrics.json` under the given run or multirun directories, with the run's
`.hydra/hydra.yaml` (task, model and experiment choices), `.hydra/config.yaml` (the composed config)
and `.hydra/overrides.yaml`. Runs that differ only in `seed` (or `data.fold`, the Circa
leave-one-scenario-out folds) form one row: each cell is the mean ± sample std over them, and
`[min, max]` when a row has more than 3 runs.

Tables, per task:
- settings: per row, the paper row that applies and the run's values of the paper's `setting_keys`;
- dev (`val/<m>`, the best checkpoint's scores) where the paper has dev numbers, then test (`test/<m>`):
  each column of ours is followed by the paper's where a matched paper row has that key;
- one table per split test metric (`test/f1/<label>`, `test/acc/<implicature type>`, ...);
- "published, not run here": the paper's rows that no run matched, so the whole published table is shown.
A column appears only when some run or paper row has its key. Keys that differ only in a number after
`@` (`val/r@1`, `val/r@5`) share one column `val/r@k` when the rows have different cut-offs (one k each)
and no row has two of them; otherwise each keeps its own column.

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
  scorer behind a metric). Each gets a column of the run's values (from its composed config; "unset" when
  absent), and the paper's setting is printed under it, so a run on another corpus or scorer is
  never read as the paper's.
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
from collections.abc import Callable, Iterable
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
HIDDEN_METRICS = ("count", "loss")


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

    @property
    def metric_keys(self) -> set[str]:
        return {k for run in self.runs for k in run.metrics}


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


def _is_overall(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 2 and parts[0] in STAGES and parts[1] not in HIDDEN_METRICS


def _is_split(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 3 and parts[0] == "test"


def _collapsed(key: str) -> str:
    stage, metric, *rest = key.split("/")
    return "/".join([stage, _family(metric), *rest])


class _Columns:
    """The columns of one table, ordered by stage, then as the paper lists its metrics. Keys that differ only
    in a cut-off (`r@1`, `r@5`) share one column `r@k` when the rows have different cut-offs and none has
    two of them."""

    def __init__(self, rows_keys: Iterable[set[str]], paper_order: list[str]):
        rows_keys = list(rows_keys)
        keys_of: dict[str, set[str]] = defaultdict(set)  # collapsed name -> the keys behind it
        self.apart = set()  # collapsed names whose keys keep their own columns
        for keys in rows_keys:
            in_row: dict[str, int] = defaultdict(int)
            for key in keys:
                keys_of[_collapsed(key)].add(key)
                in_row[_collapsed(key)] += 1
            self.apart |= {column for column, n in in_row.items() if n > 1}
        self.apart |= {column for column, keys in keys_of.items() if len(keys) == 1}
        order = list(dict.fromkeys(self.column(k) for k in paper_order))
        rank = {c: i for i, c in enumerate(order)}
        columns = {self.column(k) for keys in rows_keys for k in keys}
        self.names = sorted(columns, key=lambda c: (STAGES.index(c.split("/")[0]), rank.get(c, len(rank)), c))

    def column(self, key: str) -> str:
        collapsed = _collapsed(key)
        return key if collapsed in self.apart else collapsed

    def cells(self, keys: Iterable[str]) -> dict[str, str]:
        """{column: the key of `keys` shown in it}."""
        return {self.column(k): k for k in keys}


def _markdown_table(header: list[str], lines: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(cells) + " |" for cells in lines] + [""]


def _comparison_table(
    title: str,
    rows: list[Row],
    published: list[dict],
    selects: Callable[[str], bool],
    paper_order: list[str],
) -> list[str]:
    """Our rows with the paper's cell after each of our columns where a matched paper row has the key.
    `published[i]` is the paper row of `rows[i]`; `selects(key)` picks the table's keys."""
    ours = [{k for k in row.metric_keys if selects(k)} for row in rows]
    theirs = [{k for k in p if selects(k)} for p in published]
    columns = _Columns([a | b for a, b in zip(ours, theirs, strict=True)], paper_order)
    if not columns.names:
        return []
    our_cells = [columns.cells(keys) for keys in ours]
    paper_cells = [columns.cells(keys) for keys in theirs]
    with_paper = {c for cells in paper_cells for c in cells}
    header = ["model", "runs"]
    for c in columns.names:
        header += [c, f"paper {c}"] if c in with_paper else [c]
    lines = []
    for i, row in enumerate(rows):
        cells = [row.label, str(len(row.runs))]
        for c in columns.names:
            key = our_cells[i].get(c)
            cells.append(format_cell([r.metrics[key] for r in row.runs if key in r.metrics]) if key else "")
            if c in with_paper:
                cells.append(format_paper_cell(published[i].get(paper_cells[i].get(c))))
        lines.append(cells)
    return [f"### {title}", "", *_markdown_table(header, lines)]


def _published_table(title: str, paper_rows: dict[str, dict], paper_order: list[str]) -> list[str]:
    columns = _Columns([set(cells) for cells in paper_rows.values()], paper_order)
    lines = []
    for name, cells in paper_rows.items():
        by_column = columns.cells(cells)
        lines.append([name, *(format_paper_cell(cells.get(by_column.get(c))) for c in columns.names)])
    return [f"### {title}", "", *_markdown_table(["paper row", *columns.names], lines)]


def _settings_table(task: str, rows: list[Row], matched: list[str | None], paper: dict) -> list[str]:
    """Per row: the paper row that applies (when the paper's rows carry settings) and the values of the
    paper's `setting_keys` in the runs' configs, followed by the paper's own setting of those keys."""
    header = ["model", "runs"]
    columns = []
    if any(parse_row_name(key)[1] for key in paper["rows"]):
        header.append("paper row")
        columns.append([key or "" for key in matched])
    setting_keys = paper.get("setting_keys", {})
    for key in setting_keys:
        header.append(key)
        columns.append(
            [", ".join(dict.fromkeys(_config_text(run.config, key) for run in row.runs)) for row in rows]
        )
    if len(header) == 2:
        return []
    lines = [
        [row.label, str(len(row.runs)), *(column[i] for column in columns)] for i, row in enumerate(rows)
    ]
    out = [f"### {task}: settings", "", *_markdown_table(header, lines)]
    if setting_keys:
        out += [
            "Paper's setting: " + "; ".join(f"`{k}`: {text}" for k, text in setting_keys.items()) + ".",
            "",
        ]
    return out


def _config_text(config: dict, key: str) -> str:
    value = config_value(config, key)
    return "unset" if value is None else str(value)


def task_report(task: str, rows: list[Row], paper: dict) -> list[str]:
    """The markdown section of one task: what the cells are, the rows' settings, dev, test and per-group
    tables, then the paper's rows that no run matched."""
    matched = [matching_paper_row(row, paper) for row in rows]
    published = [paper["rows"][key] if key else {} for key in matched]
    paper_order = list(dict.fromkeys(k for cells in paper["rows"].values() for k in cells))
    paper_dev = {_collapsed(k) for k in paper_order if k.startswith("val/")}

    out = [f"## {task}", ""]
    out.append(
        "- Ours: mean ± sample std over seeds (and folds); [min, max] when a row has more than 3 runs."
    )
    if paper["rows"]:
        out.append(
            f"- Paper: {paper['paper']}, {paper.get('table', '')}. Percentages are shown as fractions."
        )
        out.append(f"- Source: {paper['source']}")
        if paper.get("setting"):
            out.append(f"- Measured under: {paper['setting']}")
    out.append("")
    out += _settings_table(task, rows, matched, paper)

    def dev(key: str) -> bool:  # the best checkpoint's dev scores, where the paper has them
        return key.startswith("val/") and _is_overall(key) and _collapsed(key) in paper_dev

    def test(key: str) -> bool:
        return key.startswith("test/") and _is_overall(key)

    out += _comparison_table(f"{task}: dev", rows, published, dev, paper_order)
    out += _comparison_table(f"{task}: test", rows, published, test, paper_order)

    split_metrics = {k.split("/")[1] for row in rows for k in row.metric_keys if _is_split(k)}
    split_metrics |= {k.split("/")[1] for cells in published for k in cells if _is_split(k)}
    rank = {key: i for i, key in enumerate(paper_order)}
    for metric in sorted(split_metrics, key=lambda m: (rank.get(f"test/{m}", len(rank)), m)):
        prefix = f"test/{metric}/"
        out += _comparison_table(
            f"{task}: {prefix}<group>", rows, published, lambda k, p=prefix: k.startswith(p), paper_order
        )

    unmatched = {key: cells for key, cells in paper["rows"].items() if key not in matched}
    if unmatched:
        out += _published_table(f"{task}: published, not run here", unmatched, paper_order)
    return out


def markdown_report(runs: list[Run], paper_dir: Path | None = None) -> str:
    if not runs:
        return "No metrics.json found.\n"
    out = []
    for task, rows in group_runs(runs).items():
        out += task_report(task, rows, load_paper(task, paper_dir))
    return "\n".join(out)


def _split_keys(rows: list[Row]) -> list[str]:
    """Per-group test keys whose overall score the runs also have (test/acc/ignorance beside test/acc):
    per-class scores such as Circa's test/f1/<label> have no overall twin."""
    keys = {k for row in rows for k in row.metric_keys}
    return sorted(k for k in keys if _is_split(k) and k.rsplit("/", 1)[0] in keys)


def plot_per_group(runs: list[Run], out: Path, paper_dir: Path | None = None) -> bool:
    """Bars of the first test metric split by group (implicature type), one bar per row, with the paper's
    value as a black diamond over a bar where the paper has one. False when no task has per-group
    metrics."""
    for task, rows in group_runs(runs).items():
        paper = load_paper(task, paper_dir)
        keys = _split_keys(rows)
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
