"""The report's table of generated answers beside log-likelihood ones (pragexp/report/tables.py), from run
directories in today's format (run.json)."""

from __future__ import annotations

import json
from dataclasses import replace

from test_run_record import llm_record

from pragexp.report import find_runs, main
from pragexp.report.tables import scoring_sections
from pragexp.runs.record import write_run_record


def record(scoring: str, template: str, row: str = "tiny 2-shot"):
    base = llm_record()
    llm = base.model.llm
    prompting = replace(llm.prompting, scoring=scoring, template=template, generates=scoring == "generate")
    return replace(base, model=replace(base.model, row=row, llm=replace(llm, prompting=prompting)))


def write(root, name, rec, metrics):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps(metrics))
    write_run_record(folder, rec)
    return folder


def table_rows(lines: list[str]) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("| ")]


def test_a_generative_row_stands_beside_the_log_likelihood_row_with_unparsed_and_forced(tmp_path, capsys):
    figures = {"test/acc_stderr": 0.1, "test/acc_n": 12, "test/acc_ci95_low": 0.3, "test/acc_ci95_high": 0.7}
    write(tmp_path, "ll", record("sum", "qa"), {"test/acc": 0.5, **figures})
    generated = {"test/acc": 0.25, "test/unparsed": 0.5, "test/forced": 0.25, "test/reasoning_tokens": 80.0}
    write(tmp_path, "gen", record("generate", "declared"), generated)
    write(tmp_path, "other", record("sum", "qa", row="smollm2 2-shot"), {"test/acc": 0.75})  # never generated
    lines = scoring_sections(find_runs([tmp_path]))
    assert lines[0] == "### circa: generated answers beside log-likelihood"
    header, *rows = table_rows(lines)  # the separator line is left out
    assert header == [
        "model",
        "scoring",
        "template",
        "items",
        "runs",
        "Circa RELAXED acc",
        "unparsed",
        "forced",
        "reasoning_tokens",
    ]
    assert rows == [  # the log-likelihood row first; the model no run generated with is left out
        ["tiny 2-shot", "sum", "qa", "12", "1", "0.500 ± 0.100 (n=12)", "", "", ""],
        ["tiny 2-shot", "generate", "declared", "12", "1", "0.250", "0.500", "0.250", "80.000"],
    ]
    assert (
        main([str(tmp_path)]) == 0
        and "circa: generated answers beside log-likelihood" in capsys.readouterr().out
    )


def test_no_table_without_a_generating_run(tmp_path):
    write(tmp_path, "ll", record("sum", "qa"), {"test/acc": 0.5})
    assert scoring_sections(find_runs([tmp_path])) == []
