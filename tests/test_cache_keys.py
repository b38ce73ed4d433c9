"""A cache key holds everything that changes an answer, and nothing else (issue 46.6): for any configuration
of a backend, changing one setting changes the key of a kind of call exactly when that setting can change its
answers. Each setting is listed below with the calls it can change and why; the cache's own settings and a
server's address, timeouts, retries and concurrency change none."""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from openai_server import Script, openai_server

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import OpenAIBackend
from pragexp.generation.cache.cached_backend import CachedBackend, cached
from pragexp.generation.finetuning.finetune import LORA_DEFAULTS
from pragexp.generation.scoring.requests import ChoiceRequest
from pragexp.training.benchmarks import StepBackend

CALLS = ("generate", "loglikelihood_many", "embed")
ALL = frozenset(CALLS)
GENERATE = frozenset(
    {"generate"}
)  # how a raw prompt is put: a scored context or an embedded text goes as it is
NONE = frozenset()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two weight files, and two LoRA folders with a copy of the first at another path."""
    root = tmp_path_factory.mktemp("weights")
    (root / "a.gguf").write_bytes(b"weights a")
    (root / "b.gguf").write_bytes(b"weights b, another model")
    for name, weights in (("lora_a", b"adapter a"), ("lora_b", b"adapter b")):
        (root / name).mkdir()
        (root / name / "adapter_config.json").write_text('{"r": 8, "base_model_name_or_path": "/x"}')
        (root / name / "adapter_model.safetensors").write_bytes(weights)
    shutil.copytree(root / "lora_a", root / "elsewhere" / "lora_a")
    config = root / "elsewhere" / "lora_a" / "adapter_config.json"
    config.write_text('{"r": 8, "base_model_name_or_path": "/another/path/to/the/base"}')
    return root


def hf_settings(files) -> dict[str, tuple[list, frozenset, str]]:
    """Every argument of HFBackend: values to switch between, the calls whose answers it can change, and
    why."""
    return {
        "model": (["tiny", str(files / "a.gguf"), str(files / "b.gguf")], ALL, "the weights"),
        "gguf_file": ([None, "q4.gguf", "q8.gguf"], ALL, "which file of a hub repository holds the weights"),
        "revision": ([None, "main", "0123abc"], ALL, "which commit of the weights"),
        "chat_template": ([True, False], GENERATE, "wraps a raw prompt to generate from"),
        "system_prompt": (
            [None, "Be brief.", "Answer kindly."],
            GENERATE,
            "a system turn before a raw prompt",
        ),
        "chat_template_kwargs": (
            [None, {"enable_thinking": True}],
            GENERATE,
            "what the chat template is called with",
        ),
        "reasoning_markers": (
            [None, ["<reasoning>", "</reasoning>"]],
            GENERATE,
            "which special tokens a decoded reply keeps",
        ),
        "batch_size": (
            [1, 4, 16],
            frozenset({"generate", "embed"}),
            "padding and batch shape change float rounding; the scorer's numbers do not depend on the batch",
        ),
        "device": (["cpu", "cuda"], ALL, "cpu and cuda kernels round differently"),
        "pass_shapes": (  # none of these is a device's default
            [
                None,
                {"tokens": 512, "bucket": 16, "max_rows": 6},
                {"tokens": 2048, "bucket": 8, "max_rows": 64},
                {"tokens": 512, "bucket": 8, "max_rows": 4096, "option_rows": 8, "option_widths": "pow2"},
            ],
            frozenset({"loglikelihood_many"}),
            "the scorer's passes' shapes round differently (issue 55)",
        ),
        "dtype": (["auto", "float32", "bfloat16"], ALL, "the weights' precision"),
        "quantization": ([None, "4bit"], ALL, "the base in NF4 (QLoRA)"),
        "adapter": (
            [None, str(files / "lora_a"), str(files / "lora_b"), str(files / "elsewhere" / "lora_a")],
            ALL,
            "another run's tuned weights on top (by content: a copy elsewhere is the same adapter)",
        ),
        # Training settings: a model that trains is never behind the cache (`cache.cached`), and the benchmark
        # curves key its passes by them and the weights (`StepBackend`, tested below).
        "finetune": (["none", "lora", "full"], NONE, "a training setting: the untrained model answers alike"),
        "lora": ([None, {"r": 4}, {"alpha": 32}], NONE, "a training setting (StepBackend keys it)"),
        "gradient_checkpointing": ([False, True], NONE, "recomputes activations in the backward pass only"),
        "replay": (["auto", True, False], NONE, "whether the cache alone answers, not what it answers"),
    }


def same_adapter(a: str | None, b: str | None) -> bool:
    """Whether two adapter settings are the first LoRA folder and its copy elsewhere."""
    return a is not None and b is not None and Path(a).name == Path(b).name == "lora_a"


class CannedHF(HFBackend):
    """An HFBackend that never loads a model: only its identity is read."""


def backend(kwargs: dict) -> HFBackend | None:
    try:
        return CannedHF(**kwargs)
    except ValueError:  # a combination HFBackend refuses (quantization without LoRA, an adapter while tuning)
        return None


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_hf_key_changes_exactly_when_the_setting_can_change_that_calls_answers(files, data):
    table = hf_settings(files)
    base = {name: data.draw(st.sampled_from(values), label=name) for name, (values, _, _) in table.items()}
    name = data.draw(st.sampled_from(sorted(table)), label="changed")
    values, changes, _ = table[name]
    other = data.draw(st.sampled_from([v for v in values if v != base[name]]), label="to")
    before, after = backend(base), backend({**base, name: other})
    assume(before is not None and after is not None)
    if name == "adapter" and same_adapter(base[name], other):
        changes = NONE  # the same adapter's files at another path
    for call in CALLS:
        changed = before.key_identity(call) != after.key_identity(call)
        assert changed == (call in changes), (name, base[name], other, call)


def test_the_cache_folder_and_use_cache_are_not_in_the_key(tmp_path):
    hf = CannedHF(model="tiny")
    keys = {
        CachedBackend(hf, tmp_path / folder / "responses.sqlite")._key("loglikelihood_many", ["ctx", "a"], {})
        for folder in ("one", "two")
    }
    assert len(keys) == 1
    assert cached(hf, tmp_path, use_cache=False) is hf  # use_cache=false: no key at all


def test_settings_left_out_of_a_score_key_leave_the_scores_bit_for_bit():
    """What the table says cannot change a score does not, on the tiny model: batch size, the chat template,
    the system prompt, the template's arguments, gradient checkpointing, a fine-tuning setting before
    training."""
    requests = [
        ChoiceRequest("Q: Is it raining?\nA: I took an umbrella.\nLabel:", ("yes", "no", "in the middle"))
    ]

    def scores(**kwargs) -> list[float]:
        return [
            s.loglik for s in HFBackend(model="tiny", device="cpu", **kwargs).loglikelihood_many(requests)[0]
        ]

    plain = scores()
    for kwargs in (
        {"batch_size": 1},
        {"chat_template": False},
        {"system_prompt": "Be brief."},
        {"chat_template_kwargs": {"enable_thinking": True}},
        {"gradient_checkpointing": True},
        {"finetune": "lora", "lora": {"r": 4}},
    ):
        assert scores(**kwargs) == plain, kwargs


def tuned_step(**lora) -> StepBackend:
    step = StepBackend(CannedHF(model="tiny", finetune="lora", lora=lora or None))
    step.weights = "the same adapters"  # as the digest names them: what the settings below add to
    return step


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(LORA_DEFAULTS)), data=st.data())
def test_the_benchmark_curves_key_holds_the_lora_settings_that_change_tuned_answers(name, data):
    """Given the adapters' weights (their digest), r, alpha, the target modules and the layers change the
    answers (the scale is alpha / r; the others say where the adapters sit); dropout is off in evaluation and
    the seed's effect is in the weights."""
    values = {
        "r": [4, 8, 16],
        "alpha": [8, 16, 32],
        "dropout": [0.0, 0.05, 0.1],
        "target_modules": [None, ["q_proj"], ["q_proj", "v_proj"]],
        "seed": [0, 1, 2],
        "layers": [None, [0], [0, 1]],
    }[name]
    a, b = data.draw(st.lists(st.sampled_from(values), min_size=2, max_size=2, unique_by=repr))
    changes = name in ("r", "alpha", "target_modules", "layers")
    for call in CALLS:
        assert (
            tuned_step(**{name: a}).key_identity(call) != tuned_step(**{name: b}).key_identity(call)
        ) == changes


def test_qlora_and_lora_of_one_base_at_step_0_have_different_keys():
    """The same adapters at step 0 (one seed) on a 4-bit and a full-precision base answer differently."""
    lora = CannedHF(model="tiny", finetune="lora")
    qlora = CannedHF(model="tiny", finetune="lora", quantization="4bit")
    model = lora.trainable_model()
    qlora.trainable_model = lambda: (
        model
    )  # the 4-bit base needs CUDA and bitsandbytes; the adapters start alike
    steps = [StepBackend(lora), StepBackend(qlora)]
    for step in steps:
        step.settle(0)
    assert steps[0].weights == steps[1].weights
    for call in CALLS:
        assert steps[0].key_identity(call) != steps[1].key_identity(call)
    assert steps[1].identity()["quantization"]["bnb_4bit_quant_type"] == "nf4"


def test_a_full_finetune_names_each_step_of_each_fit_apart():
    step = StepBackend(CannedHF(model="tiny", finetune="full"))
    step.settle(0)
    first = step.key_identity("loglikelihood_many")
    step.settle(0)
    assert step.key_identity("loglikelihood_many") == first  # one step of one fit: one state
    step.settle(1)
    assert step.key_identity("loglikelihood_many") != first
    step.new_fit()  # resumed: its step 0 may be other weights than the earlier fit's
    step.settle(0)
    assert step.key_identity("loglikelihood_many") != first


OPENAI_SETTINGS = {
    # setting: (values, the calls whose answers it can change)
    "model": (["m", "other-model"], ALL),
    "revision": ([None, "v2"], ALL),
    "chat": ([True, False], GENERATE),
    "system_prompt": ([None, "Be brief."], GENERATE),
    "chat_template_kwargs": ([None, {"enable_thinking": True}], GENERATE),
    # a server's address: the same model on another port (the second server) answers alike
    "base_url": (["server 0", "server 1"], NONE),
    "api_key_env": ([None, "SOME_KEY"], NONE),
    "timeout": ([60.0, 5.0], NONE),
    "max_retries": ([5, 0], NONE),
    "backoff": ([1.0, 0.01], NONE),
    "concurrency": ([8, 1], NONE),
    "fingerprints": (["folder 0", "folder 1"], NONE),  # where probes are kept, not what they say
    "replay": (["auto", False], NONE),  # whether the cache alone answers (true: not the server's identity)
}


@pytest.fixture(scope="module")
def two_servers():
    with openai_server(Script()) as first, openai_server(Script()) as second:
        yield [first, second]


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_openai_key_changes_exactly_when_the_setting_can_change_that_calls_answers(
    two_servers, tmp_path, data
):
    base = {
        name: data.draw(st.sampled_from(values), label=name) for name, (values, _) in OPENAI_SETTINGS.items()
    }
    name = data.draw(st.sampled_from(sorted(OPENAI_SETTINGS)), label="changed")
    values, changes = OPENAI_SETTINGS[name]
    other = next(v for v in values if v != base[name])

    def make(kwargs: dict) -> OpenAIBackend:
        url = two_servers[int(kwargs["base_url"].split()[1])]
        folder = tmp_path / kwargs["fingerprints"].replace(" ", "")
        return OpenAIBackend(**{**kwargs, "base_url": url, "fingerprints": str(folder)})

    before, after = make(base), make({**base, name: other})
    for call in CALLS:
        assert (before.key_identity(call) != after.key_identity(call)) == (call in changes), (name, call)


VLLM_SETTINGS = {
    "model": (["m", "other-model"], ALL),
    "revision": ([None, "v2"], ALL),
    "dtype": (["auto", "bfloat16", "float16"], ALL),
    "chat_template": ([True, False], GENERATE),
    "system_prompt": ([None, "Be brief."], GENERATE),
    "chat_template_kwargs": ([None, {"enable_thinking": True}], GENERATE),
    "reasoning_markers": (
        [None, ["<reasoning>", "</reasoning>"]],
        GENERATE,
    ),  # the special tokens a reply keeps
    # how vLLM splits and schedules the work: float rounding only, as a server's batching (not
    # bit-reproducible)
    "tensor_parallel_size": ([1, 2], NONE),
    "gpu_memory_utilization": ([0.9, 0.5], NONE),
    "max_model_len": ([None, 4096], NONE),  # a longer prompt is refused, never answered otherwise
    "replay": (["auto", True, False], NONE),  # whether the cache alone answers, not what it answers
}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_vllm_key_names_its_model_and_changes_exactly_when_the_setting_can_change_answers(data):
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))  # constructed, never run
        from pragexp.generation.backends.vllm import VLLMBackend

        base = {
            name: data.draw(st.sampled_from(values), label=name)
            for name, (values, _) in VLLM_SETTINGS.items()
        }
        name = data.draw(st.sampled_from(sorted(VLLM_SETTINGS)), label="changed")
        values, changes = VLLM_SETTINGS[name]
        other = next(v for v in values if v != base[name])
        before, after = VLLMBackend(**base), VLLMBackend(**{**base, name: other})
        for call in CALLS:
            assert (before.key_identity(call) != after.key_identity(call)) == (call in changes), (name, call)


def test_every_setting_of_each_backend_is_in_its_table(files):
    """A new argument or config key must be classified above (does it change answers, of which calls?)."""
    import inspect

    from pragexp import CONFIG_DIR
    from pragexp.utils.io import load_yaml

    def arguments(cls) -> set[str]:
        return set(inspect.signature(cls.__init__).parameters) - {"self"}

    assert arguments(HFBackend) == set(hf_settings(files))
    assert arguments(OpenAIBackend) == set(OPENAI_SETTINGS)
    for name, table in (("hf", hf_settings(files)), ("openai", OPENAI_SETTINGS), ("vllm", VLLM_SETTINGS)):
        config = load_yaml(Path(CONFIG_DIR) / "llm" / f"{name}.yaml", {})
        assert set(config) - {"_target_", "defaults"} <= set(table), name
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
        from pragexp.generation.backends.vllm import VLLMBackend

        assert arguments(VLLMBackend) == set(VLLM_SETTINGS)
