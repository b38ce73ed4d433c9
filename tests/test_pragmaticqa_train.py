"""task=pragmaticqa end to end on the invented fixtures: train FiD (tiny BART) then evaluate its checkpoint,
the oracle's perfect scores, the paper's schedule (the learning rate stepped after every validation),
two DDP processes counting every question once, and bad input."""

import json
from pathlib import Path

import pytest
import pytorch_lightning as pl
import torch
from conftest import PRAGMATICQA_FIXTURE, TINY_DATA, TINY_MODEL, run_module
from tokenizers import Tokenizer

from pragexp.reporting.results import metrics_cell
from pragexp.retrieval.encoders import build_encoder
from pragexp.run import run
from pragexp.runs import checkpoint
from pragexp.utils.errors import DataFormatError

FID = ["task=pragmaticqa", "model=fid"]
FAST_RUN = ["logger=none", "trainer.max_epochs=1", "callbacks.progress_bar=null"]


@pytest.mark.slow
def test_train_then_evaluate_the_checkpoint(make_config):
    cfg = make_config([*FID, "trainer.max_epochs=1"], out="train")
    trained = run(cfg)
    run_dir = Path(cfg.paths.output_dir)
    assert trained["test/count"] == 7 and trained["val/count"] == 6
    for key in ("val/ppl", "test/ppl", "test/f1_lit", "test/f1_prag", "test/q", "test/r@5", "test/r_all@5"):
        assert key in trained
    assert "test/retrieval/r@1" in trained and "test/f1_lit/when" in trained  # the k sweep, question types
    records = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == 7 and {"question", "gold_literal", "predicted_literal", "retrieved_titles"} <= set(
        records[0]
    )
    assert len(records[0]["retrieved_titles"]) == 5

    best = next(run_dir.glob("checkpoints/best-*.ckpt"))
    saved = checkpoint.read(best)  # weights_only=True
    state = saved.datamodule_state("PragmatiCQADataModule")
    assert "</lit>" in state["tokenizer"] and "</prag>" in state["tokenizer"] and state["query_tokenizer"]
    evaluated = run(make_config([*FID, f"ckpt_path={best}"], name="eval", out="eval"))
    assert evaluated == pytest.approx(
        {k: v for k, v in trained.items()}, abs=1e-5
    )  # dev and test, validate=true
    report = json.loads((Path(cfg.paths.output_dir).parent / "eval" / "data_report.json").read_text())
    assert report["index"]["key"] == state["index_key"]  # the same cached index, found again


def _release_with_a_literal_only_question(folder: Path) -> Path:
    """The fixture release, with one test question whose gold pragmatic span repeats its literal one (as 11.6%
    of the released test questions do): nothing beyond the literal answer to find there."""
    folder.mkdir()
    for split in ("train", "val", "test"):
        lines = (PRAGMATICQA_FIXTURE / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        if split == "test":
            first = json.loads(lines[0])
            meta = first["qas"][0]["a_meta"]
            meta["pragmatic_obj"] = [dict(meta["literal_obj"][0])]
            lines[0] = json.dumps(first)
        (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.mark.slow
def test_parameter_free_readers_evaluate_without_a_checkpoint(make_config, tmp_path):
    """`pragexp.eval model=oracle|lead` scores dev and test with no checkpoint. The oracle's F1_lit is 1 and
    its F1_prag is the ceiling the split allows (6 of the 7 test questions add something beyond the literal
    answer); the lead baseline falls below both."""
    data = _release_with_a_literal_only_question(tmp_path / "data")
    oracle = run(
        make_config(["task=pragmaticqa", "model=oracle", f"data.path={data}"], name="eval", out="oracle")
    )
    assert oracle["test/f1_lit"] == oracle["val/f1_lit"] == 1.0 and oracle["test/count"] == 7
    assert oracle["test/f1_prag_ceiling"] == pytest.approx(6 / 7)
    assert oracle["test/f1_prag"] == pytest.approx(oracle["test/f1_prag_ceiling"])
    assert oracle["val/f1_prag"] == oracle["val/f1_prag_ceiling"] == 1.0
    assert "test/ppl" not in oracle  # a baseline has no likelihood
    assert not (tmp_path / "oracle" / "checkpoints").exists()  # nothing was trained
    lead = run(make_config(["task=pragmaticqa", "model=lead", f"data.path={data}"], name="eval", out="lead"))
    assert lead["test/f1_lit"] < 1.0 and lead["test/f1_prag"] < lead["test/f1_prag_ceiling"]
    assert lead["test/r@5"] == oracle["test/r@5"]  # same retriever, untrained
    assert lead["test/hit_all@5"] <= lead["test/r_all@5"] <= lead["test/r@5"]


@pytest.mark.slow
def test_evaluating_a_model_that_learns_weights_without_a_checkpoint_is_refused(make_config):
    with pytest.raises(ValueError, match="evaluation needs a trained model: pass ckpt_path"):
        run(make_config(["task=pragmaticqa", "model=fid"], name="eval"))


@pytest.mark.slow
def test_community_scope_retrieves_from_the_conversations_own_pages(make_config):
    cfg = make_config(["task=pragmaticqa", "model=lead", "retriever.scope=community"])
    run(cfg)
    records = [
        json.loads(line)
        for line in (Path(cfg.paths.output_dir) / "predictions.jsonl").read_text().splitlines()
    ]
    # The test conversations are River Ferries', whose pages sit in the folder named by its topic.
    assert records and all(set(r["retrieved_titles"]) == {"Old Ferry"} for r in records)


class EncoderModeProbe(pl.Callback):
    """Records whether the question encoder was in training mode at each training step."""

    seen: list[bool] = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        EncoderModeProbe.seen.append(pl_module.net["query_encoder"].training)


@pytest.mark.slow
def test_plateau_schedule_steps_after_every_validation(make_config):
    cfg = make_config(
        [
            *FID,
            "scheduler=plateau",
            "scheduler.monitor=val/ppl",
            "scheduler.mode=min",
            "scheduler.patience=0",
            "+trainer.val_check_interval=0.5",
            "trainer.max_epochs=1",
            "callbacks.early_stopping=null",
            "test=false",
            "retriever.finetune=false",
            f"+callbacks.encoder_mode._target_={__name__}.EncoderModeProbe",
        ]
    )
    EncoderModeProbe.seen.clear()
    run(cfg)
    # a frozen encoder retrieves in eval mode (no dropout) at every training step, validations between them
    assert EncoderModeProbe.seen and not any(EncoderModeProbe.seen)
    last = Path(cfg.paths.output_dir) / "checkpoints" / "last.ckpt"
    (plateau,) = checkpoint.load_plain(last)["lr_schedulers"]
    assert plateau["last_epoch"] == 2  # two validations in the epoch, none at its end
    # retriever.finetune=false: the question encoder kept its initial (seeded) weights.
    saved = checkpoint.read(last)
    vocab = Tokenizer.from_str(
        saved.datamodule_state("PragmatiCQADataModule")["query_tokenizer"]
    ).get_vocab_size()
    initial = build_encoder("tiny", "mean", True, vocab_size=vocab).state_dict()
    trained = saved.weights("net.query_encoder.")
    assert trained.keys() == initial.keys() and all(torch.equal(trained[k], initial[k]) for k in initial)


@pytest.mark.slow
def test_two_ddp_processes_count_every_question_once(tmp_path, cache_dir):
    run_dir = tmp_path / "ddp"
    proc = run_module(
        "pragexp.train",
        [
            *FID,
            *FAST_RUN,
            *TINY_DATA["pragmaticqa"],
            *TINY_MODEL["fid"],
            "trainer=ddp",
            "trainer.devices=2",
            "trainer.accelerator=cpu",
            f"paths.cache_dir={cache_dir}",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test/count"] == 7 and metrics["val/count"] == 6  # 7 is odd: one rank repeats an example
    assert len((run_dir / "predictions.jsonl").read_text().splitlines()) == 7


@pytest.mark.slow
def test_a_malformed_line_is_named_and_nothing_is_written(make_config, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    lines = (PRAGMATICQA_FIXTURE / "train.jsonl").read_text(encoding="utf-8").splitlines()
    (data / "train.jsonl").write_text(
        "\n".join([lines[0], lines[1][:-10], *lines[2:]]) + "\n", encoding="utf-8"
    )
    cfg = make_config(["task=pragmaticqa", "model=oracle", f"data.path={data}"])
    with pytest.raises(DataFormatError, match=rf"{data / 'train.jsonl'}:2: not valid JSON"):
        run(cfg)
    assert not (Path(cfg.paths.output_dir) / "metrics.json").exists()


@pytest.mark.slow
def test_a_missing_archive_names_data_sources_path(make_config, tmp_path):
    cfg = make_config(["task=pragmaticqa", "model=oracle", f"data.sources_path={tmp_path / 'nowhere'}"])
    with pytest.raises(FileNotFoundError, match="data.sources_path="):
        run(cfg)


@pytest.mark.slow
def test_the_k_sweep_is_one_multirun_and_the_report_sets_it_beside_table_4(tmp_path, cache_dir):
    common = [*FID, *FAST_RUN, *TINY_DATA["pragmaticqa"], *TINY_MODEL["fid"], f"paths.cache_dir={cache_dir}"]
    train_dir = tmp_path / "train"
    proc = run_module("pragexp.train", [*common, f"hydra.run.dir={train_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    best = next(train_dir.glob("checkpoints/best-*.ckpt"))
    sweep_dir = tmp_path / "sweep"
    proc = run_module(
        "pragexp.eval",
        ["-m", *common, f"ckpt_path={best}", "retriever.top_k=1,5", f"hydra.sweep.dir={sweep_dir}"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    per_k = {}
    for job in sorted(sweep_dir.glob("*/metrics.json")):
        overrides = (job.parent / ".hydra" / "overrides.yaml").read_text()
        per_k[1 if "retriever.top_k=1" in overrides else 5] = json.loads(job.read_text())
    assert set(per_k) == {1, 5} and "test/r@1" in per_k[1] and "test/r@5" in per_k[5]
    assert per_k[1]["test/retrieval/r@5"] == per_k[5]["test/retrieval/r@5"]  # one retriever, whatever k reads

    out = tmp_path / "table4.md"
    proc = run_module("pragexp.report", [str(sweep_dir), "--out", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text()
    test_table = text.split("### pragmaticqa: test\n", 1)[1].split("###", 1)[0]
    for k, paper_r_at_k in ((1, "0.018"), (5, "0.049")):  # Table 4, test R@k: 1.83 and 4.90 %
        row = next(line for line in test_table.splitlines() if f"retriever.top_k={k}" in line)
        ours = metrics_cell(
            per_k[k], f"test/r@{k}", units="conversations"
        )  # 0.714 ± 0.184 (n=3 conversations)
        assert f"| {ours} | {paper_r_at_k} |" in row  # ours beside the paper's
    assert "val/ppl (min)" in text  # the sweep ranked by the task's monitor, resolved from its config
    assert "python -m pragexp.eval " in text  # the best trial is re-run with the command that ran it
