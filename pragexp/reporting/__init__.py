"""What every report is written with: a results table's cells and columns over runs (results), Markdown
tables and cells (markdown), bar figures written whole (figures), a paper's published numbers in our units
(papers), and a benchmark's figures per group (groups).

Its own room, below the two that write reports: `pragexp.report` (the command: run folders to tables,
scorecard, figures) and the datasets' report sections (`pragexp/data/<dataset>/report_section.py`, which the
report loads as plugins: `pragexp.report.sections`). The data may not import the report (the report loads the
data's sections), so what both use lives here; the metrics use it too, for how a figure beside a mean is named
and written (`figure_key`, `estimate_text`). It imports utils only.
"""
