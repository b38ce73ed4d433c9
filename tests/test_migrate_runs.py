"""experiments/migrate_runs.py: run.json for the run folders of an older pragexp, the same as a run of today
writes (every task's run: tests/test_run_record.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CIRCA_FIXTURE, migration, run_module
from test_run_record import hydra_files

from pragexp.report import find_runs
from pragexp.run import run
from pragexp.runs.record import SCHEMA, RunRecordError, read_run_record


@pytest.fixture
def majority_run(make_config):
    """A run of the majority baseline on STRICT labels, its .hydra folder as Hydra writes it; its record."""
    cfg = make_config(["task=circa", "model=majority", "data.labels=strict"])
    run(cfg)
    hydra_files(cfg)
    out = Path(cfg.paths.output_dir)
    return out, read_run_record(out)


def test_the_majority_baseline_and_its_paper_keys_are_derived_as_the_run_declared_them(majority_run):
    out, record = majority_run
    assert record.model.one_label and record.model.row == "majority"
    # circa's paper rows name the label set and setting: run.json records the run's values of both
    assert record.task.paper_settings == {"data.labels": "strict", "data.setting": "matched"}
    (out / "run.json").unlink()
    assert migration().derived_record(out) == record


def test_the_script_writes_each_folder_once_says_what_it_did_and_names_a_folder_it_cannot_do(
    majority_run, tmp_path, capsys
):
    out, record = majority_run
    root = tmp_path / "runs"
    for name in ("current", "old", "schema2", "broken"):
        shutil.copytree(out, root / name)
    (root / "old" / "run.json").unlink()  # made before runs wrote one
    older = record.to_json()
    del older["data"]["sampling_unit"]
    (root / "schema2" / "run.json").write_text(json.dumps({**older, "schema": 2}))
    (root / "broken" / "run.json").write_text("{")
    current = (root / "current" / "run.json").read_bytes()

    assert migration().main([str(root), "--dry-run"]) == 1
    said = capsys.readouterr()
    assert not (root / "old" / "run.json").exists()
    assert json.loads((root / "schema2" / "run.json").read_text())["schema"] == 2
    assert f"{root / 'old'}: derived from .hydra (dry run: nothing written)" in said.out
    assert f"{root / 'broken'}: not migrated: {root / 'broken' / 'run.json'}: not JSON" in said.err

    assert migration().main([str(root)]) == 1  # the broken folder; the others are done
    said = capsys.readouterr().out.splitlines()
    assert said == [
        f"{root / 'current'}: schema {SCHEMA} already",
        f"{root / 'old'}: derived from .hydra",
        f"{root / 'schema2'}: schema 2 -> {SCHEMA}",
    ]
    assert (root / "current" / "run.json").read_bytes() == current  # left as it was
    for name in ("current", "old", "schema2"):  # the sampling unit too: the data module's, from the config
        assert read_run_record(root / name) == record
    shutil.rmtree(root / "broken")
    assert len(find_runs([root])) == 3


def test_the_report_refuses_a_folder_to_migrate_naming_it_and_the_script(majority_run):
    out, _ = majority_run
    (out / "run.json").unlink()
    with pytest.raises(RunRecordError, match=rf"{out}: no run.json .*`python experiments/migrate_runs.py"):
        find_runs([out])


@pytest.mark.slow
def test_a_lora_run_and_the_eval_of_its_checkpoint_are_derived_from_what_hydra_wrote(tmp_path):
    """Real Hydra output: a LoRA run, then an evaluation of its checkpoint (which names the tuning itself);
    each run.json equals what the script derives from the .hydra folder Hydra wrote, and the script run as a
    user runs it writes them again."""
    common = ["task=circa", "model=llm", "llm=tiny", "print_config=false", "trainer.limit_test_batches=1"]
    common += ["logger=none", f"data.path={CIRCA_FIXTURE}", f"paths.cache_dir={tmp_path / 'cache'}"]
    train = [
        "llm.finetune=lora",
        "optimizer.lr=5e-3",
        "trainer.max_epochs=1",
        "trainer.limit_train_batches=2",
    ]
    proc = run_module("pragexp.train", [*common, *train, f"hydra.run.dir={tmp_path / 'lora'}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (ckpt,) = (tmp_path / "lora" / "checkpoints").glob("best*.ckpt")
    proc = run_module(
        "pragexp.eval", [*common, f"ckpt_path={ckpt}", f"hydra.run.dir={tmp_path / 'eval'}"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    records = {}
    for out in (tmp_path / "lora", tmp_path / "eval"):
        records[out] = record = read_run_record(out)
        assert (record.model.row, record.model.tuning) == ("tiny lora", "lora")
        assert "optimizer.lr=5e-3" in record.settings.task or out.name == "eval"  # a tuned LLM's schedule
        (out / "run.json").unlink()
        assert migration().derived_record(out) == record
    proc = subprocess.run(
        [sys.executable, migration().__file__, str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {out: read_run_record(out) for out in records} == records


def test_a_run_without_its_data_module_is_refused_naming_file_and_field(tmp_path):
    hydra = tmp_path / ".hydra"
    hydra.mkdir()
    (tmp_path / "metrics.json").write_text('{"test/acc": 0.5}')
    (hydra / "config.yaml").write_text("data:\n  path: x.tsv\n")
    with pytest.raises(ValueError, match=r"\.hydra/config\.yaml: data\._target_: missing"):
        migration().derived_record(tmp_path)
    (hydra / "config.yaml").write_text("data:\n  _target_: pragexp.data.gone.GoneDataModule\n")
    with pytest.raises(
        ValueError, match=r"config\.yaml: data\._target_: 'pragexp.data.gone.GoneDataModule' cannot"
    ):
        migration().derived_record(tmp_path)
