"""Circa end to end: metrics and their keys, the majority baseline, BERT (tiny) in both label
settings, evaluation from a checkpoint, encoder transfer, and the leave-one-scenario-out sweep."""

import json
from pathlib import Path

import pytest
import torch
from batch_rows import rows
from conftest import CIRCA_FIXTURE, TINY_DATA, run_module

from pragexp.data.circa.datamodule import CircaDataModule
from pragexp.data.circa.io import LABEL_SLUGS, LABELS
from pragexp.metrics.classification import ClassificationMetric, slugify
from pragexp.models.bert import BertClassifier
from pragexp.models.majority import MajorityClassifier
from pragexp.pretrained.encoder import load_encoder
from pragexp.run import run

SAMPLE = CIRCA_FIXTURE


# -- metrics -----------------------------------------------------------------------------------
def test_accuracy_f1_and_confusion_by_hand():
    metric = ClassificationMetric(["a", "b", "c"])
    # gold a a b b c ; predicted a b b b a  -> acc 3/5
    metric.update(rows(torch.tensor([0, 1, 2]), label=torch.tensor([0, 0, 1])), torch.tensor([0, 1, 1]))
    metric.update(
        rows(torch.tensor([3, 4, 0]), label=torch.tensor([1, 2, 0])), torch.tensor([1, 0, 2])
    )  # index 0 repeated
    values = metric.compute()
    assert values["count"] == 5 and values["acc"] == pytest.approx(0.6)
    # a: tp 1, predicted 2, gold 2 -> 0.5; b: tp 2, predicted 3, gold 2 -> 0.8; c: 0
    assert (
        values["f1/a"] == pytest.approx(0.5) and values["f1/b"] == pytest.approx(0.8) and values["f1/c"] == 0
    )
    assert values["macro_f1"] == pytest.approx(1.3 / 3)
    assert metric.confusion().tolist() == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]


def test_absent_classes_score_zero_and_slugs():
    metric = ClassificationMetric(["a", "b", "c"])
    metric.update(rows(torch.tensor([0, 1]), label=torch.tensor([0, 1])), torch.tensor([1, 1]))
    assert metric.confusion().tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 0]]
    values = metric.compute()
    assert [values[f"f1/{s}"].item() for s in "abc"] == pytest.approx([0.0, 2 / 3, 0.0])
    assert slugify("Yes, subject to some conditions") == "yes_subject_to_some_conditions"
    assert sorted(LABEL_SLUGS.values()) == sorted({*LABEL_SLUGS.values()})  # distinct keys


# -- models ------------------------------------------------------------------------------------
def test_majority_classifier_predicts_the_most_frequent_training_label():
    model = MajorityClassifier(num_labels=4)
    model.observe(torch.tensor([2, 1, 2, 3]))
    model.observe(torch.tensor([1, 2]))
    assert model.counts.tolist() == [0, 2, 3, 1] and model.majority == 2
    logits = model(num_examples=5)
    assert logits.shape == (5, 4) and logits.argmax(-1).tolist() == [2] * 5
    assert torch.isfinite(logits).all()
    assert model(input_ids=torch.zeros(3, 7, dtype=torch.long)).shape == (3, 4)
    assert not any(p.requires_grad for p in model.parameters())


def test_bert_classifier_tiny_forward_and_padding_invariance():
    torch.manual_seed(0)
    model = BertClassifier(num_labels=6, vocab_size=50, pretrained="tiny").eval()
    ids = torch.tensor([[2, 10, 11, 3, 12, 3]])
    types = torch.tensor([[0, 0, 0, 0, 1, 1]])
    logits = model(ids, torch.ones_like(ids), types)
    assert logits.shape == (1, 6)
    padded = model(
        torch.cat([ids, torch.zeros(1, 4, dtype=torch.long)], 1),
        torch.tensor([[1] * 6 + [0] * 4]),
        torch.cat([types, torch.zeros(1, 4, dtype=torch.long)], 1),
    )
    assert torch.allclose(logits, padded, atol=1e-5)  # dynamic padding cannot change a prediction


def test_minilm_loads_offline_in_training_mode():
    # from_pretrained returns eval mode, and Lightning keeps submodules' modes: dropout would stay off.
    encoder = load_encoder("minilm", vocab_size=30522)
    assert encoder.config.hidden_size == 384 and encoder.config.num_hidden_layers == 6
    assert all(m.training for m in encoder.modules())
    with pytest.raises(ValueError, match="does not belong to this encoder"):
        load_encoder("minilm", vocab_size=40000)


def test_offline_hub_encoder_error_suggests_minilm():
    with pytest.raises(OSError, match="model.pretrained=minilm"):
        load_encoder("bert-base-uncased")
    with pytest.raises(ValueError, match="vocab_size"):
        load_encoder("tiny")


# -- end to end --------------------------------------------------------------------------------
def circa(make_config, overrides, out="run", model="bert"):
    return make_config(["task=circa", f"model={model}", *overrides], out=out)


@pytest.mark.slow
def test_majority_baseline_value(make_config):
    cfg = circa(make_config, [], model="majority")
    metrics = run(cfg)
    dm = CircaDataModule(path=str(SAMPLE))
    dm.setup("fit")
    majority = max(range(dm.num_labels), key=lambda i: (dm.label_counts("train")[i], -i))
    test_counts = dm.label_counts("test")
    assert metrics["test/acc"] == pytest.approx(test_counts[majority] / sum(test_counts))
    assert metrics["val/acc"] == pytest.approx(dm.label_counts("val")[majority] / len(dm.splits["val"]))
    ckpt = torch.load(Path(cfg.paths.output_dir, "checkpoints", "last.ckpt"), weights_only=False)
    assert ckpt["state_dict"]["net.counts"].tolist() == dm.label_counts("train")
    assert ckpt["epoch"] == 0  # one pass over the labels, then it stops
    # `pragexp.eval model=majority` needs no checkpoint: it counts the training labels, then tests.
    evaluated = run(make_config(["task=circa", "model=majority", "validate=true"], name="eval", out="eval"))
    assert evaluated["test/acc"] == metrics["test/acc"] and evaluated["val/acc"] == metrics["val/acc"]
    with pytest.raises(ValueError, match="evaluation needs a trained model"):
        run(make_config(["task=circa", "model=bert"], name="eval", out="bert"))


@pytest.mark.slow
@pytest.mark.parametrize("labels", ["relaxed", "strict"])
def test_bert_tiny_fast_dev_run_in_both_label_settings(make_config, labels):
    cfg = circa(make_config, ["debug=fdr", f"data.labels={labels}"])
    metrics = run(cfg)
    slugs = [LABEL_SLUGS[n] for n in LABELS[labels]]
    for stage in ("val", "test"):
        assert {f"{stage}/f1/{s}" for s in slugs} <= set(metrics)
        assert {f"{stage}/acc", f"{stage}/macro_f1", f"{stage}/count", f"{stage}/loss"} <= set(metrics)
    assert not any(k.startswith("test/f1/") and k.split("/")[-1] not in slugs for k in metrics)
    assert json.loads(Path(cfg.paths.output_dir, "metrics.json").read_text()) == pytest.approx(metrics)
    confusion = json.loads(Path(cfg.paths.output_dir, "confusion", "test.json").read_text())
    assert confusion["labels"] == list(LABELS[labels])
    assert sum(map(sum, confusion["matrix"])) == metrics["test/count"]
    assert Path(cfg.paths.output_dir, "confusion", "test.png").stat().st_size > 1000


@pytest.mark.slow
def test_train_then_eval_from_checkpoint_and_transfer_the_encoder(make_config):
    cfg = circa(make_config, ["data.labels=strict", "trainer.max_epochs=1"], out="source")
    trained = run(cfg)
    best = next(Path(cfg.paths.output_dir, "checkpoints").glob("best-*.ckpt"))
    # Evaluation: the tokenizer and label set come from the checkpoint, the metrics are the same.
    evaluated = run(
        make_config(["task=circa", "data.labels=strict", f"ckpt_path={best}"], name="eval", out="eval")
    )
    assert evaluated == pytest.approx({k: v for k, v in trained.items() if k.startswith("test/")}, abs=1e-6)

    # Transfer: a relaxed (4-class) run starting from the strict run's encoder, not its 6-class head,
    # and tokenizing with the strict run's tokenizer.
    source = torch.load(best, weights_only=False)
    dm = CircaDataModule(path=str(SAMPLE), tokenizer="tiny", tokenizer_ckpt=str(best))
    dm.setup("fit")
    assert dm.tokenizer.to_str() == source["CircaDataModule"]["tokenizer"]
    model = BertClassifier(num_labels=4, vocab_size=dm.vocab_size, pretrained="tiny", init_ckpt=str(best))
    for name, tensor in model.encoder.state_dict().items():
        assert torch.equal(tensor, source["state_dict"][f"net.encoder.{name}"]), name
    assert model.head.out_features == 4

    target = circa(make_config, [f"model.init_ckpt={best}", "trainer.max_epochs=1"], out="target")
    metrics = run(target)
    assert {"test/acc", "test/f1/conditional", "test/f1/middle"} <= set(metrics)
    saved = torch.load(Path(target.paths.output_dir, "checkpoints", "last.ckpt"), weights_only=False)
    assert saved["pragexp"]["model"]["init_ckpt"] is None  # the weights already hold the transferred encoder
    assert saved["CircaDataModule"]["tokenizer"] == source["CircaDataModule"]["tokenizer"]

    with pytest.raises(ValueError, match="model.pretrained=tiny"):
        BertClassifier(num_labels=4, vocab_size=30522, pretrained="minilm", init_ckpt=str(best))


@pytest.mark.slow
def test_leave_one_scenario_out_sweep_writes_ten_metrics_files(tmp_path):
    args = [
        "-m",
        "task=circa",
        "model=majority",
        "data.setting=unmatched",
        "data.fold=range(10)",
        "logger=none",
        "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
        "trainer.enable_model_summary=false",
        *TINY_DATA["circa"],
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    result = run_module("pragexp.train", args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    files = sorted((tmp_path / "sweep").glob("*/metrics.json"))
    assert len(files) == 10
    held_out = set()
    for path in files:
        metrics = json.loads(path.read_text())
        assert {
            "test/acc",
            "test/macro_f1",
            "test/count",
            *(f"test/f1/{LABEL_SLUGS[n]}" for n in LABELS["relaxed"]),
        } <= set(metrics)
        report = json.loads((path.parent / "data_report.json").read_text())
        assert report["setting"] == "unmatched" and metrics["test/count"] == report["split_sizes"]["test"]
        held_out.add(report["test_scenario"])
    assert len(held_out) == 10


@pytest.mark.slow
def test_experiment_presets_compose_into_the_papers_rows(tmp_path):
    from conftest import CONF, compose_config

    presets = sorted(p.stem for p in (CONF / "experiment" / "circa").glob("*.yaml"))
    assert {"majority", "bert_yn", "bert_question", "bert_answer", "bert_mnli_yn", "bert_boolq_yn"} <= set(
        presets
    )
    # the transfer sources' fine-tuning runs (checked in tests/test_transfer.py)
    sources = {"mnli": "nli", "boolq": "boolq"}
    for name in presets:
        cfg = compose_config([f"experiment=circa/{name}"], tmp_path)
        if name in sources:
            assert cfg.hydra.runtime.choices.task == sources[name]
            continue
        assert cfg.hydra.runtime.choices.task == "circa"
        if name == "majority":
            assert cfg.hydra.runtime.choices.model == "majority"
            continue
        assert cfg.model.pretrained == "bert-base-uncased" and cfg.trainer.max_epochs == 3
        assert cfg.data.batch_size == 32 and cfg.optimizer.lr in (2e-5, 3e-5, 5e-5)
        assert cfg.data.input == {"bert_question": "question", "bert_answer": "answer"}.get(name, "qa")
        if name.endswith("_yn") and name != "bert_yn":
            assert (
                cfg.data.tokenizer_ckpt == cfg.model.init_ckpt
                and "set model.init_ckpt=" in cfg.model.init_ckpt
            )
            with pytest.raises(FileNotFoundError, match="model.init_ckpt not found: set model.init_ckpt="):
                CircaDataModule(path=str(SAMPLE), tokenizer="tiny", tokenizer_ckpt=cfg.model.init_ckpt).setup(
                    "fit"
                )
        else:
            assert cfg.model.init_ckpt is None
