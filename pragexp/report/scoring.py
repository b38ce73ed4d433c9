"""Generated answers beside log-likelihood ones: per task, each generating LLM's rows beside its other scorings'
on the same data, a row per scoring and template (the README's "Reports")."""

from __future__ import annotations

from collections import defaultdict

from pragexp.report.runs import Run
from pragexp.utils.markdown import table_section
from pragexp.utils.results import runs_cell

SHOWN = ("unparsed", "forced", "reasoning_tokens")  # of pragexp.metrics.generation's figures
CAPTION = (
    "unparsed: share of items with no readable answer (scored wrong); forced: share whose reasoning hit "
    "`prompt.reasoning_budget`; reasoning_tokens: their mean per item."
)


def scoring_sections(runs: list[Run]) -> list[str]:
    """A table per task with a generating run: its LLMs' rows side by side ([] without such runs)."""
    # task -> the same LLM on the same items -> (generates, scoring, template) -> runs
    found: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run in runs:
        llm, row = run.record.model.llm, run.record.model.row
        if llm is not None and llm.prompting is not None and row is not None:
            how = (llm.prompting.generates, llm.prompting.scoring, llm.prompting.template)
            found[run.task][(row, run.data_name, run.record.items)][how].append(run)
    out = []
    for task, models in sorted(found.items()):
        compared = {key: rows for key, rows in models.items() if any(generates for generates, *_ in rows)}
        if not compared:
            continue
        every = [r for rows in compared.values() for group in rows.values() for r in group]
        headline = list(dict.fromkeys((h.key, h.title) for r in every for h in r.record.task.headline))
        shown = [f for f in SHOWN if any(f"test/{f}" in r.metrics for r in every)]
        lines = []
        for (row, _, items), rows in sorted(compared.items(), key=lambda found: str(found[0])):
            for (_, scoring, template), group in sorted(rows.items()):  # generating last
                cells = [runs_cell(group, key) for key, _ in headline]
                cells += [runs_cell(group, f"test/{f}") for f in shown]
                texts = [c.text if c is not None else "" for c in cells]
                lines.append([row, scoring, template, str(items or ""), str(len(group)), *texts])
        header = ["model", "scoring", "template", "items", "runs", *(t for _, t in headline), *shown]
        out += table_section(f"{task}: generated answers beside log-likelihood", header, lines)
        out += [CAPTION, ""]
    return out
