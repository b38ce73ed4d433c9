"""LLM benchmarks scored while an LLM trains (`callbacks.benchmarks`, pragexp.training.benchmarks): curves at
the right steps, answers cached by the weights' digest, training unchanged, the report's figure, clear
refusals."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

from pragexp.generation.cache import ResponseCache
from pragexp.report import find_runs
from pragexp.report.training_curves import figures
from pragexp.run import run
from pragexp.runs import checkpoint
from pragexp.training.benchmarks import BenchmarkCurves, StepBackend, benchmark_choices, flat_overrides

FIXTURES = Path(__file__).parent / "fixtures"
LORA = ["task=circa", "model=llm", "llm.finetune=lora", "optimizer.lr=5e-3", "trainer.max_epochs=1"]
BENCH = [
    "callbacks.benchmarks.names=[ludwig,hu_pragmatics]",
    "callbacks.benchmarks.every_n_steps=2",
    f"+callbacks.benchmarks.overrides.ludwig.data.path={FIXTURES / 'ludwig'}",
    f"+callbacks.benchmarks.overrides.hu_pragmatics.data.path={FIXTURES / 'hu_pragmatics' / 'prompts'}",
]


def curves(cfg) -> list[dict]:
    with open(Path(cfg.paths.output_dir) / "csv" / "metrics.csv") as f:
        return [row for row in csv.DictReader(f) if row.get("bench/ludwig/acc")]


def adapter_weights(cfg) -> dict[str, torch.Tensor]:
    (path,) = (Path(cfg.paths.output_dir) / "checkpoints").glob("last.ckpt")
    return {k: v for k, v in checkpoint.read(path).network_weights().items() if k != "_extra_state"}


@pytest.mark.slow
def test_curves_are_logged_every_n_steps_and_drawn_by_the_report(make_config, tmp_path):
    cfg = make_config([*LORA, *BENCH, "logger=csv"])
    run(cfg)
    rows = curves(cfg)
    steps = [int(r["step"]) for r in rows]
    last = max(steps)
    assert last > 2 and steps == sorted({0, *range(2, last + 1, 2), last})
    for row in rows:
        for name in ("ludwig", "hu_pragmatics"):
            assert 0.0 <= float(row[f"bench/{name}/acc"]) <= 1.0
            assert float(row[f"bench/{name}/acc_ci95_low"]) <= float(row[f"bench/{name}/acc_ci95_high"])
            assert float(row[f"bench/{name}/acc_n"]) > 1
    # The benchmark's figures at step 0 are pragexp.eval's on the untrained model (the same route and metric).
    frozen = make_config(["task=ludwig", f"data.path={FIXTURES / 'ludwig'}"], name="eval", out="eval")
    assert float(rows[0]["bench/ludwig/acc"]) == pytest.approx(run(frozen)["test/acc"])
    (drawn,) = figures(find_runs([cfg.paths.output_dir]), tmp_path / "figures")
    assert drawn.name == "training-curves-circa-run.png" and drawn.stat().st_size > 0


@pytest.mark.slow
def test_training_is_unchanged_and_the_same_weights_answer_from_the_cache(make_config):
    plain = make_config(LORA, out="plain")
    run(plain)
    scored = make_config([*LORA, *BENCH, "callbacks.benchmarks.every_n_steps=1", "logger=csv"], out="scored")
    run(scored)
    without, with_curves = adapter_weights(plain), adapter_weights(scored)
    assert without.keys() == with_curves.keys()
    assert all(torch.equal(without[k], with_curves[k]) for k in without)  # bit for bit
    again = make_config([*LORA, *BENCH, "callbacks.benchmarks.every_n_steps=1", "logger=csv"], out="again")
    cache = Path(again.paths.cache_dir) / "llm" / "responses"

    def stored() -> int:
        folder = ResponseCache(cache)
        count = len(folder)
        folder.close()
        return count

    before = stored()
    run(again)
    assert stored() == before  # every step's weights were scored before: nothing asked of the model

    def figures_only(rows):  # a pass's wall time is the one thing that differs
        return [{k: v for k, v in row.items() if not k.endswith("/seconds")} for row in rows]

    assert figures_only(curves(again)) == figures_only(curves(scored))


@pytest.mark.slow
def test_curves_reach_the_wandb_run_with_their_step(make_config, tmp_path):
    from test_wandb import _key, wandb_records

    cfg = make_config([*LORA, *BENCH, "logger=wandb"])
    run(cfg)
    (run_file,) = (tmp_path / "run" / "wandb").glob("offline-run-*/run-*.wandb")
    rows = [{_key(item): item.value_json for item in r.item} for r in wandb_records(run_file)["history"]]
    scored = [row for row in rows if "bench/ludwig/acc" in row]
    assert [int(row["trainer/global_step"]) for row in scored][:2] == [0, 2], sorted(
        {k for r in rows for k in r}
    )
    assert all("bench/hu_pragmatics/acc_stderr" in row for row in scored)


def test_the_cache_key_follows_the_weights(make_config):
    cfg = make_config(LORA)
    from hydra.utils import instantiate

    backend = instantiate(cfg.llm)
    model = backend.trainable_model()
    step = StepBackend(backend)
    step.settle(0)
    first = step.identity()
    lora_b = next(p for n, p in model.named_parameters() if "lora_B" in n)
    with torch.no_grad():
        lora_b.add_(1.0)
    step.settle(1)
    assert step.identity()["weights"] != first["weights"]
    with torch.no_grad():
        lora_b.sub_(1.0)
    step.settle(2)
    assert step.identity() == first  # the same adapters: the same answers, whatever the step or the fit
    step.new_fit()
    step.settle(0)
    assert step.identity() == first


@pytest.mark.slow
def test_full_finetuning_is_scored_too(make_config):
    cfg = make_config(
        [*LORA, "llm.finetune=full", "optimizer.lr=1e-4", *BENCH[:1], BENCH[2], BENCH[3], "logger=csv"]
    )
    run(cfg)
    assert len(curves(cfg)) >= 2


def test_a_model_that_is_no_llm_being_trained_is_refused(make_config):
    cfg = make_config(["task=circa", "model=bert", *BENCH])
    with pytest.raises(ValueError, match="llm.finetune=lora"):
        run(cfg)


def test_an_unknown_benchmark_names_the_choices():
    assert {"ludwig", "hu_pragmatics", "multiprageval"} <= set(benchmark_choices())
    with pytest.raises(ValueError, match=r"ludwg.*choose among .*ludwig"):
        BenchmarkCurves(names=["ludwg"])


def test_overrides_are_written_as_hydra_reads_them():
    settings = {"data": {"path": "../a b/x.csv", "seeds": [0, 2], "file": "fb"}, "prompt": {"shots": 0}}
    assert flat_overrides(settings) == [
        "data.path='../a b/x.csv'",
        "data.seeds=[0,2]",
        "data.file=fb",
        "prompt.shots=0",
    ]
