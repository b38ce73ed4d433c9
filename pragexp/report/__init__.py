"""Results tables from run directories, beside the papers' published numbers.

    python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png] [--sweep-plot FILE.png]
        [--figures DIR] [--scorecard FILE.md]

Runs: every `metrics.json` under the given directories, with what the run says it was (pragexp.report.runs).
Runs that differ only in seed or fold form one row. A cell is a mean over items with its uncertainty where the
runs wrote it (`0.337 ± 0.021 (n=650)`: ± the standard error, n the items; pragexp.metrics.uncertainty), the
bare mean for a run made before; over several runs their mean, then `; sd 0.010 over 3 runs` (the sample std
over them) and [min, max] when a row has more than 3 runs. A row is named by its experiment (or model) and its command-line settings; a
data file names it where the task's runs differ in it or where it is not the release's own.

Tables, per task (pragexp.report.tables): the rows' settings beside the paper row that applies; dev where the
paper has dev numbers, then test, each of our columns followed by the paper's; one table per split test metric
(`test/f1/<label>`, `test/acc/<type>`); the classifiers' predicted label shares with a `warning:` for a row
whose top label takes more than 90% of them (pragexp.report.label_shares); the paper's rows no run matched.
Keys that differ only in a cut-off (`val/r@1`, `val/r@5`) share a column `val/r@k` where each row has one.

Published numbers: one file per paper in its dataset's package, `pragexp/data/<dataset>/<dataset>.json`
(format: pragexp.utils.papers). A paper row is named by an experiment, an experiment file or a model,
optionally with the settings it was measured under (`bert_yn (data.labels=strict, data.setting=matched)`); it
applies to a row whose runs have those settings on the command line or in their config, the one with the most
settings winning. `setting_keys` (the corpus, a metric's scorer) get a column of the runs' values, with the
paper's own setting printed under it. `data`: numbers about the data, read with `paper_data(paper, name)`.

A dataset's own sections and figures (Hu et al.'s table per phenomenon, LUDWIG's k curve, the intentions'
figures) live in its package (pragexp.report.sections). `--plot` draws per-group bars of the first task with
per-group metrics (GRICE's Fig. 5 for grice_qa), or with `--scorecard` the scorecard's bars; `--figures DIR`
writes the datasets' figures and a confusion matrix per classifier row and task (pragexp.report.confusion);
An LLM's generated answers stand beside its log-likelihood ones (pragexp.report.scoring).
`--sweep-plot` a sweep's monitored metric against each swept parameter (pragexp.report.sweeps).
`--scorecard FILE.md` writes one table across datasets: a row per model, a column per headline test metric
(pragexp.report.scorecard).
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
from pragexp.report.tables import format_paper_cell, markdown_report, task_report

__all__ = [
    "Row",
    "Run",
    "find_runs",
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
    "task_report",
]
