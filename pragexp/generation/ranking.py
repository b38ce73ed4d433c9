"""The one ranking of options' scores, for every task, model and backend: an LLM's log-likelihoods normalised
(`normalized`) or calibrated (`calibrate`); the choice (`choose`, `rank`, `chosen`); whether the true option
is chosen (`right_under`) and the rank it gets (`target_rank`, `reciprocal_rank`). Where the true option ties
with another, each protocol reads the tie by its own rule, and every rule is named in `TIES` with the
protocols that use it and why."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from pragexp.generation.scoring.requests import OptionScore

NORMALIZATIONS = ("sum", "per_token", "per_byte")
# Where the true option ties with the best other one: rule -> what it does, and the protocols that read
# ties so.
TIES = {
    "first": "the first of the tied options is chosen, as numpy's and torch's argmax choose: Hu et al.'s "
    "analysis, lm-evaluation-harness and so LUDWIG's open models (`task.ties=first`, every choice "
    "benchmark's default), and every choice a model makes (`choose`, `rank`, `chosen`)",
    "wrong": "a tie is wrong, the true option must score strictly higher than every other: LUDWIG's code for "
    "API models (`task.ties=wrong`), and GRICE's R@1 and MRR (`target_rank`: a tie counts against the gold, "
    "so that a model scoring every candidate alike ranks it last, not first)",
}
CONTENT_FREE = ("N/A",)  # Zhao et al. 2021 also use "" and "[MASK]"; any list may be passed


def normalized(scores: Sequence[OptionScore], normalization: str = "sum") -> list[float]:
    """Each option's score: `sum` (loglik), `per_token` (loglik / tokens) or `per_byte` (loglik / bytes)."""
    if normalization == "sum":
        return [float(s.loglik) for s in scores]
    if normalization == "per_token":
        if any(s.tokens <= 0 for s in scores):
            raise ValueError("this backend reports no token counts: use prompt.scoring=sum or per_byte")
        return [s.loglik / s.tokens for s in scores]
    if normalization == "per_byte":
        return [s.loglik / max(s.bytes, 1) for s in scores]
    raise ValueError(f"normalization {normalization!r}: choose one of {', '.join(NORMALIZATIONS)}")


def calibrate(scores: Sequence[OptionScore], content_free: Sequence[Sequence[OptionScore]]) -> list[float]:
    """Contextual calibration (Zhao et al. 2021, "Calibrate Before Use", eq. with W = diag(p_cf)^-1, b = 0),
    in log space:

        score(y) = log p(y | x) - log p_cf(y),    p_cf(y) = mean_j softmax_y' log p(y' | cf_j)

    where log p(y | x) is the option's summed log-likelihood under the item's prompt and cf_j are the
    content-free inputs ("N/A", ...) put through the same template, scored for the same options; p_cf is each
    content-free prompt's distribution over the options, averaged over the content-free inputs (Zhao et al.'s
    average). Zhao et al.'s softmax over the item's own options adds the same constant to every option, so it
    is left out: the ranking is theirs. With one content-free input this is, up to that constant, the
    domain-conditional PMI of Holtzman et al. 2021 (log p(y | x) - log p(y | domain premise)).
    """
    if not content_free:
        raise ValueError("calibration needs at least one content-free scoring of the options")
    n = len(scores)
    dists = []
    for cf in content_free:
        if len(cf) != n:
            raise ValueError(f"content-free scores hold {len(cf)} options, the item {n}")
        dists.append(torch.softmax(torch.tensor([s.loglik for s in cf], dtype=torch.float64), 0))
    p_cf = torch.stack(dists).mean(0)
    return [float(s.loglik) - math.log(float(p)) for s, p in zip(scores, p_cf, strict=True)]


def rank(values: Sequence[float]) -> list[int]:
    """Option indices, best first; on a tie the earlier option first (`TIES["first"]`)."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


def choose(values: Sequence[float]) -> int:
    """The best option (the earlier one on a tie: `TIES["first"]`)."""
    return rank(values)[0]


def right_under(scores: torch.Tensor, labels: torch.Tensor, ties: str = "first") -> torch.Tensor:
    """1.0 where the true option (`labels`) is chosen from a row of `scores` under the rule `ties` (`TIES`); a
    row without a finite score (a reply that named no option) is wrong either way."""
    if ties not in TIES:
        raise ValueError(f"ties={ties!r}: choose one of {', '.join(TIES)}")
    rows = torch.arange(len(labels))
    true = scores[rows, labels]
    others = scores.clone()
    others[rows, labels] = float("-inf")
    best_other = others.max(-1).values
    if ties == "wrong":
        return (true > best_other).float()
    first = scores.argmax(-1)  # torch's argmax returns the first maximum, as numpy's does
    return ((first == labels) & torch.isfinite(true)).float()


def chosen(scores: torch.Tensor) -> torch.Tensor:
    """The best option per row (the first on a tie: `TIES["first"]`), or -1 for a row with no finite score (a
    generated reply naming no option)."""
    best = scores.argmax(-1)
    return torch.where(torch.isfinite(scores).any(-1), best, torch.full_like(best, -1))


def target_rank(scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """1-based rank of `target` among `scores` (B, K). Ties count against the gold (`TIES["wrong"]`): a model
    that scores every candidate the same gets rank K, not 1."""
    gold = scores.gather(1, target.unsqueeze(1))
    return (scores >= gold).sum(1)


def reciprocal_rank(scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return 1.0 / target_rank(scores, target).float()
