"""The two LLM tasks end to end: reference sanity checks, per-phenomenon and per-temperature metrics, the
response cache across runs, multiple choice, the API key kept out of every output, failures, DDP."""

import json
from pathlib import Path

import pytest
from conftest import INTENTIONS_FIXTURE, run_module
from omegaconf import OmegaConf
from openai_server import Script, openai_server

from pragexp.entry.instantiate import public_config
from pragexp.generation.backends.encoder import EncoderBackend
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import APIError
from pragexp.generation.cache import ResponseCache
from pragexp.run import run

ITEMS = 6  # the fixture's usable items (one repaired, one skipped)


def _predictions(cfg) -> list[dict]:
    return [
        json.loads(line) for line in Path(cfg.paths.output_dir, "predictions.jsonl").read_text().splitlines()
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("llm", "expected"), [("reference_true", 1.0), ("reference_literal", 0.0)])
def test_reference_replies_through_the_embedding_judge(make_config, llm, expected):
    cfg = make_config(["task=intentions_reply", f"llm={llm}"], name="eval")
    metrics = run(cfg)
    assert metrics["test/count"] == ITEMS
    for key in (
        "test/acc",
        "test/acc/t0.3",
        "test/acc/t0.5",
        "test/acc/irony",
        "test/acc/maxims",
        "test/acc/t0.3/metaphor",
    ):
        assert metrics[key] == expected, key
    assert metrics["test/undecided"] == 0.0
    records = _predictions(cfg)
    assert [r["index"] for r in records] == list(range(ITEMS))
    assert records[0]["phenomenon"] == "indirectspeech" and records[0]["true_intention"]
    assert len(records[0]["replies"]) == 2 and records[0]["prompt"].endswith("Ana replies, ")
    report = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())
    assert (report["repaired"], report["skipped"]) == (1, 1)


@pytest.mark.slow
def test_rerun_with_another_judge_makes_no_generation_call(make_config, tmp_path, monkeypatch):
    calls = []
    original = HFBackend.generate_samples

    def counted(self, prompts, params, sample):
        calls.append(prompts[0].text)
        return original(self, prompts, params, sample)

    monkeypatch.setattr(HFBackend, "generate_samples", counted)
    common = [
        "task=intentions_reply",
        f"paths.cache_dir={tmp_path / 'cache'}",
        "task.max_new_tokens=6",
    ]
    first = run(make_config([*common, "task.samples=2"], name="eval", out="first"))
    generation = [c for c in calls if "Generate a short" in c]
    assert len(generation) == 2 * 2  # 2 temperatures x 2 samples, all items in one batch each
    calls.clear()
    second_cfg = make_config(
        [*common, "task.samples=2", "judge=llm", "judge.backend.model=tiny"], name="eval", out="second"
    )
    second = run(second_cfg)
    assert not [c for c in calls if "Generate a short" in c] and calls  # only the judge ran
    assert first["test/count"] == second["test/count"] == ITEMS
    replies_first = [
        r["reply"]
        for rec in _predictions(make_config(common, name="eval", out="first"))
        for r in rec["replies"]
    ]
    replies_second = [r["reply"] for rec in _predictions(second_cfg) for r in rec["replies"]]
    assert replies_first == replies_second and len(replies_first) == ITEMS * 4
    assert {r["verdict"] for rec in _predictions(second_cfg) for r in rec["replies"]} <= {
        "true",
        "literal",
        "neither",
        "invalid",
    }


@pytest.mark.slow
def test_sampled_replies_are_the_same_fresh_after_a_partial_run_and_at_another_batch_size(
    make_config, tmp_path
):
    """Same command, same numbers: a draw's reply depends on its prompt, seed, temperature and draw index
    only, not on which prompts share its batch (data.limit first, then all) or on llm.batch_size."""
    common = ["task=intentions_reply", "task.max_new_tokens=8", "task.samples=2"]

    def evaluate(out: str, cache: str, *extra: str):
        cfg = make_config([*common, f"paths.cache_dir={tmp_path / cache}", *extra], name="eval", out=out)
        metrics = run(cfg)
        replies = {
            (record["index"], reply["temperature"], reply["sample"]): reply["raw"]
            for record in _predictions(cfg)
            for reply in record["replies"]
        }
        return replies, metrics

    fresh = evaluate("fresh", "fresh")
    evaluate("half", "history", f"data.limit={ITEMS // 2}")
    after_half = evaluate("all", "history")
    other_batch_size = evaluate("batch2", "batch2", "llm.batch_size=2")
    assert fresh == after_half == other_batch_size
    assert len(fresh[0]) == ITEMS * 2 * 2 and len(set(fresh[0].values())) > ITEMS  # really sampled


@pytest.mark.slow
def test_a_reasoning_level_without_a_reply_is_counted_and_scored_not_true(make_config, monkeypatch):
    """CoT level 0: generations with "Response:" are judged on the reply alone; those without (here the
    true reference itself, as bare text) are not judged on their reasoning: no_reply, counted not true."""
    judged = []
    original_embed = EncoderBackend.embed

    def canned(self, prompts, params, sample):
        out = []
        for p in prompts:
            reply = p.reference["reply_true"]
            out.append(f"Thought: ironic.\nResponse: {reply}" if "Ana" in p.text else reply)
        return out

    def embed(self, texts):
        judged.extend(texts)
        return original_embed(self, texts)

    monkeypatch.setattr(HFBackend, "generate_samples", canned)
    monkeypatch.setattr(EncoderBackend, "embed", embed)
    cfg = make_config(["task=intentions_reply", "prompt.cot=0", "judge.use_cache=false"], name="eval")
    metrics = run(cfg)
    records = _predictions(cfg)
    answered = [r for r in records if "Ana" in r["prompt"]]
    assert 0 < len(answered) < ITEMS
    for record in records:
        verdicts = {r["verdict"] for r in record["replies"]}
        assert verdicts == ({"true"} if record in answered else {"no_reply"})
        assert all(r["reply"] == "" for r in record["replies"] if r["verdict"] == "no_reply")
    assert metrics["test/no_reply"] == pytest.approx(1 - len(answered) / ITEMS)
    assert metrics["test/acc"] == pytest.approx(len(answered) / ITEMS)
    assert metrics["test/undecided"] == 0.0
    assert "" not in judged and not any(t.startswith("Thought") for t in judged)


@pytest.mark.slow
def test_multiple_choice_scores_both_orders(make_config):
    cfg = make_config(["task=intentions_mc"], name="eval")
    metrics = run(cfg)
    assert metrics["test/count"] == ITEMS and {"test/acc", "test/p_true", "test/acc/irony"} <= set(metrics)
    records = _predictions(cfg)
    for record in records:
        assert [o["true_option"] for o in record["orders"]] == ["1", "2"]
        assert record["acc"] in (0.0, 0.5, 1.0) and 0.0 <= record["p_true"] <= 1.0
    assert metrics["test/acc"] == pytest.approx(sum(r["acc"] for r in records) / ITEMS)


@pytest.mark.slow
def test_openai_run_keeps_the_key_out_of_every_output_and_a_failure_leaves_nothing_half_written(
    make_config, tmp_path, monkeypatch, capsys, caplog
):
    secret = "sk-never-write-me-42"
    monkeypatch.setenv("PRAGEXP_SECRET_KEY", secret)
    script = Script(reply=lambda body: "Sure, let me help you with that.")
    with openai_server(script) as url:
        common = [
            "task=intentions_reply",
            "llm=openai",
            "llm.model=test-model",
            f"llm.base_url={url}",
            "llm.api_key_env=PRAGEXP_SECRET_KEY",
            "llm.backoff=0.01",
            "llm.max_retries=1",
            "logger=csv",
            f"paths.cache_dir={tmp_path / 'cache'}",
        ]
        ok = make_config(common, name="eval", out="ok")
        metrics = run(ok)
        assert all(h.get("Authorization") == f"Bearer {secret}" for _, h, _ in script.requests)
        script.fail_next = [400]  # a permanent error on the first new reply asked for
        script.fail_only = "/chat/completions"  # (not on the question what the server serves)
        failed = make_config([*common, "task.temperatures=[0.9]"], name="eval", out="failed")
        with pytest.raises(APIError, match="HTTP 400"):
            run(failed)
    assert metrics["test/count"] == ITEMS
    saved = OmegaConf.to_yaml(ok)  # what Hydra writes to .hydra/config.yaml
    assert "PRAGEXP_SECRET_KEY" in saved and secret not in saved
    assert secret not in json.dumps(public_config(ok))  # what loggers and W&B get
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err + caplog.text
    files = [p for p in Path(ok.paths.output_dir).rglob("*") if p.is_file()]
    assert any(p.name == "hparams.yaml" for p in files)
    assert all(secret.encode() not in p.read_bytes() for p in files)
    out = Path(failed.paths.output_dir)
    assert not (out / "metrics.json").exists() and not (out / "predictions.jsonl").exists()
    cached = ResponseCache(tmp_path / "cache" / "llm" / "responses")
    assert len(cached) >= ITEMS * 2  # the first run's replies survived the failed one
    cached.close()


@pytest.mark.slow
def test_ddp_two_processes_count_every_item_once(tmp_path):
    run_dir = tmp_path / "ddp"
    proc = run_module(
        "pragexp.eval",
        [
            "task=intentions_reply",
            "llm=reference_true",
            f"data.path={INTENTIONS_FIXTURE}",
            "data.limit=5",  # odd: the sampler repeats one item on the second rank
            "data.eval_batch_size=2",
            "trainer=ddp",
            "trainer.devices=2",
            "trainer.accelerator=cpu",
            "logger=none",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test/count"] == 5 and metrics["test/acc"] == 1.0
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1, 2, 3, 4]
