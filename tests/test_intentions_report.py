"""pragexp.report on intention runs: generative vs discriminative (Figure 2), CoT levels (Figure 3), judge
agreement."""

import json

import pytest
import yaml
from conftest import migrated

from pragexp.data.intentions.report_section import agreement, by_cot_level, generative_vs_mc, judge_agreement
from pragexp.report import find_runs
from pragexp.report.cli import main

HF = {"_target_": "pragexp.generation.backends.hf.HFBackend", "model": "smollm2"}
EMBEDDING = {"_target_": "pragexp.data.intentions.judges.EmbeddingJudge", "backend": {"model": "minilm"}}
LLM_JUDGE = {"_target_": "pragexp.data.intentions.judges.LLMJudge", "backend": {"model": "gpt-4"}}


DATA = "pragexp.data.intentions.datamodule.IntentionsDataModule"


def _run(folder, task, metrics, judge=None, cot="none", verdicts=None):
    hydra = folder / ".hydra"
    hydra.mkdir(parents=True)
    config = {
        "llm": HF,
        "judge": judge,
        "prompt": {"cot": cot},
        "data": {"_target_": DATA, "path": "dev.csv"},
    }
    (hydra / "config.yaml").write_text(yaml.safe_dump(config))
    (hydra / "hydra.yaml").write_text(
        yaml.safe_dump({"hydra": {"runtime": {"choices": {"task": task, "model": "none"}}}})
    )
    overrides = [f"task={task}"] + ([f"prompt.cot={cot}"] if cot != "none" else [])
    (hydra / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if verdicts:
        lines = [
            {"index": i, "replies": [{"temperature": 0.3, "sample": 0, "reply": f"r{i}", "verdict": v}]}
            for i, v in enumerate(verdicts)
        ]
        (folder / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    migrated(folder)


@pytest.fixture
def runs_dir(tmp_path):
    gen = {"test/acc": 0.5, "test/acc/irony": 0.4, "test/acc/indirectspeech": 0.6, "test/count": 4}
    _run(
        tmp_path / "plain_emb",
        "intentions_reply",
        gen,
        EMBEDDING,
        verdicts=["true", "true", "literal", "literal"],
    )
    _run(
        tmp_path / "plain_gpt4",
        "intentions_reply",
        {**gen, "test/acc": 0.25},
        LLM_JUDGE,
        verdicts=["true", "literal", "literal", "literal"],
    )
    _run(tmp_path / "cot5", "intentions_reply", {"test/acc": 0.7, "test/count": 4}, EMBEDDING, cot=5)
    _run(
        tmp_path / "mc",
        "intentions_mc",
        {"test/acc": 0.9, "test/acc/irony": 1.0, "test/acc/indirectspeech": 0.8, "test/count": 4},
    )
    return tmp_path


def test_agreement_and_kappa():
    assert agreement(
        ["true", "true", "literal", "literal"], ["true", "literal", "literal", "literal"]
    ) == pytest.approx((0.75, 0.5))
    assert agreement(["true", "literal"], ["true", "literal"]) == pytest.approx((1.0, 1.0))


@pytest.mark.slow
def test_tables_and_figures_from_run_dirs(runs_dir, tmp_path, capsys):
    runs = find_runs([runs_dir])
    compared = generative_vs_mc(runs)["hf:smollm2"]
    means = {p: cell.mean for p, cell in compared["discriminative"].items()}
    assert means == {"all": 0.9, "indirectspeech": 0.8, "irony": 1.0}
    assert compared["generative (judge embedding:minilm)"]["irony"].mean == pytest.approx(0.4)
    assert compared["generative (judge llm:gpt-4)"]["all"].mean == pytest.approx(0.25)
    levels = by_cot_level(runs)
    assert {c: cell.mean for c, cell in levels["hf:smollm2 (judge embedding:minilm)"].items()} == {
        "none": 0.5,
        "5": 0.7,
    }
    (pair,) = judge_agreement(runs)
    assert (
        pair["replies"] == 4
        and pair["agreement"] == pytest.approx(0.75)
        and pair["kappa"] == pytest.approx(0.5)
    )
    figures = tmp_path / "figures"
    assert main([str(runs_dir), "--figures", str(figures)]) == 0
    out = capsys.readouterr().out
    assert "Generative (plain prompt) vs discriminative" in out and "chain-of-thought level" in out
    assert "| hf:smollm2 | none | embedding:minilm vs llm:gpt-4 | 4 | 0.750 | 0.500 |" in out
    assert (figures / "intentions_fig2.png").stat().st_size > 1000 and (
        figures / "intentions_fig3.png"
    ).is_file()


def test_no_reply_is_reported_by_cot_level_and_left_out_of_judge_agreement(tmp_path, capsys):
    metrics = {"test/acc": 0.25, "test/no_reply": 0.5, "test/count": 4}
    _run(
        tmp_path / "emb",
        "intentions_reply",
        metrics,
        EMBEDDING,
        0,
        ["true", "no_reply", "literal", "no_reply"],
    )
    _run(
        tmp_path / "gpt4",
        "intentions_reply",
        metrics,
        LLM_JUDGE,
        0,
        ["literal", "no_reply", "literal", "no_reply"],
    )
    runs = find_runs([tmp_path])
    (pair,) = judge_agreement(runs)
    assert pair["replies"] == 2 and pair["agreement"] == pytest.approx(0.5)  # the judged replies only
    assert by_cot_level(runs, "test/no_reply")["hf:smollm2 (judge embedding:minilm)"]["0"].mean == 0.5
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no reply to judge" in out
    assert "| hf:smollm2 (judge embedding:minilm) | 0.500 |" in out
