"""The Circa paper's transfer sources end to end: task=nli and task=boolq train BERT (tiny) on the
fixture files, evaluate from their checkpoints, and hand their encoder and tokenizer to Circa
(MNLI -> Circa as a user runs it, in subprocesses; BoolQ -> Circa in-process)."""

import json
from pathlib import Path

import pytest
import torch
from conftest import CIRCA_FIXTURE, TINY_DATA, compose_config, run_module

from pragexp.data.boolq import LABELS as BOOLQ_LABELS
from pragexp.data.circa.io import LABEL_SLUGS, LABELS
from pragexp.data.nli import LABELS as NLI_LABELS
from pragexp.models.bert import BertClassifier
from pragexp.run import run

CIRCA_SAMPLE = CIRCA_FIXTURE
QUIET = [
    "logger=none",
    "trainer.accelerator=cpu",
    "callbacks.progress_bar=null",
    "trainer.enable_model_summary=false",
]


def best_checkpoint(run_dir) -> Path:
    found = sorted(Path(run_dir, "checkpoints").glob("best-*.ckpt"))
    assert len(found) == 1, f"expected one best checkpoint in {run_dir}, found {found}"
    return found[0]


def vocab_of(tokenizer_json: str) -> dict:
    return json.loads(tokenizer_json)["model"]["vocab"]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "labels"), [("nli", NLI_LABELS), ("boolq", BOOLQ_LABELS)])
def test_bert_tiny_trains_and_reports_per_class_metrics(make_config, task, labels):
    cfg = make_config([f"task={task}", "model=bert", "trainer.max_epochs=2"])
    metrics = run(cfg)
    out = Path(cfg.paths.output_dir)
    for stage in ("val", "test"):
        assert {f"{stage}/{k}" for k in ("acc", "macro_f1", "count", "loss")} <= set(metrics)
        assert {f"{stage}/f1/{label}" for label in labels} <= set(metrics)
    assert not [k for k in metrics if k.startswith("test/f1/") and k.split("/")[-1] not in labels]
    report = json.loads((out / "data_report.json").read_text())
    assert metrics["test/count"] == report["split_sizes"]["test"] == {"nli": 9, "boolq": 6}[task]
    assert metrics["val/count"] == report["split_sizes"]["val"]
    confusion = json.loads((out / "confusion" / "test.json").read_text())
    assert confusion["labels"] == list(labels) and sum(map(sum, confusion["matrix"])) == metrics["test/count"]
    saved = torch.load(best_checkpoint(out), weights_only=False)
    state = saved[{"nli": "NLIDataModule", "boolq": "BoolQDataModule"}[task]]
    assert state["label_names"] == list(labels) and state["tokenizer"]
    assert saved["state_dict"]["net.head.weight"].shape[0] == len(labels)


@pytest.mark.slow
def test_nli_checkpoint_evaluates_on_a_test_file_alone(make_config):
    cfg = make_config(["task=nli", "model=bert"], out="train")
    trained = run(cfg)
    best = best_checkpoint(cfg.paths.output_dir)
    # No training file: the tokenizer comes from the checkpoint (model.pretrained names a hub model).
    evaluated = run(
        make_config(
            ["task=nli", "data.train_path=null", "model.pretrained=bert-base-uncased", f"ckpt_path={best}"],
            name="eval",
            out="eval",
            tiny_model=False,
        )
    )
    assert evaluated == pytest.approx({k: v for k, v in trained.items() if k.startswith("test/")}, abs=1e-6)


@pytest.mark.slow
def test_mnli_to_circa_chain_as_a_user_runs_it(tmp_path):
    """python -m pragexp.train task=nli ..., then experiment=circa/bert_mnli_yn from its best checkpoint.
    The Circa run uses lr 0, so its final encoder is exactly the one it started from."""
    nli_dir, circa_dir = tmp_path / "nli", tmp_path / "circa"
    source = run_module(
        "pragexp.train",
        [
            "task=nli",
            "model=bert",
            "model.pretrained=tiny",
            *TINY_DATA["nli"],
            "trainer.max_epochs=2",
            *QUIET,
            f"hydra.run.dir={nli_dir}",
        ],
        cwd=tmp_path,
    )
    assert source.returncode == 0, source.stderr[-3000:]
    assert (nli_dir / "metrics.json").is_file()
    best = best_checkpoint(nli_dir)

    target = run_module(
        "pragexp.train",
        [
            "experiment=circa/bert_mnli_yn",
            "model.pretrained=tiny",
            f"model.init_ckpt={best}",
            f"data.path={CIRCA_SAMPLE}",
            "optimizer.lr=0.0",
            "optimizer.weight_decay=0.0",
            "trainer.max_epochs=1",
            *QUIET,
            f"hydra.run.dir={circa_dir}",
        ],
        cwd=tmp_path,
    )
    assert target.returncode == 0, target.stderr[-3000:]
    assert "pragexp: circa/bert" in target.stdout

    nli_ckpt = torch.load(best, weights_only=False)
    circa_ckpt = torch.load(circa_dir / "checkpoints" / "last.ckpt", weights_only=False)
    encoder = {k: v for k, v in nli_ckpt["state_dict"].items() if k.startswith("net.encoder.")}
    assert len(encoder) > 20
    for name, tensor in encoder.items():
        assert torch.equal(circa_ckpt["state_dict"][name], tensor), name
    # the head is Circa's own: 4 RELAXED classes, not NLI's 3
    assert nli_ckpt["state_dict"]["net.head.weight"].shape[0] == 3
    assert circa_ckpt["state_dict"]["net.head.weight"].shape[0] == 4
    # the tokenizer is NLI's (its vocabulary has NLI-only words), not one trained on Circa's texts
    nli_tokenizer = nli_ckpt["NLIDataModule"]["tokenizer"]
    assert circa_ckpt["CircaDataModule"]["tokenizer"] == nli_tokenizer
    assert "museum" in vocab_of(nli_tokenizer) and "museum" not in CIRCA_SAMPLE.read_text().lower()
    assert circa_ckpt["pragexp"]["model"]["init_ckpt"] is None

    metrics = json.loads((circa_dir / "metrics.json").read_text())
    slugs = [LABEL_SLUGS[n] for n in LABELS["relaxed"]]
    assert {"test/acc", "test/macro_f1", *(f"test/f1/{s}" for s in slugs)} <= set(metrics)
    report = json.loads((circa_dir / "data_report.json").read_text())
    assert metrics["test/count"] == report["split_sizes"]["test"] == 14


@pytest.mark.slow
def test_boolq_to_circa_chain(make_config):
    source = make_config(["task=boolq", "model=bert", "trainer.max_epochs=1"], out="boolq")
    run(source)
    best = best_checkpoint(source.paths.output_dir)
    boolq_ckpt = torch.load(best, weights_only=False)

    # the encoder Circa builds from the BoolQ checkpoint is the checkpoint's, tensor for tensor
    tokenizer = boolq_ckpt["BoolQDataModule"]["tokenizer"]
    model = BertClassifier(
        num_labels=6, vocab_size=len(vocab_of(tokenizer)), pretrained="tiny", init_ckpt=str(best)
    )
    for name, tensor in model.encoder.state_dict().items():
        assert torch.equal(tensor, boolq_ckpt["state_dict"][f"net.encoder.{name}"]), name

    target = make_config(
        [
            "experiment=circa/bert_boolq_yn",
            "model.pretrained=tiny",
            f"model.init_ckpt={best}",
            "data.labels=strict",
            "trainer.max_epochs=1",
        ],
        out="circa",
    )
    assert target.data.tokenizer_ckpt == str(best)
    metrics = run(target)
    assert {f"test/f1/{LABEL_SLUGS[n]}" for n in LABELS["strict"]} <= set(metrics)
    saved = torch.load(Path(target.paths.output_dir, "checkpoints", "last.ckpt"), weights_only=False)
    # the same vocabulary and rules; only the truncation length is Circa's (128, BoolQ's is 256)
    kept = json.loads(saved["CircaDataModule"]["tokenizer"])
    assert kept["model"] == json.loads(tokenizer)["model"] and kept["truncation"]["max_length"] == 128
    assert "penguins" in vocab_of(tokenizer)  # a BoolQ-only word: the vocabulary is BoolQ's
    assert saved["state_dict"]["net.head.weight"].shape[0] == 6


def test_source_presets_compose(tmp_path):
    expected = {"mnli": ("nli", 2e-5), "boolq": ("boolq", 3e-5)}
    for name, (task, lr) in expected.items():
        cfg = compose_config([f"experiment=circa/{name}"], tmp_path)
        assert cfg.hydra.runtime.choices.task == task and cfg.hydra.runtime.choices.model == "bert"
        assert cfg.model.pretrained == "bert-base-uncased" and cfg.model.init_ckpt is None
        assert cfg.optimizer.lr == lr and cfg.trainer.max_epochs == 3 and cfg.data.batch_size == 32
        assert cfg.monitor == "val/acc" and cfg.callbacks.early_stopping is None
        # the Circa row that starts from it asks for the same encoder
        row = compose_config([f"experiment=circa/bert_{name}_yn"], tmp_path)
        assert row.model.pretrained == cfg.model.pretrained
