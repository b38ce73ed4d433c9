"""Checkpoints are data: loaded with weights_only=True, refused (with a clear error, before any code in
them runs) when they hold anything else; older formats are read or explained; and any checkpoint
with a pretrained encoder can seed a Circa run (model.init_ckpt), wherever its task kept the encoder."""

import json
import os
from pathlib import Path

import pytest
import torch

from pragexp.run import run
from pragexp.runs import checkpoint


class RunsCodeWhenUnpickled:
    """Unpickling this calls os.mkdir(marker): proof that code in a checkpoint ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (str(self.marker),))


def best_checkpoint(run_dir) -> Path:
    (found,) = Path(run_dir, "checkpoints").glob("best-*.ckpt")
    return found


@pytest.fixture(scope="module")
def grice_run(tmp_path_factory):
    """A tiny trained GRICE recovery run (MemNN), shared by the tests below."""
    from conftest import TINY_DATA, TINY_MODEL, compose_config

    out = tmp_path_factory.mktemp("grice_run")
    overrides = [
        f"paths.cache_dir={out / 'cache'}",
        "logger=none",
        "trainer.max_epochs=1",
        "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
        *TINY_DATA["grice"],
        *TINY_MODEL["memnn"],
    ]
    cfg = compose_config(overrides, out / "run")
    metrics = run(cfg)
    return overrides, out, metrics, best_checkpoint(cfg.paths.output_dir)


def eval_config(grice_run, ckpt: Path, out: str):
    from conftest import compose_config

    overrides, root, _, _ = grice_run
    return compose_config([*overrides, f"ckpt_path={ckpt}"], root / out, "eval")


@pytest.mark.slow
def test_saved_checkpoints_are_plain_data_with_pragexp_extras(grice_run):
    *_, best = grice_run
    saved = torch.load(best, map_location="cpu", weights_only=True)  # raises if anything is not data
    extras = saved[checkpoint.EXTRAS]
    assert extras["format"] == checkpoint.FORMAT and extras["task"] == "GriceRecoveryTask"
    assert extras["task_name"] == "grice_recovery"  # the task= choice: checked when the file is loaded
    assert extras["model"]["_target_"] == "pragexp.models.dialogue.memnn.MemNNReader"
    assert extras["encoder"] is None  # MemNN has no pretrained encoder
    assert isinstance(saved["GriceDataModule"]["vocab"]["itos"], list)


@pytest.mark.slow
def test_eval_refuses_a_checkpoint_holding_code_and_the_code_never_runs(grice_run, tmp_path):
    *_, best = grice_run
    marker = tmp_path / "code-ran"
    poisoned = torch.load(best, map_location="cpu", weights_only=True)
    poisoned["GriceDataModule"]["note"] = RunsCodeWhenUnpickled(marker)
    path = tmp_path / "poisoned.ckpt"
    torch.save(poisoned, path)
    with pytest.raises(checkpoint.CheckpointError, match=r"ckpt_path=.*poisoned.ckpt: refused.*data only"):
        run(eval_config(grice_run, path, "eval_poisoned"))
    assert not marker.exists()
    assert not (tmp_path / "eval_poisoned" / "metrics.json").exists()
    # The same loader guards transfer sources.
    with pytest.raises(checkpoint.CheckpointError, match=r"model.init_ckpt=.*refused"):
        checkpoint.read(path, setting="model.init_ckpt")
    assert not marker.exists()


def test_a_checkpoint_of_another_format_is_refused_naming_it(tmp_path, caplog):
    # Format 1 wrote no version (nor task_name, nor encoder); it is trained again, not read.
    old = {
        "state_dict": {"net.w": torch.zeros(1)},
        checkpoint.EXTRAS: {"task": "GriceRecoveryTask", "model": {}},
    }
    torch.save(old, tmp_path / "format1.ckpt")
    with pytest.raises(
        checkpoint.CheckpointError,
        match=r"format1.ckpt: written in checkpoint format 1; this pragexp reads format 2 only: train it",
    ):
        checkpoint.read(tmp_path / "format1.ckpt")
    # A task trained outside pragexp.run names no task: used, with a warning.
    unnamed = {**old, checkpoint.EXTRAS: {"format": checkpoint.FORMAT, "task": "GriceRecoveryTask"}}
    torch.save(unnamed, tmp_path / "unnamed.ckpt")
    checkpoint.read(tmp_path / "unnamed.ckpt").check_task("grice_recovery")
    assert "does not say which task it was trained for" in caplog.text


@pytest.mark.slow
def test_unreadable_and_future_checkpoints_get_clear_errors(grice_run, tmp_path):
    *_, best = grice_run
    junk = tmp_path / "junk.ckpt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(checkpoint.CheckpointError, match=r"junk.ckpt: not a readable checkpoint"):
        checkpoint.read(junk)
    future = torch.load(best, map_location="cpu", weights_only=True)
    future[checkpoint.EXTRAS]["format"] = checkpoint.FORMAT + 1
    torch.save(future, tmp_path / "future.ckpt")
    with pytest.raises(checkpoint.CheckpointError, match="update pragexp"):
        checkpoint.read(tmp_path / "future.ckpt")
    foreign = {"state_dict": {"w": torch.zeros(1)}}
    torch.save(foreign, tmp_path / "foreign.ckpt")
    with pytest.raises(checkpoint.CheckpointError, match="without pragexp's extras"):
        checkpoint.read(tmp_path / "foreign.ckpt")


def test_writing_anything_but_plain_data_fails_at_save_time():
    with pytest.raises(TypeError, match=r"checkpoint\['GriceDataModule'\]\['vocab'\] is a set"):
        checkpoint.check_plain({"state_dict": {}, "GriceDataModule": {"vocab": {"a", "b"}}})
    checkpoint.check_plain({"a": [1, 2.0, "x", None, (torch.zeros(2), True)], "b": {"c": {}}})


# -- model.init_ckpt: the encoder of any task that has one ----------------------------------------
SOURCES = {
    # task: (extra overrides, where the task keeps its encoder)
    "circa": ([], "net.encoder."),
    "nli": ([], "net.encoder."),
    "boolq": ([], "net.encoder."),
    "grice_recovery": (["data.eval_batch_size=16"], "net.scorer.encoder."),
    "grice_qa": ([], "net.encoder."),
}


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_circa_starts_from_exactly_the_source_encoder(source, make_config):
    extra, prefix = SOURCES[source]
    source_cfg = make_config([f"task={source}", "model=bert", "trainer.max_epochs=1", *extra], out="source")
    run(source_cfg)
    best = best_checkpoint(source_cfg.paths.output_dir)
    saved = checkpoint.read(best)
    assert saved.encoder == {"prefix": prefix, "pretrained": "tiny"}
    encoder = saved.encoder_weights()
    assert len(encoder) > 20 and all(f"{prefix}{k}" in saved.state_dict for k in encoder)

    # lr 0: the Circa run's encoder after one epoch is the one it started from.
    target = make_config(
        [
            "experiment=circa/bert_mnli_yn",
            "model.pretrained=tiny",
            f"model.init_ckpt={best}",
            "optimizer.lr=0.0",
            "optimizer.weight_decay=0.0",
            "trainer.max_epochs=1",
        ],
        out="circa",
    )
    run(target)
    circa = checkpoint.read(Path(target.paths.output_dir, "checkpoints", "last.ckpt"))
    assert circa.encoder["prefix"] == "net.encoder."
    started_from = circa.encoder_weights()
    assert started_from.keys() == encoder.keys()
    for name, tensor in encoder.items():
        assert torch.equal(started_from[name], tensor), name
    # The tokenizer came along with the encoder.
    assert json.loads(circa.tokenizer_json())["model"] == json.loads(saved.tokenizer_json())["model"]


@pytest.mark.slow
def test_init_ckpt_without_an_encoder_names_the_problem(grice_run, make_config):
    *_, best = grice_run
    cfg = make_config(["task=circa", "model=bert", f"model.init_ckpt={best}"])
    with pytest.raises(ValueError, match=r"model.init_ckpt=.*(holds no pretrained encoder|no tokenizer)"):
        run(cfg)


@pytest.mark.slow
def test_a_checkpoint_is_refused_for_another_task_naming_both(make_config):
    """Circa and NLI share a task class and a model: only the recorded task= tells their checkpoints apart."""
    source = make_config(["task=circa", "model=majority"], out="circa")
    run(source)
    best = best_checkpoint(source.paths.output_dir)
    cfg = make_config(["task=nli", "model=majority", f"ckpt_path={best}"], name="eval", out="nli")
    with pytest.raises(checkpoint.CheckpointError, match=r"ckpt_path=.*trained for task=circa, not task=nli"):
        run(cfg)
    assert not (Path(cfg.paths.output_dir) / "metrics.json").exists()
    # The same file evaluates for the task it was trained for.
    assert run(make_config(["task=circa", "model=majority", f"ckpt_path={best}"], name="eval", out="again"))
