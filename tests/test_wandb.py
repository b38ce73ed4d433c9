"""What a W&B run of pragexp holds, read back from the offline run's own record file (`run-*.wandb`)."""

import json
import struct
from collections import defaultdict
from pathlib import Path

import pytest
from wandb.proto import wandb_internal_pb2

from pragexp.run import run

SWEEP_DIR = "/somewhere/outputs/multirun/grice_recovery/2026-11-22_10-00-00"
BLOCK = 32 * 1024  # the record file is a log of 32 KiB blocks (LevelDB's log format)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def wandb_records(path: Path) -> dict[str, list]:
    """The protobuf records of an offline W&B run (their payloads), by kind (run, config, history, summary,
    artifact, ...). wandb no longer ships a reader for this file, so this follows its format: a 7-byte header,
    then chunks (CRC32, length, kind) that never straddle a block, records split over FIRST..LAST chunks."""
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path}: not a W&B run file"
    records, pos, pending = defaultdict(list), 7, b""
    while pos + 7 <= len(data):
        if BLOCK - pos % BLOCK < 7:  # too little room left for a chunk header: the block is padded
            pos += BLOCK - pos % BLOCK
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk, pos = data[pos + 7 : pos + 7 + length], pos + 7 + length
        if kind in (FIRST, MIDDLE):
            pending += chunk
        elif kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending + chunk)
            pending = b""
            kind = record.WhichOneof("record_type")
            records[kind].append(getattr(record, kind))
    return records


def _key(item) -> str:
    return item.key or "/".join(item.nested_key)


@pytest.mark.slow
def test_wandb_run_holds_group_name_summary_tables_charts_and_checkpoint(make_config, tmp_path):
    cfg = make_config(
        [
            "model=lstm",
            "logger=wandb",  # WANDB_MODE=offline (conftest): Lightning refuses log_model with offline=true
            "logger.wandb.log_model=true",
            "optimizer.lr=0.002",
            "hydra.mode=MULTIRUN",  # as a job of a sweep
            f"hydra.sweep.dir={SWEEP_DIR}",
        ]
    )
    metrics = run(cfg)
    (run_file,) = (tmp_path / "run" / "wandb").glob("offline-run-*/run-*.wandb")
    records = wandb_records(run_file)

    header = records["run"][0]
    assert header.run_group == "grice_recovery/2026-11-22_10-00-00"  # one group per sweep
    assert "model=lstm" in header.display_name and "optimizer.lr=0.002" in header.display_name
    assert "logger" not in header.display_name and "hydra" not in header.display_name
    assert set(header.tags) == {"grice_recovery", "lstm"}

    config = {_key(item): item.value_json for r in records["config"] for item in r.update}
    config |= {item.key: item.value_json for item in header.config.update}
    assert json.loads(config["optimizer"])["lr"] == 0.002 and "hydra" not in config

    summary = {}
    for r in records["summary"]:
        summary |= {_key(item): item.value_json for item in r.update}
    assert abs(json.loads(summary["test/r@1"]) - metrics["test/r@1"]) < 1e-6
    assert json.loads(summary["test/count"]) == metrics["test/count"]

    history_keys = {_key(item).split("/_type")[0] for r in records["history"] for item in r.item}
    assert {"val/r@1", "train/loss_epoch", "test/predictions", "val/predictions"} <= history_keys
    assert "test/r@1_by_group_table" in history_keys  # GRICE's per-implicature-type bar chart (its data)

    tables = run_file.parent / "files" / "media" / "table" / "test"
    (predictions,) = [json.loads(p.read_text()) for p in tables.glob("predictions_*.table.json")]
    assert {"index", "question", "answer", "gold", "predicted"} <= set(predictions["columns"])
    assert len(predictions["data"]) == metrics["test/count"]  # every test example (fewer than table_rows)
    (bars,) = [json.loads(p.read_text()) for p in tables.glob("r@1_by_group_table_*.table.json")]
    expected = {k.rsplit("/", 1)[1]: v for k, v in metrics.items() if k.startswith("test/r@1/")}
    assert {g: round(v, 6) for g, v in bars["data"]} == {g: round(v, 6) for g, v in expected.items()}

    model_artifacts = [a for a in records["artifact"] if a.type == "model"]
    assert model_artifacts and any("best" in a.aliases for a in model_artifacts)
