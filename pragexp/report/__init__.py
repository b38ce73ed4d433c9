"""Results tables from run directories, side by side with the papers' published numbers.

    python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png] [--figures DIR]
        [--scorecard FILE.md]

Runs. Reads every `metrics.json` under the given run or multirun directories, with the run's
`.hydra/hydra.yaml` (task, model and experiment choices), `.hydra/config.yaml` (the composed config)
and `.hydra/overrides.yaml`. Runs that differ only in `seed` (or `data.fold`, the Circa
leave-one-scenario-out folds) form one row: each cell is the mean ± sample std over them, and
`[min, max]` when a row has more than 3 runs.
A row is named by its experiment (or model) and its command-line settings. A data location
(`data.path`, `data.test_path`, ...) names it by the file's name, not its directory, after the other settings
(`bert_yn (model.pretrained=minilm, data: circa-7-scenarios.tsv)`), where the task's runs differ in it or
where it is not the release's own file (`circa-data.tsv`; see `runs.RELEASE_FILES`); runs on the same file
in other directories are one row. The paper's cell still applies by the row's settings (labels, setting).

Tables, per task:
- settings: per row, the paper row that applies and the run's values of the paper's `setting_keys`;
- dev (`val/<m>`, the best checkpoint's scores) where the paper has dev numbers, then test (`test/<m>`):
  each column of ours is followed by the paper's where a matched paper row has that key;
- one table per split test metric (`test/f1/<label>`, `test/acc/<implicature type>`, ...);
- classifiers (runs with `predictions.jsonl` of gold and predicted label names, or `confusion/test.json`):
  "predicted label shares", the share of the test predictions per label (and "no answer"), a gold row per
  data and label set, and a `warning:` line under it for a row whose top label takes more than 90% of them
  (pragexp.report.label_shares);
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
  reproduce get a name that says what they are (`human`, `bert_dis_yn`, `human_best`, LUDWIG's
  `text-davinci-002 (prompt.shots=30)`): our LLM rows are named `llm`, so they are listed as published.
- `setting_keys`: config keys that describe a setting without selecting a paper row (the corpus, the
  scorer behind a metric). Each gets a column of the run's values (from its composed config; "unset" when
  absent), and the paper's setting is printed under it, so a run on another corpus or scorer is
  never read as the paper's.
- `data`: published numbers about the data rather than a model (GRICE Table 4's implicature mix, Hu et
  al.'s items and options per phenomenon), read with `paper_data(paper, name)`.

`--plot` draws per-group bars (test metric per implicature type) for the models of the first task that
has per-group metrics: for `grice_qa` with MemNN and MemNN w/ inf this is the paper's Fig. 5.

`--figures DIR` writes the tasks' own figures, among them a confusion matrix per classifier row and one per
task with its rows side by side (pragexp.report.confusion), and Hu et al.'s accuracy per phenomenon and
LUDWIG's accuracy against k (pragexp.report.benchmarks, which also adds their report sections).

`--scorecard FILE.md` writes (and prints) one table across datasets: a row per model (chance, majority, the
papers' rows, ours, LLMs), a column per dataset's headline test metric (pragexp.report.scorecard); with
it, `--plot` draws the scorecard's grouped bars instead.
"""

from pragexp.report.cli import main
from pragexp.report.paper import (
    load_paper,
    matching_paper_row,
    paper_data,
    paper_files,
    paper_row,
    parse_row_name,
)
from pragexp.report.plots import plot_per_group
from pragexp.report.runs import Row, Run, find_runs, group_runs, read_run
from pragexp.report.tables import format_cell, format_paper_cell, markdown_report, task_report
from pragexp.utils.results import summarise

__all__ = [
    "Row",
    "Run",
    "find_runs",
    "format_cell",
    "format_paper_cell",
    "group_runs",
    "load_paper",
    "main",
    "markdown_report",
    "matching_paper_row",
    "paper_data",
    "paper_files",
    "paper_row",
    "parse_row_name",
    "plot_per_group",
    "read_run",
    "summarise",
    "task_report",
]
