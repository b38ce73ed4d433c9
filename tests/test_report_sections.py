"""The datasets' report sections as declared plugins (pragexp.report.sections): every task config's section
resolves, sits in its dataset's package and offers the section contract, and every section module is declared;
the report refuses a section that lacks a member, naming the task, its config and what is missing."""

from __future__ import annotations

import json
import re
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import ROOT, choices, compose_config
from hydra.utils import get_class
from test_run_record import llm_record

from pragexp.report import main
from pragexp.report.sections import ReportSection, load_section
from pragexp.runs.record import write_run_record
from pragexp.utils.contracts import ContractError, missing_members


def declared_sections() -> dict[str, tuple[str, str]]:
    """{task: (its declared section, its data module's dataset)} for every task config that declares one."""
    out = {}
    for task in choices("task"):
        cfg = compose_config([f"task={task}"], ROOT / "outputs" / "unused")
        if cfg.declares.section:
            out[task] = (cfg.declares.section, get_class(cfg.data._target_).dataset)
    return out


def test_every_declared_section_resolves_in_its_datasets_package_and_offers_the_contract():
    declared = declared_sections()
    for task, (name, dataset) in declared.items():
        module = load_section(name, task)  # imports it and checks the contract, as the report does
        assert missing_members(module, ReportSection) == [], task
        assert Path(module.__file__) == ROOT / "pragexp" / "data" / dataset / "report_section.py", task
    # and no section is left undeclared: each dataset's report_section.py is some task's
    on_disk = {p.parent.name for p in (ROOT / "pragexp" / "data").glob("*/report_section.py")}
    assert on_disk == {dataset for _, dataset in declared.values()}


@pytest.fixture
def half_section(monkeypatch):
    """A section module with `sections` and `figures` but no `columns`."""
    module = types.ModuleType("half_section")
    module.sections = lambda runs: []
    module.figures = lambda runs, folder: []
    monkeypatch.setitem(sys.modules, "half_section", module)
    return module


def test_a_section_lacking_a_member_or_not_importable_is_refused_naming_the_task_and_its_config(half_section):
    where = "task tomato (conf/task/tomato.yaml, declares.section): report section"
    with pytest.raises(ContractError) as refused:
        load_section("half_section", "tomato")
    assert str(refused.value).startswith(f"{where} half_section lacks columns (ReportSection)")
    with pytest.raises(
        ContractError, match=rf"{re.escape(where)} 'pragexp.data.gone.report_section' cannot be"
    ):
        load_section("pragexp.data.gone.report_section", "tomato")


def test_the_report_stops_on_a_run_whose_section_breaks_the_contract(half_section, tmp_path, capsys):
    record = llm_record()
    write_run_record(tmp_path, replace(record, task=replace(record.task, section="half_section")))
    (tmp_path / "metrics.json").write_text(json.dumps({"test/acc": 0.5}))
    assert main([str(tmp_path)]) == 2
    assert (
        "task circa (conf/task/circa.yaml, declares.section): report section half_section lacks columns"
        in (capsys.readouterr().err)
    )
