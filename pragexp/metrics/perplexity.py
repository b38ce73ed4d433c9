"""Perplexity of gold targets, exp(total token NLL / total tokens), exact under DDP (see `examples`), with its
uncertainty over the sampling units."""

from __future__ import annotations

import numpy as np
import torch
from torchmetrics import Metric

from pragexp.batches.types import Rows
from pragexp.metrics.intervals import exp_ratio_interval
from pragexp.utils.per_example import first_per_index, gathered


class PerplexityMetric(Metric):
    """`update(rows, nll, tokens)` takes a batch (`pragexp.batches.types.Rows`: the examples' dataset indices
    and sampling units; rows of one unit share it: the questions of one conversation), each example's summed
    token NLL (nats) and its token count; `compute()` -> {"ppl": exp(sum of NLL / sum of tokens)} over the
    examples, each dataset index once.

    NLL per token is a ratio of two sums, so its standard error is the ratio estimator's, clustered by unit
    (the CR2 error and Bell–McCaffrey degrees of freedom of pragexp.metrics.intervals, tokens as the rows'
    weights); the 95% interval is exp of log-perplexity's (log ppl ± t·SE: above 0, skewed as perplexity is),
    the standard error exp(log ppl) times log-perplexity's (the delta method): `ppl_stderr`, `ppl_ci95_low`,
    `ppl_ci95_high`, `ppl_n` (units), `ppl_rows` (examples); none under two units."""

    full_state_update = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for name in ("indices", "nll", "tokens", "clusters"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, rows: Rows, nll: torch.Tensor, tokens: torch.Tensor) -> None:
        index = rows["index"]
        self.indices.append(index.long().reshape(-1))
        self.nll.append(nll.detach().double().reshape(-1))
        self.tokens.append(tokens.double().reshape(-1))
        self.clusters.append(rows["cluster"].long().reshape(-1).to(index.device))

    def compute(self) -> dict[str, torch.Tensor]:
        _, nll, tokens, clusters = first_per_index(
            gathered(self.indices, torch.long),
            gathered(self.nll, torch.double),
            gathered(self.tokens, torch.double),
            gathered(self.clusters, torch.long),
        )
        if tokens.sum() <= 0:
            return {}
        out = {"ppl": torch.exp(nll.sum() / tokens.sum()).float()}
        units, unit_of = np.unique(clusters.cpu().numpy(), return_inverse=True)
        sizes = np.bincount(unit_of.reshape(-1), weights=tokens.cpu().numpy(), minlength=len(units))
        totals = np.bincount(unit_of.reshape(-1), weights=nll.cpu().numpy(), minlength=len(units))
        figures = {"ppl_n": float(len(units)), "ppl_rows": float(len(tokens))}
        if np.sum(sizes > 0) >= 2:  # a unit without tokens weighs nothing
            interval = exp_ratio_interval(totals[sizes > 0], sizes[sizes > 0])
            figures.update(ppl_stderr=interval.stderr, ppl_ci95_low=interval.low, ppl_ci95_high=interval.high)
        return {**out, **{key: torch.tensor(float(value)) for key, value in figures.items()}}
