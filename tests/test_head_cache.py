"""The scorer's kept heads (pragexp/generation/scoring/head_cache.py) are never stale (issue 46.7): after each
way weights can change in place or be swapped, a backend that kept heads scores bit for bit as a fresh backend
on the same model does, and its kept heads are not served for the changed weights."""

from __future__ import annotations

import pytest
import torch
from test_scorer_shapes import logliks, ludwig_like

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.scoring.head_cache import pins, weights_stamp
from pragexp.pretrained.causal import tiny_causal_lm

peft = pytest.importorskip("peft")


def backend_on(model, tokenizer) -> HFBackend:
    """A backend scoring `model` itself (not the process's kept tiny model, which other tests share)."""
    backend = HFBackend(model="tiny", device="cpu", batch_size=4)
    backend._model, backend._tokenizer = model, tokenizer
    return backend


def warmed(model, tokenizer) -> HFBackend:
    """A backend that has kept the requests' head and served it once."""
    backend = backend_on(model, tokenizer)
    reqs = ludwig_like()
    backend.loglikelihood_many(reqs[:2])
    backend.loglikelihood_many(reqs[2:4])
    assert backend._heads.hits == 1
    return backend


def scored_after(backend: HFBackend, change) -> list:
    """The last requests' scores after `change()`: as a fresh backend's on the same model, bit for bit, and
    the kept head not served."""
    reqs = ludwig_like()[4:]
    hits = backend._heads.hits
    change()
    model, tokenizer = backend._model, backend._tokenizer
    after = logliks(backend.loglikelihood_many(reqs))
    assert backend._heads.hits == hits  # the head ran again
    assert after == logliks(backend_on(model, tokenizer).loglikelihood_many(reqs))
    again = logliks(backend.loglikelihood_many(reqs))  # and is kept for the changed weights
    assert again == after and backend._heads.hits == hits + 1
    return after


def plain_scores() -> list:
    model, tokenizer = tiny_causal_lm()
    return logliks(backend_on(model.eval(), tokenizer).loglikelihood_many(ludwig_like()[4:]))


def test_load_state_dict_with_assign_swaps_in_new_tensors():
    model, tokenizer = tiny_causal_lm()
    backend = warmed(model.eval(), tokenizer)
    other = tiny_causal_lm(seed=1)[0].state_dict()
    after = scored_after(backend, lambda: model.load_state_dict(other, assign=True))
    assert after != plain_scores()


def test_assigning_param_data_swaps_a_storage_without_bumping_its_version():
    model, tokenizer = tiny_causal_lm()
    backend = warmed(model.eval(), tokenizer)
    weight = model.model.layers[0].self_attn.q_proj.weight
    version = weight._version

    def assign():
        weight.data = weight.data * 1.5

    after = scored_after(backend, assign)
    assert weight._version == version and after != plain_scores()


def test_a_dtype_round_trip_is_new_weights_even_at_the_same_addresses():
    """float32 -> bfloat16 -> float32 between two calls rounds every weight; the allocator may give the new
    float32 tensors the old ones' memory, with the same version counters: the pinned storages tell them
    apart."""
    model, tokenizer = tiny_causal_lm()
    backend = warmed(model.eval(), tokenizer)
    after = scored_after(backend, lambda: model.to(torch.bfloat16).to(torch.float32))
    assert after != plain_scores()
    scored_after(backend, lambda: model.to(torch.bfloat16))  # and the bfloat16 model itself


def lora(model, name: str = "default", seed: int = 0):
    """`model` under peft with a LoRA adapter whose weights are random (peft's default start is a no-op)."""
    config = peft.LoraConfig(r=4, lora_alpha=8, init_lora_weights=False, target_modules=["q_proj", "v_proj"])
    torch.manual_seed(seed)
    if isinstance(model, peft.PeftModel):
        model.add_adapter(name, config)
        return model
    return peft.get_peft_model(model, config, adapter_name=name).eval()


def test_set_adapter_switches_between_two_adapters():
    model, tokenizer = tiny_causal_lm()
    tuned = lora(lora(model, "first", seed=1), "second", seed=2)
    tuned.set_adapter("first")
    backend = warmed(tuned.eval(), tokenizer)
    second = scored_after(backend, lambda: tuned.set_adapter("second"))
    first = scored_after(backend, lambda: tuned.set_adapter("first"))
    assert first != second != plain_scores()


def test_disable_adapter_is_the_base_model_and_enabling_it_again_the_adapter():
    model, tokenizer = tiny_causal_lm()
    tuned = lora(model)
    backend = warmed(tuned, tokenizer)
    with tuned.disable_adapter():
        base = scored_after(backend, lambda: None)  # the context already turned the adapters off
    adapted = scored_after(backend, lambda: None)
    assert base == plain_scores() != adapted


def test_merging_the_adapter_into_the_weights_and_unloading_it():
    """peft merges through `param.data` (no version counter moves): its merged-adapter record is stamped."""
    model, tokenizer = tiny_causal_lm()
    tuned = lora(model)
    backend = warmed(tuned, tokenizer)
    weight = model.model.layers[0].self_attn.q_proj.weight
    version = weight._version
    scored_after(backend, tuned.merge_adapter)
    assert weight._version == version  # what the version counters alone would have missed
    scored_after(backend, tuned.unmerge_adapter)

    def unload():
        backend._model = tuned.merge_and_unload().eval()

    unloaded = scored_after(backend, unload)
    assert unloaded != plain_scores()


def test_training_mode_anywhere_keeps_nothing():
    model, tokenizer = tiny_causal_lm()
    backend = warmed(model.eval(), tokenizer)
    model.model.layers[1].mlp.train()  # one submodule with dropout on
    assert weights_stamp(model) is None
    backend.loglikelihood_many(ludwig_like()[:2])
    backend.loglikelihood_many(ludwig_like()[:2])
    assert backend._heads.hits == 1


def test_clear_forgets_for_code_that_writes_through_param_data():
    model, tokenizer = tiny_causal_lm()
    backend = warmed(model.eval(), tokenizer)
    stamp = weights_stamp(model)
    model.lm_head.weight.data.mul_(2.0)  # torch counts no version for this view: no stamp sees it
    assert weights_stamp(model) == stamp
    scored_after(backend, backend._heads.clear)


def test_pins_keep_a_swapped_out_storage_from_being_mistaken_for_a_new_one():
    model, _ = tiny_causal_lm()
    stamp, held = weights_stamp(model.eval()), pins(model)
    model.to(torch.bfloat16).to(torch.float32)
    assert weights_stamp(model) != stamp and all(pin.expired() for pin in held)
