"""The scorecard: one row per model, one column per dataset's headline test metric, in one table and one plot.

    python -m pragexp.report DIR [DIR ...] --scorecard scorecard.md [--plot scorecard.png]

Columns (test scores, fractions 0-1 as in metrics.json):
- GRICE recovery R@1 (`grice_recovery`, `test/r@1`) and GRICE QA acc (`grice_qa`, `test/acc`);
- Circa RELAXED acc and Circa STRICT acc (`circa`, `test/acc`; the run's `data.labels`), matched setting; the
  leave-one-scenario-out (`data.setting=unmatched`) pair follows only when some run was made in it;
- PragmatiCQA F1_lit and F1_prag (`pragmaticqa`, `test/f1_lit`, `test/f1_prag`);
- Intentions generative acc (`intentions_reply`, `test/acc`) and multiple-choice acc (`intentions_mc`);
- the LLM benchmarks', each only when some run was made on it (pragexp.report.benchmark_columns): Hu et al.
  acc (`hu_pragmatics`; published rows and chance over the phenomena the runs cover, item-weighted, noted
  under the table), LUDWIG 0-shot acc and LUDWIG best-k acc (`ludwig`: mean ± population std across
  templates, the best k noted per cell), BIG-bench implicatures acc (`bigbench_implicatures`).
Runs of other tasks (`nli`, `boolq`: Circa's transfer sources) have no column.

Rows, in this order:
- `chance`: a uniform guess among the options: 1/4 for GRICE recovery (4 candidates), 1/4 RELAXED and 1/6
  STRICT for Circa (its classes), 1/2 for the intentions' multiple choice (2 options), LUDWIG and BIG-bench
  (yes/no), Hu's item-weighted 1/options (a paper's own chance row is this row). The other columns have
  none: a GRICE QA answer is a word of a vocabulary that depends on the generated data, F1 over generated
  text has no guess to average over, and a judged free reply is not a choice among options.
- `majority`: the runs of `model=majority` where there are some; otherwise, per column, what that baseline
  would score on the data our runs read: the share of the test split taken by the training split's most
  frequent label (the first one on a tie, as `MajorityClassifier` picks it), from the `label_counts` of the
  runs' `data_report.json` (Circa writes one). Runs on the same data count once; several data sets (folds)
  give mean ± std over them. Empty where neither exists.
- published rows: the papers' rows (pragexp/paper_numbers, read through `load_paper`, so percents are shown
  as fractions), named like ours with `(paper)`: `memnn (paper)` carries GRICE Table 5's MemNN in the
  recovery column and Table 6's in the QA column (the `tableN_` prefix of GRICE's row names is dropped, as
  for our experiments); Circa's `data.labels`/`data.setting` pick the column; other conditions stay in the
  name (`fid (paper, retriever.top_k=5)`). A published summary over folds reads `mean ± std`. LUDWIG's
  `prompt.shots` picks its column too (`text-davinci-002 (paper)`: 0-shot, and k=30 in best-k).
- trained models and baselines: named by the run's `model_label` where the config sets it to something
  other than the model (.hydra/config.yaml keeps `${model_name}` unresolved), else by its experiment
  (`circa/bert_yn` -> `bert_yn`; `grice/table5_memnn` -> `memnn`), else by its model.
- LLMs (`model=llm`, and the intention tasks, whose model is `llm=`): `<llm.model> <k>-shot`, k being
  `prompt.shots` (0 when the config has none: the intention prompts carry no demonstrations; LUDWIG's best-k
  cell, across k, is in the 0-shot row); fine-tuned
  (`llm.finetune=lora|full`): `<llm.model> lora`, one row across tasks, each task's training schedule
  (`optimizer.*`, `trainer.*`, ...) noted under the table like a task setting. The reference
  backends (no `llm.model`: they reply with the dataset's own text) are the judges' sanity check, not a model,
  and are left out.
Command-line settings: those of the model (`optimizer.lr=0.1`, `llm.dtype=float16`) follow its name in
brackets and make another row. Those of the task's side (`data.*`, `retriever*`, `judge*`, `prompt*`,
`metrics.*`, and `trainer.limit_test_batches`: which test examples) only some tasks take, so they do not part a row (an LLM keeps one row across tasks): where a
cell's runs share one set, it is noted under the table; where a column's runs differ in them, those
without any stay in the row and each other set gets a row named with it (`smollm2 0-shot (judge=gpt4)`,
`smollm2 0-shot (prompt.cot=5)`). A data file that is not the release's own (`runs.RELEASE_FILES`) is such a
task setting, by its name: `data: circa-7-scenarios.tsv`. Otherwise, settings that say where the data is
(`data.path`), whether dev was scored
too (`validate`), which column a run
belongs to (`data.labels`, `data.setting`), what a cell averages over (seed, fold, `prompt.template`), how
an LLM is batched or placed (`llm.batch_size`, `llm.device`), or how a job runs (`print_config`, those W&B
run names leave out) are left out.

Cells: our runs' mean, and for several: ± sample std and (n). An LLM row with several prompt templates in a
cell averages each template's runs (seeds) first and shows mean ± std across templates, n templates: the
prompt sensitivity. Otherwise n counts runs (seeds, folds). A missing cell is `–`. A cell whose runs
predict one label for more than 90% of their test items (mean shares from predictions.jsonl or
confusion/test.json, see label_shares) ends in `†`, with the label and its share (and the gold share) in a
footnote; the majority baseline does so by construction and is not marked.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from pragexp.report import sections
from pragexp.report.label_shares import collapse_text, mean_shares
from pragexp.report.paper import load_paper
from pragexp.report.runs import RELEASE_FILES, Run, data_file_name, data_setting_text
from pragexp.utils.instantiate import NOT_IN_RUN_NAME
from pragexp.utils.io import atomic_output
from pragexp.utils.markdown import markdown_table
from pragexp.utils.results import DATA_LOCATION, Cell, Column, config_value, settings_text, summarise

MISSING = "–"
COLLAPSE_MARK = "†"  # a cell whose runs predict one label for more than 90% of the test items
LLM_TASKS = ("intentions_reply", "intentions_mc")
# Settings that name no other model: the column (Circa's label set and setting), what a cell averages over,
# the row's own name, and how an LLM is batched or placed (the same numbers up to rounding).
NOT_A_SETTING = (
    "data.labels",
    "data.setting",
    "prompt.template",
    "prompt.shots",
    "llm",
    "llm.model",
    "llm.batch_size",
    "llm.device",
    "model_label",
    "validate",  # whether dev was scored too: the test figures are the same
    "threads",  # CPU threads: the same figures, sooner
)
# The task's side of a run (its data, retriever, judge, prompt, scorers): settings that only some tasks
# take, so they qualify a cell, not the model's row.
TASK_SETTINGS = ("data", "retriever", "judge", "prompt", "metrics")
TASK_SETTING_KEYS = ("trainer.limit_test_batches",)  # which test examples were scored
TUNING_SETTINGS = ("optimizer", "scheduler", "trainer")  # a fine-tuned LLM's per-task schedule


def _circa(labels: str, setting: str, chance: float) -> Column:
    title = f"Circa {labels.upper()} acc" + ("" if setting == "matched" else f" ({setting})")
    return Column(title, "circa", "test/acc", labels, setting, chance)


# Circa's chance levels are 1 / len(pragexp.data.circa.io.LABELS[labels]) (a test checks it).
COLUMNS = (
    Column("GRICE recovery R@1", "grice_recovery", "test/r@1", chance=1 / 4),
    Column("GRICE QA acc", "grice_qa", "test/acc"),
    _circa("relaxed", "matched", 1 / 4),
    _circa("strict", "matched", 1 / 6),
    Column("PragmatiCQA F1_lit", "pragmaticqa", "test/f1_lit"),
    Column("PragmatiCQA F1_prag", "pragmaticqa", "test/f1_prag"),
    Column("Intentions gen. acc", "intentions_reply", "test/acc"),
    Column("Intentions MC acc", "intentions_mc", "test/acc", chance=1 / 2),
)
UNMATCHED = (_circa("relaxed", "unmatched", 1 / 4), _circa("strict", "unmatched", 1 / 6))
BIGBENCH = Column("BIG-bench implicatures acc", "bigbench_implicatures", "test/acc", chance=0.5)


@dataclass
class ScoreRow:
    name: str
    kind: str  # chance | majority | paper | trained | llm
    cells: dict[str, Cell] = field(default_factory=dict)  # column title -> cell
    # column title -> the task settings of its runs, and what the cell picked (LUDWIG best-k: its k)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class Scorecard:
    columns: list[Column]
    rows: list[ScoreRow]


def columns_for(runs: list[Run]) -> list[Column]:
    """The headline columns, the unmatched Circa pair where some run was made in that setting, and the LLM
    benchmarks' columns where some run was made on them."""
    unmatched = any(c.takes(r) for c in UNMATCHED for r in runs)
    bigbench = [BIGBENCH] if any(r.task == BIGBENCH.task for r in runs) else []
    return [*COLUMNS, *(UNMATCHED if unmatched else ()), *sections.columns(runs), *bigbench]


def split_settings(run: Run) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run's command-line settings that make another model (`optimizer.lr=0.1`, `llm.dtype=float16`),
    and those of its task's side (`judge=gpt4`, `data.input=answer`, `retriever.top_k=5`)."""
    model, task = [], []
    for setting in run.settings:
        key = setting.split("=", 1)[0]
        if DATA_LOCATION.match(key):  # where the data is: only a file that is not the release's says more
            name = data_file_name(setting.split("=", 1)[1]) if "=" in setting else None
            if name is not None and name not in RELEASE_FILES.get(run.task, {}).get(key, (name,)):
                task.append(data_setting_text(key, name))
            continue
        if key in NOT_A_SETTING or setting.startswith(NOT_IN_RUN_NAME):
            continue
        task_side = key.split(".", 1)[0] in TASK_SETTINGS or key in TASK_SETTING_KEYS
        if _tuned(run):  # one fine-tuned LLM across tasks: each task's training schedule qualifies its cell
            if key == "llm.finetune":
                continue
            task_side = task_side or key.split(".", 1)[0] in TUNING_SETTINGS
        (task if task_side else model).append(setting)
    return tuple(model), tuple(task)


def _is_llm(run: Run) -> bool:
    return run.model == "llm" or run.task in LLM_TASKS


def _tuned(run: Run) -> str | None:
    """`lora` or `full` for a fine-tuned LLM's run (`llm.finetune`, or for an evaluation of a checkpoint
    (`ckpt_path`), the checkpoint's setting), else None."""
    if not _is_llm(run):
        return None
    finetune = _literal(config_value(run.config, "llm.finetune"))
    ckpt = _literal(run.config.get("ckpt_path"))
    if finetune not in ("lora", "full") and ckpt:
        finetune = _checkpoint_finetune(ckpt)
    return finetune if finetune in ("lora", "full", "tuned") else None


def _checkpoint_finetune(path: str) -> str:
    """The `llm.finetune` a checkpoint was trained with; `tuned` when the file cannot be read (moved)."""
    from pragexp.utils import checkpoint

    try:
        model = checkpoint.read(path).model_config or {}
    except (OSError, ValueError):
        return "tuned"
    llm = model.get("llm") if isinstance(model.get("llm"), dict) else {}
    return str(llm.get("finetune") or "tuned")


def _literal(value) -> str | None:
    """A config string that is not an unresolved interpolation (.hydra/config.yaml keeps `${...}`)."""
    return value if isinstance(value, str) and value and "${" not in value else None


def _paper_style_name(name: str) -> str:
    return re.sub(r"^table\d+_", "", name)


def model_name(run: Run, pool_shots: bool = False) -> tuple[str, str] | None:
    """(kind, name) of the model behind a run: majority, trained (models and baselines) or llm; None for a
    run the scorecard leaves out (a reference backend). `pool_shots`: a prompted LLM's row is its 0-shot one
    whatever the run's k (a column whose cell picks among k)."""
    if _is_llm(run):
        llm = _literal(config_value(run.config, "llm.model"))
        if llm is None:
            return None
        tuned = _tuned(run)
        if tuned:
            return "llm", f"{llm} {tuned}"
        shots = 0 if pool_shots else config_value(run.config, "prompt.shots") or 0
        return "llm", f"{llm} {shots}-shot"  # prompted, frozen
    if run.model == "majority":
        return "majority", "majority"
    label = _literal(run.config.get("model_label"))
    if label and label != run.model:  # set on purpose (a resolved config repeats the model: not a name)
        return "trained", label
    return "trained", _paper_style_name(run.experiment.rsplit("/", 1)[-1]) if run.experiment else run.model


def model_rows(runs: list[Run], columns: list[Column]) -> dict[str, list[ScoreRow]]:
    """{kind: rows} of our runs: majority (at most one row), trained, llm, each sorted by name.

    A row is a model and its own settings. Its runs' task settings (`judge=gpt4`, `retriever=minilm`) do
    not part it, so an LLM keeps one row across tasks: where one column's runs all share theirs, they
    fill the row's cell and are noted under the table; where they differ, the runs without any stay in
    the row and each other set gets a row of its own, named with it. Majority runs are one row whatever
    their settings (the baseline has none)."""
    grouped: dict[tuple, dict[str, dict[tuple, list[Run]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for run in runs:
        for column in columns:
            named = model_name(run, column.pools_shots) if column.takes(run) else None
            if named is None:
                continue
            model_settings, task_settings = split_settings(run) if named[0] != "majority" else ((), ())
            grouped[(*named, model_settings)][column.title][task_settings].append(run)
    out: dict[str, list[ScoreRow]] = defaultdict(list)
    for (kind, name, own), by_column in sorted(grouped.items()):
        row = ScoreRow(name + settings_text(own), kind)
        apart: dict[tuple, ScoreRow] = {}
        for column in columns:
            variants = by_column.get(column.title, {})
            for task_settings, variant_runs in sorted(variants.items()):
                cell = column.cell(variant_runs)
                if cell is None:
                    continue
                if kind != "majority":  # the baseline predicts one label by construction
                    cell = collapse_mark(cell, variant_runs)
                target, noted = row, task_settings
                if task_settings and len(variants) > 1:  # a row of its own, named with its settings
                    text = settings_text((*own, *task_settings))
                    target, noted = apart.setdefault(task_settings, ScoreRow(name + text, kind)), ()
                target.cells[column.title] = cell
                if noted or cell.note:
                    target.notes[column.title] = ", ".join([*noted, *([cell.note] if cell.note else [])])
        out[kind] += [r for r in (row, *apart.values()) if r.cells]
    return out


def collapse_mark(cell: Cell, runs: list[Run]) -> Cell:
    """The cell, marked where one label takes more than 90% of its runs' test predictions (mean shares
    from their predictions.jsonl or confusion/test.json)."""
    shares = mean_shares(runs)
    return replace(cell, collapse=collapse_text(shares)) if shares and shares.collapsed() else cell


def label_counts(run_dir: Path) -> dict | None:
    """The `label_counts` per split of the run's data_report.json (None without one)."""
    path = Path(run_dir) / "data_report.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8")).get("label_counts") or None


def majority_share(counts: dict) -> float | None:
    """The test share of the training split's most frequent label (the first on a tie); None without
    train and test counts."""
    train, test = counts.get("train"), counts.get("test")
    if not train or not test or not sum(test.values()):
        return None
    majority = max(train, key=lambda label: train[label])  # max keeps the first of equal counts
    return test.get(majority, 0) / sum(test.values())


def majority_row(runs: list[Run], columns: list[Column], from_runs: ScoreRow | None) -> ScoreRow:
    """The majority runs' cells, and for the other columns the majority baseline computed from the data
    reports of the runs in that column (one value per distinct data)."""
    row = from_runs or ScoreRow("majority", "majority")
    for column in columns:
        if column.title in row.cells:
            continue
        per_data: dict[str, float] = {}
        for run in runs:
            counts = label_counts(run.path) if column.takes(run) else None
            share = majority_share(counts) if counts else None
            if share is not None:
                per_data[json.dumps(counts, sort_keys=True)] = share
        if per_data:
            s = summarise(list(per_data.values()))
            row.cells[column.title] = Cell(s["mean"], s["std"] if s["n"] > 1 else None, s["n"])
    return row


def chance_row(columns: list[Column]) -> ScoreRow:
    return ScoreRow("chance", "chance", {c.title: Cell(c.chance) for c in columns if c.chance is not None})


def published_rows(columns: list[Column], paper_dir: Path | None = None) -> list[ScoreRow]:
    """The papers' rows, in the papers' order, each in the columns that take it (see `Column.published`)."""
    rows: dict[str, ScoreRow] = {}
    for column in columns:
        for name, rest, cell in column.published(load_paper(column.task, paper_dir)["rows"]):
            label = f"{_paper_style_name(name)} ({', '.join(['paper', *rest])})"
            row = rows.setdefault(label, ScoreRow(label, "paper"))
            row.cells[column.title] = cell
            if cell.note:
                row.notes[column.title] = cell.note
    return list(rows.values())


def build(runs: list[Run], paper_dir: Path | None = None) -> Scorecard:
    columns = columns_for(runs)
    ours = model_rows(runs, columns)
    majority = majority_row(runs, columns, next(iter(ours.get("majority", [])), None))
    rows = [
        chance_row(columns),
        majority,
        *published_rows(columns, paper_dir),
        *ours.get("trained", []),
        *ours.get("llm", []),
    ]
    return Scorecard(columns, rows)


def _cell_text(row: ScoreRow, title: str) -> str:
    cell = row.cells.get(title)
    if cell is None:
        return MISSING
    return cell.text + (f" {COLLAPSE_MARK}" if cell.collapse else "")


def markdown(card: Scorecard) -> str:
    header = ["model", *(c.title for c in card.columns)]
    lines = [[row.name, *(_cell_text(row, c.title) for c in card.columns)] for row in card.rows]
    notes = [f"{row.name}, {title}: {text}" for row in card.rows for title, text in row.notes.items()]
    covers = [f"{column.title}: {column.note}" for column in card.columns if column.note]
    collapsed = [
        f"{row.name}, {title}: {cell.collapse}"
        for row in card.rows
        for title, cell in row.cells.items()
        if cell.collapse
    ]
    return "\n".join(
        [
            "## Scorecard",
            "",
            *markdown_table(header, lines),
            "",
            "Test scores as fractions. Ours: mean ± sample std (n) over runs, or over prompt templates for an "
            "LLM row with several. chance: a uniform guess; majority: model=majority runs, else the training "
            "split's most frequent label scored on the test split (data_report.json); (paper): published. "
            f"{MISSING}: no value.",
            *(["", "Columns: " + "; ".join(covers) + "."] if covers else []),
            *(["", "Task settings of a cell's runs: " + "; ".join(notes) + "."] if notes else []),
            *(
                [
                    "",
                    f"{COLLAPSE_MARK} One label takes more than 90% of the cell's test predictions: "
                    + "; ".join(collapsed)
                    + ".",
                ]
                if collapsed
                else []
            ),
            "",
        ]
    )


def _colors(rows: list[ScoreRow]) -> dict[str, tuple]:
    """A color per row: ours from tab10 then tab20, the papers' from tab20b and tab20c, so that a published
    bar never takes the color of one of ours."""
    from matplotlib import colormaps

    ours = [*colormaps["tab10"].colors, *colormaps["tab20"].colors[1::2]]
    papers = [*colormaps["tab20b"].colors, *colormaps["tab20c"].colors[:16]]
    out, counts = {}, {"paper": 0, "ours": 0}
    for row in rows:
        side, palette = ("paper", papers) if row.kind == "paper" else ("ours", ours)
        out[row.name] = palette[counts[side] % len(palette)]
        counts[side] += 1
    return out


def plot(card: Scorecard, out: Path) -> bool:
    """Grouped bars: a group per column, a bar per row with a value there (published ones hatched), the
    std as an error bar, chance as a dashed line across its group. A matplotlib Figure without pyplot,
    written atomically. False when no row but chance has a value."""
    from matplotlib.figure import Figure

    bars = [row for row in card.rows if row.kind != "chance" and row.cells]
    if not bars:
        return False
    chance = next((row for row in card.rows if row.kind == "chance"), ScoreRow("chance", "chance"))
    color = _colors(bars)
    most = max(sum(c.title in row.cells for row in bars) for c in card.columns)
    width = 0.8 / max(most, 4)  # the same for every bar: a lone bar does not fill its group
    fig = Figure(figsize=(max(8.0, 0.12 * max(most, 4) * len(card.columns) + 2), 5.0))
    ax = fig.subplots()
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    labelled: set[str] = set()
    chance_label = "chance"
    for j, column in enumerate(card.columns):
        here = [row for row in bars if column.title in row.cells]
        for i, row in enumerate(here):
            cell = row.cells[column.title]
            ax.bar(
                j + (i - (len(here) - 1) / 2) * width,
                cell.mean,
                width,
                yerr=cell.std,
                capsize=1.5,
                color=color[row.name],
                hatch="//" if row.kind == "paper" else None,
                edgecolor="white" if row.kind == "paper" else None,
                label=None if row.name in labelled else row.name,
            )
            labelled.add(row.name)
        if column.title in chance.cells:
            half = max(len(here), 1) * width / 2 + 0.05
            ax.hlines(
                chance.cells[column.title].mean,
                j - half,
                j + half,
                colors="black",
                linestyles="--",
                label=chance_label,
                zorder=3,
            )
            chance_label = None
    ax.set_xticks(range(len(card.columns)), [c.title for c in card.columns], rotation=20, ha="right")
    ax.set_xlim(-0.5, len(card.columns) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("test score (fraction)")
    ax.set_title("Scorecard (hatched: published)")
    order = {name: i for i, name in enumerate(["chance", *(row.name for row in bars)])}
    handles = sorted(zip(*ax.get_legend_handles_labels(), strict=True), key=lambda h: order[h[1]])
    ax.legend(
        *zip(*handles, strict=True), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=4
    )
    with atomic_output(out, binary=True) as f:
        fig.savefig(f, format="png", dpi=120, bbox_inches="tight")
    return True
