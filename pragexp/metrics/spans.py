"""Span overlap scores of PragmatiCQA (Qi et al. 2023), per example, as fractions (the paper prints %).

Texts are compared as bags of tokens after SQuAD's normalisation: lower case, punctuation removed, the
articles a/an/the removed, split on white space. A list of spans is the bag of all its spans' tokens.

- `f1_lit(pred_lit, gold_lit)`: token F1 of the predicted literal spans against the gold literal spans.
  Empty bags follow SQuAD: both empty scores 1 (nothing to find, nothing found), exactly one empty 0. The
  paper says nothing of this case for F1_lit; it hardly arises (a gold literal answer is almost never empty).
- `f1_prag(pred_prag, gold_prag, gold_lit)` = F1(pred_prag - gold_lit, gold_prag - gold_lit) (the paper's
  eq. 2), where `B - A` cuts every occurrence of each of A's spans (as a run of normalised tokens) out of
  B's spans: what a pragmatic answer adds beyond the literal one is scored, and repeating the literal
  answer earns nothing. Unlike F1_lit, an empty bag always scores 0, both empty included: the paper's
  score is zero *unless* the predicted pragmatic spans hold information beyond the gold literal spans that
  overlaps the gold pragmatic spans. A question whose gold pragmatic spans add nothing beyond its literal
  ones therefore scores 0 for every prediction, even a perfect one (on the release, 16.1% of val and
  11.6% of test questions); `f1_prag_ceiling` is 1 for the other questions, so its mean is the best F1_prag
  any system can reach on a split (the oracle reaches it).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_tokens(text: str) -> list[str]:
    """SQuAD's answer normalisation, as tokens."""
    text = text.lower().translate(_PUNCTUATION)
    return _ARTICLES.sub(" ", text).split()


def token_f1(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """SQuAD's token F1 of two bags; both empty scores 1, exactly one empty 0."""
    if not predicted or not gold:
        return float(not predicted and not gold)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _bag(spans: Sequence[str]) -> list[str]:
    return [token for span in spans for token in normalize_tokens(span)]


def _cut(tokens: list[str], runs: Sequence[list[str]]) -> list[str]:
    """`tokens` without every occurrence of every run, all found in `tokens` as given: cutting one run
    first must not join its neighbours into a match for another."""
    dropped = [False] * len(tokens)
    for run in runs:
        n = len(run)
        for i in range(len(tokens) - n + 1):
            if tokens[i : i + n] == run:
                dropped[i : i + n] = [True] * n
    return [token for token, drop in zip(tokens, dropped, strict=True) if not drop]


def remove_spans(spans: Sequence[str], removed: Sequence[str]) -> list[list[str]]:
    """B - A: the normalised tokens of each span of `spans` with every span of `removed` cut out."""
    runs = [r for r in map(normalize_tokens, removed) if r]
    return [_cut(normalize_tokens(span), runs) for span in spans]


def f1_lit(predicted: Sequence[str], gold: Sequence[str]) -> float:
    return token_f1(_bag(predicted), _bag(gold))


def _beyond(spans: Sequence[str], literal: Sequence[str]) -> list[str]:
    return [token for span in remove_spans(spans, literal) for token in span]


def f1_prag(predicted: Sequence[str], gold: Sequence[str], gold_literal: Sequence[str]) -> float:
    beyond_predicted, beyond_gold = _beyond(predicted, gold_literal), _beyond(gold, gold_literal)
    if not beyond_predicted or not beyond_gold:
        return 0.0  # the paper's definition: no credit without information beyond the literal answer
    return token_f1(beyond_predicted, beyond_gold)


def f1_prag_ceiling(gold: Sequence[str], gold_literal: Sequence[str]) -> float:
    """1 when the gold pragmatic spans add something beyond the gold literal ones (so F1_prag can reach
    1), else 0: the best F1_prag any prediction can earn on this question."""
    return float(bool(_beyond(gold, gold_literal)))
