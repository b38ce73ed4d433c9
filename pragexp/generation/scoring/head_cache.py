"""Request heads' KV caches kept from one scorer call to the next (`scorer.score_choices`).

A run scores its test set in batches, one call each, and a head (the system turn, instructions and shared
demonstrations every item's prompt starts with) is the same in every batch: computed once, it serves them all.
A head's cache is a function of the head's tokens and the model's weights only (it runs alone, in a pass of
its own shape: `passes`), so reusing it gives the numbers a fresh pass would, bit for bit.

It is kept while the weights cannot have changed (`weights_stamp`): the same module, every submodule in eval
mode (dropout off), and each parameter where it was: the same storage, at the same address, of the same dtype,
device, shape and strides, its version counter where it was (torch bumps it on each in-place update through
autograd's view of the tensor: an optimizer step, `load_state_dict`'s copy), and, under peft, the same active
adapters, merged adapters, scales and adapters on or off. Anything else empties it. The storages stamped are
held by weak references (`Pins`): while held, no new storage can take one's place at the same address, so
weights swapped and swapped back (`model.to(torch.bfloat16).to(torch.float32)`: the allocator may hand the
same memory out again) are seen as new. What no stamp can see is a write through `param.data`
(`param.data.add_(...)`): torch gives that view a version counter of its own. peft's merges write so, and are
seen by their merged-adapter record; code that writes weights so itself must call `HeadCache.clear()`. At most
`MAX_BYTES` are kept, the least recently used dropped first.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from pragexp.generation.scoring.causal_lm import CausalLM

MAX_BYTES = 1 << 30  # a 2,000-token head of SmolLM2 is ~90 MB in float32; of a 7B model in bf16, ~270 MB


class HeadCache:
    """head token ids -> its KV cache, for one backend's model."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple[int, ...], list] = OrderedDict()
        self._model = None  # a weak reference to the module the kept caches came from
        self._stamp: tuple | None = None
        self._pins: list[StorageWeakRef] = []
        self.hits = 0  # heads served without a forward pass (the tests read it)

    def clear(self) -> None:
        """Forget every kept head (for code that writes weights through `param.data`)."""
        self._kept.clear()
        self._model, self._stamp, self._pins = None, None, []

    def prefix(self, lm: CausalLM, head: tuple[int, ...]) -> list:
        """The KV cache of `head` run alone: the kept one when the weights are as they were."""
        stamp = weights_stamp(lm.model)
        same_model = self._model is not None and self._model() is lm.model
        if stamp is None or not same_model or stamp != self._stamp:
            self.clear()
            self._model, self._stamp = weakref.ref(lm.model), stamp
            self._pins = pins(lm.model) if stamp is not None else []
        elif head in self._kept:
            self._kept.move_to_end(head)
            self.hits += 1
            return self._kept[head]
        cache = lm.prefix_cache(head)
        if stamp is not None and head and _bytes(cache) <= self.max_bytes:
            self._kept[head] = cache
            while sum(_bytes(c) for c in self._kept.values()) > self.max_bytes:
                self._kept.popitem(last=False)
        return cache


def weights_stamp(model: torch.nn.Module) -> tuple | None:
    """What changes when the model's weights may have (module docstring); None while any submodule trains
    (dropout: nothing is kept then). Hold `pins(model)` while the stamp is kept, so that a storage it names
    cannot be replaced by a new one at the same address."""
    if any(m.training for m in model.modules()):
        return None
    return tuple(_tensor_stamp(p) for p in model.parameters()), adapter_state(model)


def pins(model: torch.nn.Module) -> list[StorageWeakRef]:
    """Weak references to the storages of the model's parameters: they keep each storage's record (not its
    data) alive, so its address is not reused while they are held."""
    return [StorageWeakRef(p.untyped_storage()) for p in model.parameters()]


def adapter_state(model: torch.nn.Module) -> tuple:
    """peft's per-layer state that changes the answers without touching a parameter: the active adapters,
    those merged into the base weights, the adapters' scales, and whether adapters are on
    (`disable_adapter`)."""
    state = []
    for module in model.modules():
        if hasattr(module, "merged_adapters") and hasattr(module, "active_adapters"):
            scaling = getattr(module, "scaling", None) or {}
            state.append(
                (
                    tuple(module.active_adapters),
                    tuple(module.merged_adapters),
                    bool(module.disable_adapters),
                    tuple(sorted(scaling.items())),
                )
            )
    return tuple(state)


def _tensor_stamp(p: torch.Tensor) -> tuple:
    # a tensor made in inference mode has no version counter (and autograd, so an optimizer, cannot update it)
    version = None if p.is_inference() else p._version
    storage = p.untyped_storage()
    return storage._cdata, p.data_ptr(), version, p.dtype, p.device, tuple(p.shape), p.stride()


def _bytes(cache: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
    return sum(t.numel() * t.element_size() for layer in cache for t in layer)
