"""Request heads' KV caches kept from one scorer call to the next (`scorer.score_choices`).

A run scores its test set in batches, one call each, and a head (the system turn, instructions and shared
demonstrations every item's prompt starts with) is the same in every batch: computed once, it serves them all.
A head's cache is a function of the head's tokens and the model's weights only (it runs alone, in a pass of its
own shape: `fixed_passes`), so reusing it gives the numbers a fresh pass would, bit for bit.

It is kept while the weights cannot have changed: the same module, in eval mode (dropout off), and every
parameter's version counter (torch bumps it on each in-place update: an optimizer step, a weight copied in)
where it was. Anything else empties it. At most `MAX_BYTES` are kept, the least recently used dropped first.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import torch

from pragexp.generation.causal_lm import CausalLM

MAX_BYTES = 1 << 30  # a 2,000-token head of SmolLM2 is ~90 MB in float32; of a 7B model in bf16, ~270 MB


class HeadCache:
    """head token ids -> its KV cache, for one backend's model."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple[int, ...], list] = OrderedDict()
        self._model = None  # a weak reference to the module the kept caches came from
        self._stamp: tuple | None = None
        self.hits = 0  # heads served without a forward pass (the tests read it)

    def prefix(self, lm: CausalLM, head: tuple[int, ...]) -> list:
        """The KV cache of `head` run alone: the kept one when the weights are as they were."""
        stamp = weights_stamp(lm.model)
        same_model = self._model is not None and self._model() is lm.model
        if stamp is None or not same_model or stamp != self._stamp:
            self._kept.clear()
            self._model, self._stamp = weakref.ref(lm.model), stamp
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


def weights_stamp(model) -> tuple | None:
    """What changes when the model's weights may have: None in training mode (never kept then)."""
    if model.training:
        return None
    # a tensor made in inference mode has no version counter, and autograd (so an optimizer) cannot update it
    return tuple(p._version for p in model.parameters() if not p.is_inference())


def _bytes(cache: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
    return sum(t.numel() * t.element_size() for layer in cache for t in layer)
