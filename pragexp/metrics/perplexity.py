"""Perplexity of gold targets, exp(total token NLL / total tokens), exact under DDP (see `examples`)."""

from __future__ import annotations

import torch
from torchmetrics import Metric

from pragexp.utils.per_example import first_per_index, gathered


class PerplexityMetric(Metric):
    """`update(index, nll, tokens)` takes each example's summed token NLL (nats) and its token count;
    `compute()` -> {"ppl": exp(sum of NLL / sum of tokens)} over the examples, each dataset index once."""

    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        self.add_state("nll", default=[], dist_reduce_fx="cat")
        self.add_state("tokens", default=[], dist_reduce_fx="cat")

    def update(self, index: torch.Tensor, nll: torch.Tensor, tokens: torch.Tensor) -> None:
        self.indices.append(index.long().reshape(-1))
        self.nll.append(nll.detach().double().reshape(-1))
        self.tokens.append(tokens.double().reshape(-1))

    def compute(self) -> dict[str, torch.Tensor]:
        _, nll, tokens = first_per_index(
            gathered(self.indices, torch.long),
            gathered(self.nll, torch.double),
            gathered(self.tokens, torch.double),
        )
        if tokens.sum() <= 0:
            return {}
        return {"ppl": torch.exp(nll.sum() / tokens.sum()).float()}
