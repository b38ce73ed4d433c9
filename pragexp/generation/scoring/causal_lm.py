"""A transformers causal LM as the scorer calls it (`generation.scoring.scorer`): log-probabilities at chosen
positions only, the KV cache as plain (keys, values) per layer, and the DynamicCache of any transformers
version."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import torch


class CausalLM:
    """The model and its tokenizer; `forward` returns log-probabilities (at chosen positions only, where the
    model can skip the rest of the output layer, its costliest part for short continuations) and the KV
    cache."""

    def __init__(self, model, tokenizer, on_call: Callable | None):
        self.model, self.tokenizer, self.on_call = model, tokenizer, on_call
        self.device = model.device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        base = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft wraps the model
        self.cache_name, self.keeps_logits = forward_names(model)
        checkpointing = getattr(model, "is_activation_checkpointing", None)  # transformers >= 5 names it so
        if checkpointing is None:
            checkpointing = getattr(model, "is_gradient_checkpointing", False)
        self.whole_sequences = bool(checkpointing) and model.training
        self.packing_key = (
            type(base).__name__,
            getattr(base.config, "_attn_implementation", None),
            base.dtype,
        )

    def forward(self, ids, mask, positions, layers=None, keep=None):
        extra = {}
        if self.keeps_logits and keep is not None:
            extra["logits_to_keep"] = keep.to(self.device) if torch.is_tensor(keep) else keep
        if layers:
            extra[self.cache_name] = dynamic_cache(layers, self.model.config)
        out = self.model(
            input_ids=ids.to(self.device),
            attention_mask=mask.to(self.device),
            position_ids=positions.to(self.device),
            use_cache=not self.whole_sequences,
            **extra,
        )
        if self.on_call:
            self.on_call()
        logp = torch.log_softmax(out.logits.float(), dim=-1)
        return logp, (None if self.whole_sequences else cache_layers(out[self.cache_name]))

    def prefix_cache(self, prefix: tuple[int, ...]) -> list:
        """The KV cache of `prefix` run alone ([] for an empty one)."""
        if not prefix:
            return []
        ids = torch.tensor([prefix], dtype=torch.long)
        _, cache = self.forward(ids, torch.ones_like(ids), torch.arange(len(prefix)).unsqueeze(0), keep=1)
        return cache

    def additive_mask(self, allowed: torch.Tensor) -> torch.Tensor:
        """A boolean (b, q, kv) attention pattern as the 4D additive mask transformers takes as it is."""
        dtype = self.model.dtype if self.model.dtype.is_floating_point else torch.float32
        blocked = torch.zeros(allowed.shape, dtype=dtype).masked_fill(~allowed, torch.finfo(dtype).min)
        return blocked.unsqueeze(1)


def forward_names(model) -> tuple[str, bool]:
    """(the name the model's forward takes its KV cache by, whether it takes `logits_to_keep`)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft wraps the model
    parameters = inspect.signature(base.forward).parameters
    cache = "cache" if "cache" in parameters else "past_key_values"  # transformers >= 5.2x: cache
    return cache, "logits_to_keep" in parameters


def cache_layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The (keys, values) of each layer of a transformers DynamicCache."""
    if hasattr(cache, "layers"):  # transformers >= 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):
        return list(zip(cache.key_cache, cache.value_cache, strict=True))
    return [(k, v) for k, v, *_ in cache]


def dynamic_cache(layers: list[tuple[torch.Tensor, torch.Tensor]], config):
    """A fresh DynamicCache holding `layers` (the model's forward appends to it in place)."""
    from transformers import DynamicCache

    try:
        return DynamicCache(ddp_cache_data=layers, config=config)
    except TypeError:  # transformers < 4.56
        return DynamicCache.from_legacy_cache(tuple(layers))
