"""What a model choosing among each item's options scored per example (`ChoiceScores`, as `LLMChoiceTask`
computes it), and the one hook that adds a mean to every LLM choice task (`CHOICE_FIGURES`).

A figure here is a per-example number of the batch and the scores; `ChoiceMetric` reports each as a mean
overall (`<name>`) and per group (`<name>/<group>`), each with its standard error and interval clustered by
the data's sampling unit (`<name>_stderr`, `<name>_n`, ...: `pragexp.metrics.uncertainty`). An example whose
figure is NaN has none and is left out of its means. Adding a metric to every LLM choice task is one entry in
`CHOICE_FIGURES`: metrics.json gains its keys; a report table shows it only where a task's config declares it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from pragexp.batches.types import PromptBatch


@dataclass
class ChoiceScores:
    """Per example of a `PromptBatch`, what the model's option scores gave."""

    correct: torch.Tensor  # (examples,) 1.0 where the true option won under the protocol's tie rule
    p_true: torch.Tensor  # (examples,) the true option's probability (`probs` at the label)
    probs: (
        torch.Tensor
    )  # (examples, options): the option scores' softmax over the item's options (padding: 0);
    # a row without any finite score (a generated reply naming no option) is all zeros
    predicted: torch.Tensor  # (examples,) long: the position of the option chosen, -1 for none
    kind: torch.Tensor  # (examples,) long: the chosen option's kind id (the batch's `kinds`), -1 for none
    corr: torch.Tensor  # (examples,) Pearson's r of `probs` with the batch's `reference`, NaN: none

    def to(self, device) -> ChoiceScores:
        return ChoiceScores(**{name: value.to(device) for name, value in vars(self).items()})


@dataclass(frozen=True)
class ChoiceFigure:
    """A per-example figure every LLM choice task reports as a mean (see the module's docstring)."""

    name: str  # its metric key
    per_example: Callable[[PromptBatch, ChoiceScores], torch.Tensor]  # (examples,) float; NaN: none


def brier(batch: PromptBatch, scores: ChoiceScores) -> torch.Tensor:
    """The multi-class Brier score of the option probabilities (Brier 1950), per example: the sum over the
    item's options of (p_option - 1[option is the gold one])^2, from 0 (certain and right) to 2 (certain and
    wrong); its mean over the examples is `brier` (lower is better).

    p is `ChoiceScores.probs`, the softmax of the option scores over the item's options, the probabilities
    `p_true` and the calibration read: a padding option has p = 0 and is never gold, so it adds nothing; tied
    options share their probability, so no tie rule enters. A generated reply that named an option scores it 0
    and the others -inf, so p is 1 on it (a Brier score of 0 or 2); a row without any finite score (a reply
    naming no option) has no probabilities and no Brier score (NaN: left out of the mean and its interval),
    where pragexp chooses."""
    probs = scores.probs.double()
    gold = torch.zeros_like(probs)
    gold[torch.arange(len(probs)), batch["label"].long().to(probs.device)] = 1.0
    per_example = ((probs - gold) ** 2).sum(-1)
    answered = probs.sum(-1) > 0  # `option_probabilities` leaves a row without a finite score all zeros
    return torch.where(answered, per_example, torch.full_like(per_example, math.nan))


def plain_choice_figures(
    rows: PromptBatch, probs: torch.Tensor, predicted: torch.Tensor, chosen: Sequence[ChoiceFigure]
) -> dict[str, torch.Tensor]:
    """Each figure of `chosen` per example of a choice whose options have no kinds and no people's shares (a
    classifier's labels, one option order of intentions_mc): `probs` (examples, options) the option scores'
    softmax (`ChoiceScores.probs`), `predicted` the position chosen (-1: none), the gold one
    `rows["label"]`."""
    probs, predicted = probs.cpu(), predicted.cpu().long()
    label = rows["label"].cpu().long()
    p_true = probs[torch.arange(len(label)), label]
    scores = ChoiceScores(
        correct=(predicted == label).float(),
        p_true=p_true,
        probs=probs,
        predicted=predicted,
        kind=torch.full_like(predicted, -1),
        corr=torch.full_like(p_true, math.nan),
    )
    return {figure.name: figure.per_example(rows, scores) for figure in chosen}


CHOICE_FIGURES: tuple[ChoiceFigure, ...] = (ChoiceFigure("brier", brier),)


def figures(chosen: Sequence[ChoiceFigure] | None = None) -> tuple[ChoiceFigure, ...]:
    """The figures a metric or task computes: `chosen`, or (None) those of `CHOICE_FIGURES` when it is built,
    read then, not when its module was imported."""
    return tuple(CHOICE_FIGURES if chosen is None else chosen)
