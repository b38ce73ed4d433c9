"""Results tables and figures from run directories beside the papers' numbers (docs/reports.md):
`python -m pragexp.report DIR [DIR ...]` (cli). Runs come from runs, the task tables from tables."""

from pragexp.report.cli import main
from pragexp.report.runs import Row, Run, find_runs, group_runs
from pragexp.report.tables import load_paper, markdown_report, paper_row

__all__ = ["Row", "Run", "find_runs", "group_runs", "load_paper", "main", "markdown_report", "paper_row"]
