"""A sweep loads a model once (`pragexp.pretrained.loaded`): the jobs of a multirun that run in one
process reuse the model an earlier job loaded for the same weights, never one a job tunes or has changed, and
nothing else of a job reaches the next (seeds, the response cache's counts)."""

from __future__ import annotations

import json
import re

import pytest
import torch
from conftest import LUDWIG_FIXTURE, run_module

from pragexp.generation.backends.hf import HFBackend
from pragexp.pretrained import loaded


def _tiny(**settings) -> HFBackend:
    return HFBackend(model="tiny", device="cpu", **settings)


def test_a_later_job_reuses_the_model_loaded_for_the_same_weights():
    first = _tiny(batch_size=4)
    model, _ = first.load()
    loads = loaded.loads
    loaded.next_job()
    # Another prompt setting, the same weights: the same module.
    assert _tiny(batch_size=8, chat_template=False).load()[0] is model
    assert loaded.loads == loads
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    other = _tiny(dtype="bfloat16").load()[0]  # another dtype: other weights in memory
    assert other is not model and loaded.loads == loads + 1


def test_a_tuned_model_is_never_handed_to_a_later_job():
    frozen, _ = _tiny().load()
    for finetune in ("lora", "full"):
        loaded.next_job()
        tuned = _tiny(finetune=finetune).trainable_model()
        assert tuned is not frozen and tuned.training
        assert any(p.requires_grad for p in tuned.parameters())
        with torch.no_grad():  # what an optimiser step does
            next(p for p in tuned.parameters() if p.requires_grad).add_(1.0)
        loaded.next_job()
        again, _ = _tiny().load()
        assert again is frozen  # the frozen model was never the tuned one's base
        assert not any("lora" in name for name, _ in again.named_modules())
        assert not any(p.requires_grad for p in again.parameters())


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.train(),
        lambda m: next(m.parameters()).requires_grad_(True),
        lambda m: torch.no_grad()(lambda: next(m.parameters()).mul_(2.0))(),
        lambda m: m.model.layers[0].add_module("extra", torch.nn.Identity()),
    ],
    ids=["train mode", "requires_grad", "written in place", "a module injected"],
)
def test_a_kept_model_a_job_changed_is_loaded_again(change, caplog):
    model, _ = _tiny().load()
    change(model)
    loaded.next_job()
    with caplog.at_level("WARNING"):
        again, _ = _tiny().load()
    assert again is not model and "changed by a job" in caplog.text
    assert not again.training and not any(p.requires_grad for p in again.parameters())


def test_loading_or_reusing_leaves_the_same_random_state():
    def draws_after_load() -> torch.Tensor:
        torch.manual_seed(3)
        loaded.kept({"model": "linear"}, lambda: torch.nn.Linear(4, 4))  # its initialisation draws numbers
        return torch.rand(3)

    loads = loaded.loads
    assert torch.equal(draws_after_load(), draws_after_load())
    assert loaded.loads == loads + 1


def test_a_job_that_loads_another_model_lets_go_of_those_no_recent_job_used():
    a, _ = _tiny().load()
    loaded.next_job()
    b, _ = _tiny(dtype="bfloat16").load()  # this job: a was the previous job's, let go
    assert _tiny(dtype="bfloat16").load()[0] is b
    assert _tiny().load()[0] is not a


# -- a LUDWIG template sweep against a process a template ---------------------------------------------------

TEMPLATES = (0, 2, 5)  # three of the six: one job loads the model, the next two reuse it


def _ludwig(cache, *extra) -> list[str]:
    return [
        "task=ludwig",
        "model=llm",
        "llm=tiny",
        "llm.device=cpu",
        f"data.path={LUDWIG_FIXTURE}",
        f"paths.cache_dir={cache}",
        "logger=none",
        "trainer.accelerator=cpu",
        "callbacks.progress_bar=null",
        *extra,
    ]


def _cache_counts(output: str) -> list[tuple[str, str]]:
    return re.findall(r"response cache \S+: (\d+) answers found there, (\d+) asked of the model", output)


@pytest.mark.slow
def test_a_ludwig_template_sweep_equals_separate_processes_and_loads_the_model_once(tmp_path):
    sweep_dir = tmp_path / "sweep"
    templates = ",".join(map(str, TEMPLATES))
    args = _ludwig(tmp_path / "sweep-cache", f"prompt.template={templates}", f"hydra.sweep.dir={sweep_dir}")
    sweep = run_module("pragexp.eval", ["-m", *args], tmp_path)
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    output = sweep.stdout + sweep.stderr
    assert output.count("loaded the language model") == 1, output[-3000:]
    assert output.count("reusing the language model") == len(TEMPLATES) - 1
    alone_counts = []
    for job, template in enumerate(TEMPLATES):  # a sweep's run dirs are named by job number
        run_dir = tmp_path / f"alone-{template}"
        alone = run_module(
            "pragexp.eval",
            _ludwig(
                tmp_path / f"cache-{template}", f"prompt.template={template}", f"hydra.run.dir={run_dir}"
            ),
            tmp_path,
        )
        assert alone.returncode == 0, alone.stderr[-3000:]
        alone_counts += _cache_counts(alone.stdout + alone.stderr)
        swept = json.loads((sweep_dir / str(job) / "metrics.json").read_text())
        assert swept == json.loads((run_dir / "metrics.json").read_text())  # bit for bit: floats read back
        predictions = [(d / "predictions.jsonl").read_text() for d in (sweep_dir / str(job), run_dir)]
        assert predictions[0] == predictions[1]
    # Each job counts its own lookups (cold: every one asked), as a process of its own does.
    assert _cache_counts(output) == alone_counts and len(alone_counts) == len(TEMPLATES)
    assert all(found == "0" for found, _ in alone_counts)
