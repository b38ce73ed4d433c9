"""MultiPragEval in pragexp.report (the task declares this module): accuracy per language and type, the share
of each letter chosen, and a figure of both languages and types.

- Table: a row per run and language (then "all languages"): each maxim, the maxims together (the paper's
  score, `test/acc/<language>:maxims`), the literal control apart, and the whole run; each cell `mean ±
  standard error (n=scenarios)` from metrics.json, clustered by scenario: its four language versions adapt one
  story and share its gold letter, so they are right or wrong together far more often than four independent
  units would be. Chance: 1 / 5 options. No published row: Park et al.'s accuracies are not transcribed in
  this repository (../shared/paper_numbers.md, the sample's README), and a cell is left out rather than
  guessed.
- Letters: the share of units answered with each letter (`test/chosen/<letter>`, `none`: a reply naming none;
  with its interval, clustered by scenario) beside the share of each gold letter in the run's data
  (data_report.json): the release's gold letters come in blocks, so a model that answers one letter scores its
  share, whatever the type.
"""

from __future__ import annotations

from pathlib import Path

from pragexp.data.multiprageval.datamodule import MAXIMS_GROUP
from pragexp.data.multiprageval.io import LANGUAGES, LETTERS, MAXIMS, TYPES
from pragexp.reporting.groups import bar_panels, figure_cell, run_label
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import Column, data_report, metrics_cell, units_of

TASK = "multiprageval"
CHANCE = 1 / len(LETTERS)
ALL = "all languages"
KINDS = (*MAXIMS, MAXIMS_GROUP, TYPES[-1])  # the four maxims, their mean, the literal control


def own_runs(runs) -> list:
    return sorted((r for r in runs if r.task == TASK), key=lambda r: (run_label(r), str(r.path)))


def languages(run) -> list[str]:
    """The languages the run scored, in the release's order."""
    return [lang for lang in LANGUAGES if f"test/acc/{lang}" in run.metrics]


def group(language: str, kind: str | None) -> str | None:
    """The metrics' group of a language (ALL: every language) and type (None: every type)."""
    if language == ALL:
        return kind
    return language if kind is None else f"{language}:{kind}"


def accuracy_rows(runs) -> list[list[str]]:
    rows = []
    for run in runs:
        for lang in [*languages(run), ALL]:
            cells = [figure_cell(run, group(lang, kind)) for kind in (*KINDS, None)]
            rows.append([run_label(run), lang, *cells])
    rows.append(["chance", "", *[f"{CHANCE:.3f}"] * (len(KINDS) + 1)])
    return rows


def letter_rows(runs) -> list[list[str]]:
    rows, gold_seen = [], set()
    for run in runs:
        # a share over the run's units, with its interval (the gold letters' shares below are facts of the
        # data)
        units = units_of([run])
        shares = [
            metrics_cell(run.metrics, "test/chosen", x, units=units)
            if f"test/chosen/{x}" in run.metrics
            else ""
            for x in (*LETTERS, "none")
        ]
        rows.append([run_label(run), *shares])
        gold = data_report(run).get("per_gold_letter") or {}
        total = sum(gold.values())
        if total and repr(sorted(gold.items())) not in gold_seen:
            gold_seen.add(repr(sorted(gold.items())))
            source = data_report(run).get("source", "")
            rows.append(
                [f"gold letters ({Path(source).name}, {total} units)"]
                + [f"{gold.get(x, 0) / total:.3f}" for x in LETTERS]
                + [""]
            )
    return rows


def sections(runs) -> list[str]:
    ours = own_runs(runs)
    if not ours:
        return []
    out = ["## MultiPragEval (Park et al. 2024): Grice's maxims in four languages", ""]
    out += [
        "Accuracy: mean ± standard error clustered by scenario (a scenario's four language versions "
        "together; "
        "n=scenarios); maxims: the four together, the paper's score, the literal control apart; chance 1/5. "
        "No "
        "published row: the paper's accuracies are not transcribed here.",
        "",
    ]
    out += table_section(
        "Accuracy per language and type", ["model, template", "language", *KINDS, "all"], accuracy_rows(ours)
    )
    out += table_section(
        "Share of each letter chosen (none: a reply that names no letter)",
        ["model, template", *LETTERS, "none"],
        letter_rows(ours),
    )
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`multiprageval_languages.png`: a panel per run, a cluster per language (and all), a bar per type."""
    ours = own_runs(runs)
    if not ours:
        return []
    xs = [*(lang for lang in LANGUAGES if any(lang in languages(r) for r in ours)), ALL]
    title = "MultiPragEval: accuracy per language and type (whiskers: 95% interval over units)"
    path = Path(folder) / "multiprageval_languages.png"
    return [bar_panels(ours, xs, KINDS, group, CHANCE, title, path)]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []
