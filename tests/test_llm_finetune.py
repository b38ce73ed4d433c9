"""model=llm trained (llm.finetune=lora|full): the options' scores train as evaluation ranks them, checkpoints
hold the adapters and the base's identity, and peft loads the adapter folder as it is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import predictions

from pragexp.run import run
from pragexp.runs import checkpoint

LORA = ["model=llm", "llm.finetune=lora", "optimizer.lr=5e-3", "trainer.max_epochs=2"]


def best_checkpoint(cfg) -> Path:
    (path,) = sorted((Path(cfg.paths.output_dir) / "checkpoints").glob("best-*.ckpt"))
    return path


@pytest.mark.slow
def test_lora_trains_circa_and_eval_of_its_checkpoint_reproduces_the_test_figures(make_config):
    cfg = make_config(["task=circa", *LORA])
    trained = run(cfg)
    assert "test/acc" in trained and trained["test/count"] > 0
    ckpt = best_checkpoint(cfg)
    saved = checkpoint.read(ckpt)
    weights = saved.network_weights()
    # Only the adapters (and the base's identity) are saved, not the frozen base model.
    assert weights and all("lora_" in k for k in weights if k != "_extra_state")
    extra = weights["_extra_state"]
    assert extra["finetune"] == "lora" and extra["base"]["model"] == "tiny"
    assert extra["lora"] == {
        "r": 8,
        "alpha": 16,
        "dropout": 0.05,
        "target_modules": None,
        "seed": 0,
        "layers": None,
    }
    assert any(float(v.abs().sum()) > 0 for k, v in weights.items() if "lora_B" in k)  # it learned
    # Evaluating the checkpoint rebuilds base + adapter and gives the same test figures and choices.
    again = make_config(["task=circa", "model=llm", f"ckpt_path={ckpt}"], name="eval", out="eval")
    evaluated = run(again)
    for key in ("test/acc", "test/macro_f1", "test/count"):
        assert evaluated[key] == pytest.approx(trained[key])
    assert [r["choice"] for r in predictions(again)] == [r["choice"] for r in predictions(cfg)]


@pytest.mark.slow
def test_the_adapter_folder_loads_with_peft_and_scores_as_pragexp_does(make_config):
    from peft import PeftModel

    from pragexp.pretrained.causal import tiny_causal_lm

    cfg = make_config(["task=circa", *LORA])
    run(cfg)
    ckpt = best_checkpoint(cfg)
    folder = ckpt.with_suffix(".peft")
    assert (folder / "adapter_config.json").is_file() and (folder / "adapter_model.safetensors").is_file()
    base, tokenizer = tiny_causal_lm()
    tuned = PeftModel.from_pretrained(base, folder).eval()
    weights = checkpoint.read(ckpt).network_weights()
    lora_a = next(k for k in weights if "lora_A" in k)
    name = lora_a[len("lm.") :]
    assert torch.equal(dict(tuned.named_parameters())[name].detach(), weights[lora_a])
    record = predictions(cfg)[0]
    context = tokenizer(record["prompt"].rstrip(), add_special_tokens=False)["input_ids"]
    whole = tokenizer(record["prompt"] + record["continuations"][0], add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logp = torch.log_softmax(tuned(torch.tensor([whole])).logits[0].float(), -1)
    loglik = sum(float(logp[t - 1, whole[t]]) for t in range(len(context), len(whole)))
    assert loglik == pytest.approx(record["loglik"][0], abs=1e-4)


@pytest.mark.slow
def test_a_checkpoint_or_adapter_folder_of_another_base_model_is_refused(make_config, tmp_path):
    from pragexp.generation.backends.hf import HFBackend

    cfg = make_config(["task=circa", *LORA, "trainer.max_epochs=1"])
    run(cfg)
    ckpt = best_checkpoint(cfg)
    # The folder beside the checkpoint names its base as the checkpoint does; llm.adapter= checks it.
    state = json.loads((ckpt.with_suffix(".peft") / "pragexp.json").read_text())
    assert state == checkpoint.read(ckpt).network_weights()["_extra_state"]
    assert HFBackend(model="tiny", device="cpu", adapter=str(ckpt)).load()[0].peft_config  # the same base
    elsewhere = tmp_path / "elsewhere.peft"
    shutil.copytree(ckpt.with_suffix(".peft"), elsewhere)
    (elsewhere / "pragexp.json").write_text(
        json.dumps({**state, "base": {**state["base"], "weights": "another"}})
    )
    with pytest.raises(ValueError, match=r"the weights at .*elsewhere\.peft were trained on the base model"):
        HFBackend(model="tiny", device="cpu", adapter=str(elsewhere)).load()
    raw = torch.load(ckpt, weights_only=True)
    key = next(k for k in raw["state_dict"] if k.endswith("_extra_state"))
    raw["state_dict"][key]["base"] = {**raw["state_dict"][key]["base"], "weights": "another"}
    other = tmp_path / "other.ckpt"
    torch.save(raw, other)
    again = make_config(["task=circa", "model=llm", f"ckpt_path={other}"], name="eval", out="eval")
    with pytest.raises(ValueError, match="trained on the base model"):
        run(again)


@pytest.mark.slow
def test_frozen_llm_learns_nothing_and_full_finetuning_saves_every_weight(make_config):
    from pragexp.generation.backends.hf import HFBackend
    from pragexp.models.llm import PromptedLLM

    assert PromptedLLM.traits(llm=HFBackend(model="tiny")).learns_weights is False
    assert PromptedLLM.traits(llm=HFBackend(model="tiny", finetune="lora")).learns_weights is True
    cfg = make_config(["task=grice_recovery", "model=llm", "llm.finetune=full", "trainer.max_epochs=1"])
    metrics = run(cfg)
    assert "test/r@1" in metrics
    weights = checkpoint.read(best_checkpoint(cfg)).network_weights()
    assert any(k.endswith("embed_tokens.weight") for k in weights)  # the whole model


@pytest.mark.slow
def test_training_refuses_scorings_that_do_not_rank_by_likelihood(make_config):
    cfg = make_config(["task=circa", *LORA, "prompt.scoring=calibrated"])
    with pytest.raises(ValueError, match="fine-tuning ranks the options"):
        run(cfg)


def test_quantization_without_bitsandbytes_or_a_gpu_is_a_clear_error():
    from pragexp.generation.backends.hf import HFBackend

    backend = HFBackend(model="tiny", finetune="lora", quantization="4bit")
    with pytest.raises((ImportError, RuntimeError), match="QLoRA"):
        backend.trainable_model()
    with pytest.raises(ValueError, match="llm.finetune=lora"):
        HFBackend(model="tiny", finetune="full", quantization="4bit")


@pytest.mark.slow
def test_lora_reader_learns_pragmaticqas_target_text(make_config):
    """The LLM reader trains on the paper's target (literal </lit> pragmatic </prag> answer) after its prompt,
    its loss goes down, and evaluation writes with the tuned weights."""
    cfg = make_config(
        [
            "task=pragmaticqa",
            "model=llm",
            "llm.finetune=lora",
            "llm.gradient_checkpointing=true",
            "optimizer.lr=1e-2",
            "trainer.max_epochs=3",
            "trainer.accumulate_grad_batches=2",
            "prompt.max_new_tokens=8",
        ]
    )
    assert cfg.monitor == "val/ppl"  # a tuned reader is selected on dev perplexity, as FiD
    metrics = run(cfg)
    assert {"test/f1_lit", "test/well_formed", "val/ppl", "test/ppl"} <= set(metrics)
    assert 1.0 < metrics["val/ppl"] < float("inf")
    assert best_checkpoint(cfg).with_suffix(".peft").is_dir()


@pytest.mark.slow
def test_lora_training_resumes_from_its_last_checkpoint(make_config):
    first = make_config(["task=circa", *LORA, "trainer.max_epochs=1"])
    run(first)
    last = Path(first.paths.output_dir) / "checkpoints" / "last.ckpt"
    assert last.is_file() and last.with_suffix(".peft").is_dir()
    resumed = make_config(["task=circa", *LORA, "trainer.max_epochs=2", f"ckpt_path={last}"], out="resumed")
    metrics = run(resumed)
    assert "test/acc" in metrics
    state = torch.load(Path(resumed.paths.output_dir) / "checkpoints" / "last.ckpt", weights_only=True)
    assert state["epoch"] == 1 and state["optimizer_states"]  # the second epoch ran on from the first


def test_adapters_start_from_their_own_seed_whatever_ran_before():
    from pragexp.generation.backends.hf import HFBackend

    def adapters(draws: int):
        torch.rand(draws)  # other code using the global generator first
        model = HFBackend(model="tiny", device="cpu", finetune="lora").trainable_model()
        return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    first, second = adapters(1), adapters(1000)
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)
    other = HFBackend(model="tiny", device="cpu", finetune="lora", lora={"seed": 1}).trainable_model()
    assert any(not torch.equal(p, first[n]) for n, p in other.named_parameters() if n in first)


@pytest.mark.slow
def test_lora_trains_with_ddp_over_two_processes(tmp_path):
    """trainer=ddp (gloo on the CPU): the adapters train and every test example counts once."""
    from conftest import TINY_DATA, run_module

    run_dir = tmp_path / "ddp"
    proc = run_module(
        "pragexp.train",
        [
            "task=circa",
            *LORA,
            "llm=tiny",
            "trainer=ddp",
            "trainer.devices=2",
            "trainer.accelerator=cpu",
            "logger=none",
            "callbacks.progress_bar=null",
            *TINY_DATA["circa"],
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    (best,) = (run_dir / "checkpoints").glob("best-*.ckpt")
    weights = checkpoint.read(best).network_weights()
    assert any("lora_B" in k and float(v.abs().sum()) > 0 for k, v in weights.items())
    test_rows = json.loads((run_dir / "data_report.json").read_text())["split_sizes"]["test"]
    assert metrics["test/count"] == test_rows and best.with_suffix(".peft").is_dir()


@pytest.mark.slow
@pytest.mark.parametrize("scoring", ["per_token", "per_byte"])
def test_normalised_scorings_train_as_they_rank(make_config, scoring):
    cfg = make_config(["task=circa", *LORA, "trainer.max_epochs=1", f"prompt.scoring={scoring}"])
    metrics = run(cfg)
    assert metrics["test/count"] > 0
    record = predictions(cfg)[0]
    denominators = record["tokens"] if scoring == "per_token" else record["bytes"]
    assert record["scores"] == pytest.approx(
        [ll / d for ll, d in zip(record["loglik"], denominators, strict=True)], abs=1e-5
    )


def test_fine_tuning_refuses_a_backend_that_is_not_in_process_by_name():
    from pragexp.generation.backends.openai import OpenAIBackend
    from pragexp.models.llm import PromptedLLM
    from pragexp.utils.contracts import ContractError

    prompt = {"templates": [{"name": "t", "input": "{x}", "options": ["a", "b"]}]}
    backend = OpenAIBackend(model="m", base_url="http://127.0.0.1:9", api_key_env=None)
    backend.finetune = "lora"  # as llm.finetune=lora would ask of it
    with pytest.raises(
        ContractError, match=r"llm backend 'openai' lacks .*load.*trainable_model.*use llm=hf"
    ):
        PromptedLLM(backend, prompt)

    class Half:  # scores nothing, writes nothing
        name, finetune = "half", "none"

        def identity(self):
            return {}

    with pytest.raises(
        ContractError, match=r"lacks generate, loglikelihood_many, chat_text \(PromptBackend\)"
    ):
        PromptedLLM(Half(), prompt)


def test_lora_layers_put_adapters_on_the_named_layers_only():
    from pragexp.generation.backends.hf import HFBackend
    from pragexp.generation.finetuning.finetune import lora_settings

    model = HFBackend(model="tiny", device="cpu", finetune="lora", lora={"layers": 1}).trainable_model()
    adapted = {n for n, p in model.named_parameters() if p.requires_grad}
    assert adapted and all(".layers.1." in n for n in adapted)  # the tiny model has layers 0 and 1
    assert lora_settings({"layers": [3, 1]})["layers"] == [1, 3]
    with pytest.raises(ValueError, match="unknown setting"):
        lora_settings({"layer": 1})
