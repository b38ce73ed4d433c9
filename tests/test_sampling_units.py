"""Every dataset declares the unit it draws independently (`sampling_unit`), every batch carries each row's
unit id (`cluster`), rows of one unit share it, and the unit is named where its intervals are shown: run.json,
the report's cells and the documentation's table (docs/statistics.md). Nothing defaults to "each row its own
unit": a data module or a batch without its unit is refused by name (every kind of batch requires `cluster`:
`pragexp.batches`)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import torch
from conftest import CONF, ROOT, choices, compose_config
from hydra.utils import get_class, instantiate

from pragexp.batches.check import BatchError, check_batch
from pragexp.batches.types import BATCH_TYPES
from pragexp.run import run
from pragexp.runs.record import read_run_record
from pragexp.runs.sampling_unit import SamplingUnit, plural


def _data_module(make_config, task: str):
    cfg = make_config([f"task={task}"], name="eval")
    dm = instantiate(cfg.data)
    dm.prepare_data()
    dm.setup("test")
    return dm


def _units_by(dm, *fields: str) -> dict:
    """{the describe() fields' values: the set of unit ids of their rows} over the test split."""
    found = defaultdict(set)
    for batch in dm.test_dataloader():
        for index, cluster in zip(batch["index"].tolist(), batch["cluster"].tolist(), strict=True):
            described = dm.describe("test", index)
            found[tuple(described[f] for f in fields)].add(cluster)
    return found


@pytest.mark.parametrize("task", choices("task"))
def test_every_data_module_declares_its_unit_and_every_batch_carries_it(task, make_config):
    dm = _data_module(make_config, task)
    unit = type(dm).sampling_unit  # a class attribute: run.json and the report read it without data
    assert isinstance(unit, SamplingUnit) and unit.name and len(unit.reason) > 20
    batches = list(dm.test_dataloader())
    assert batches
    for batch in batches:
        check_batch(batch, BATCH_TYPES, type(dm).__name__)  # a declared kind: its `cluster` required
        assert batch["cluster"].shape == batch["index"].shape and batch["cluster"].dtype == torch.long


def test_rows_of_one_unit_share_its_id_and_other_units_do_not(make_config):
    # GRICE: every round of a dialogue is one unit, and no two dialogues share one.
    by_dialogue = _units_by(_data_module(make_config, "grice_recovery"), "dialog_id")
    assert len(by_dialogue) > 1 and all(len(ids) == 1 for ids in by_dialogue.values())
    assert len({next(iter(ids)) for ids in by_dialogue.values()}) == len(by_dialogue)
    # MultiPragEval: a scenario's language versions are one unit.
    by_scenario = _units_by(_data_module(make_config, "multiprageval"), "id")
    assert all(len(ids) == 1 for ids in by_scenario.values())
    assert len({next(iter(ids)) for ids in by_scenario.values()}) == len(by_scenario)
    # Circa: the answers to one question (in its scenario) are one unit.
    circa = _data_module(make_config, "circa")
    by_question = _units_by(circa, "context", "question")
    assert all(len(ids) == 1 for ids in by_question.values())


def test_a_data_module_without_a_unit_or_a_batch_without_unit_ids_is_refused_by_name(
    make_config, monkeypatch
):
    from pragexp.data.circa.datamodule import CircaDataModule

    monkeypatch.setattr(CircaDataModule, "sampling_unit", "question")
    with pytest.raises(TypeError, match=r"CircaDataModule.sampling_unit is 'question': declare the unit"):
        run(make_config(["task=circa", "model=majority"]))
    rows = {"index": torch.tensor([0, 1]), "group": torch.tensor([-1, -1]), "label": torch.tensor([0, 1])}
    with pytest.raises(
        BatchError, match=r"a batch of CircaDataModule .* EncodedBatch, it lacks cluster, inputs"
    ):
        check_batch(rows, BATCH_TYPES, "CircaDataModule")


def test_run_json_and_the_report_name_the_unit(make_config):
    from pragexp.report.runs import find_runs
    from pragexp.report.tables import markdown_report

    cfg = make_config(["task=grice_recovery", "model=memnn"])
    run(cfg)
    record = read_run_record(Path(cfg.paths.output_dir))
    assert record.data.sampling_unit == get_class(cfg.data._target_).sampling_unit
    assert record.data.sampling_unit.name == "dialogue"
    text = markdown_report(find_runs([Path(cfg.paths.output_dir)]))
    assert re.search(r"± \d\.\d{3} \(n=\d+ dialogues\)", text)


def test_plurals_as_counts_say_them():
    assert [plural(n) for n in ("story", "item", "passage", "day", "match")] == [
        "stories",
        "items",
        "passages",
        "days",
        "matches",
    ]


def test_the_statistics_page_table_of_units_is_the_declarations():
    """The documentation's table (docs/statistics.md) says, per task, the unit and its reason as the data
    module declares them, and names no task that is not one."""
    text = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    for task in choices("task"):
        cfg = compose_config([f"task={task}"], CONF.parent / "outputs" / "unused")
        unit = get_class(cfg.data._target_).sampling_unit
        assert f"| `{task}` | {unit.name} | {unit.reason} |" in text, f"docs/statistics.md: no row for {task}"
    assert set(re.findall(r"^\| `(\w+)` \|", text, re.M)) == set(choices("task"))
