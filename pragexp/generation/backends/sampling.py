"""Sampling in which every draw has its own random stream: a reply does not depend on the prompts batched with
it, the batch size or which prompts a cache already held."""

from __future__ import annotations

import torch


def sample_rows(
    logits: torch.Tensor, temperature: float, top_p: float, generators: list[torch.Generator]
) -> torch.Tensor:
    """One token per row, row i drawn with `generators[i]` alone: (b, vocab) logits -> (b,) token ids.

    Inverse-CDF sampling in float64 over the token ids in vocabulary order, one uniform number per row and
    step: a row's draw depends on its own logits and its own stream, never on the other rows. The
    generators live on the CPU, so a draw takes the same numbers on a CPU and on a GPU."""
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    if top_p < 1.0:  # nucleus: the most likely tokens whose mass before them is below top_p
        ranked, order = probs.sort(dim=-1, descending=True, stable=True)
        keep = (ranked.cumsum(-1) - ranked) < top_p
        probs = probs * torch.zeros_like(keep).scatter(-1, order, keep)
    cdf = probs.cumsum(-1)
    uniform = torch.stack([torch.rand((), generator=g, dtype=torch.float64) for g in generators])
    targets = (uniform.to(cdf.device) * cdf[:, -1]).unsqueeze(1)  # the total may differ from 1 by rounding
    return torch.searchsorted(cdf, targets, right=True).squeeze(1).clamp(max=logits.shape[-1] - 1)


class RowSampler:
    """A logits processor that samples: each row of the batch from its own seeded stream (`sample_rows`),
    returning scores that are 0 for the drawn token and -inf elsewhere, so that transformers' greedy loop
    (KV cache, padding, end-of-text handling) picks exactly that token.

    Why not `do_sample=True`: transformers draws every row of a batch from the one global generator, so a
    reply would depend on its batch-mates, the batch size and which prompts the cache already had. Why not
    one prompt at a time: batching is 4-5x faster on CPU (bench/bench_generation.py), far more on a GPU.
    The processors transformers adds from the generation config (e.g. a repetition penalty) run first; the
    temperature and nucleus are applied here."""

    def __init__(self, seeds: list[int], temperature: float, top_p: float = 1.0):
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]
        self.temperature, self.top_p = float(temperature), float(top_p)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        tokens = sample_rows(scores, self.temperature, self.top_p, self.generators)
        return torch.full_like(scores, float("-inf")).scatter_(1, tokens.unsqueeze(1), 0.0)
