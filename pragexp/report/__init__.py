"""Results tables and figures from run directories, beside the papers' published numbers (the README's "Reports"
says what each table holds): `python -m pragexp.report DIR [DIR ...]` (pragexp.report.cli).

What a run was comes from its run.json (runs), its rows' tables beside the paper's from tables and paper, what
classifiers predict from label_shares and confusion, the scorecard from scorecard, sweeps from sweeps, and a
dataset's own section from the module its task declares (sections)."""

from pragexp.report.cli import main
from pragexp.report.paper import load_paper, paper_data, paper_files, paper_row, parse_row_name
from pragexp.report.runs import Row, Run, find_runs, group_runs
from pragexp.report.tables import markdown_report

__all__ = [
    "Row",
    "Run",
    "find_runs",
    "group_runs",
    "load_paper",
    "main",
    "markdown_report",
    "paper_data",
    "paper_files",
    "paper_row",
    "parse_row_name",
]
