"""PragmatiCQA's metrics: span F1 (literal and pragmatic, with the paper's pathological cases), retrieval
recall, perplexity counted once per example, and symmetric BARTScore (with a tiny random scorer)."""

import math

import pytest
import torch
from batch_rows import rows

from pragexp.metrics.perplexity import PerplexityMetric
from pragexp.metrics.retrieval import recall_at_k
from pragexp.metrics.spans import f1_lit, f1_prag, f1_prag_ceiling, normalize_tokens, remove_spans, token_f1

LIT = ["Snoop Dogg was acquitted of murder on February 20, 1996"]
PRAG = ["A short film about the murder trial", "was released in 1994"]


def test_squad_normalisation_and_token_f1():
    assert normalize_tokens("The Doctor's TARDIS, a blue box!") == ["doctors", "tardis", "blue", "box"]
    assert token_f1(["a", "b"], ["a", "b"]) == 1.0
    assert token_f1(["a", "b", "c", "d"], ["a", "b"]) == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert token_f1([], []) == 1.0 and token_f1([], ["a"]) == 0.0 and token_f1(["a"], []) == 0.0


def test_f1_lit_compares_bags_of_span_tokens():
    assert f1_lit(LIT, LIT) == 1.0
    assert f1_lit(["acquitted of murder"], LIT) == pytest.approx(
        2 * 1.0 * (3 / 10) / (1 + 3 / 10)
    )  # 3 of 10 tokens
    assert f1_lit([], LIT) == 0.0
    assert f1_lit(["Yes"], ["yes."]) == 1.0  # canned answers compare like any text


def test_f1_prag_scores_what_goes_beyond_the_literal_answer():
    assert f1_prag(PRAG, PRAG, LIT) == 1.0  # the gold pragmatic spans, apart from the literal ones
    assert f1_prag(LIT, PRAG, LIT) == 0.0  # repeating the literal answer earns nothing
    assert f1_prag([], PRAG, LIT) == 0.0  # saying nothing neither
    assert f1_prag([LIT[0] + " " + PRAG[1]], PRAG, LIT) == pytest.approx(
        token_f1(["was", "released", "in", "1994"], normalize_tokens(" ".join(PRAG)))
    )
    # A gold pragmatic span that contains the literal answer is scored on the rest of it.
    overlapping = ["He was young. " + LIT[0] + ". It was big news."]
    assert remove_spans(overlapping, LIT) == [["he", "was", "young", "it", "was", "big", "news"]]
    assert f1_prag(["He was young. It was big news."], overlapping, LIT) == 1.0
    assert f1_prag_ceiling(PRAG, LIT) == 1.0 and f1_prag_ceiling(overlapping, LIT) == 1.0


def test_f1_prag_is_zero_without_gold_information_beyond_the_literal_answer():
    """The paper (eq. 2 and the sentence after it): zero unless the predicted pragmatic spans hold
    information beyond the gold literal spans that overlaps the gold pragmatic spans. A question whose gold
    pragmatic spans only repeat the literal ones scores 0 whatever is predicted (SQuAD would give 1 to an
    empty prediction), and its ceiling is 0."""
    assert f1_prag([], LIT, LIT) == 0.0
    assert f1_prag(LIT, LIT, LIT) == 0.0
    assert f1_prag(PRAG, LIT, LIT) == 0.0
    assert f1_prag([], [], LIT) == 0.0
    assert f1_prag_ceiling(LIT, LIT) == 0.0 and f1_prag_ceiling([], LIT) == 0.0
    # F1_lit keeps SQuAD's convention for empty bags (both empty: 1).
    assert f1_lit([], []) == 1.0


def test_remove_spans_cuts_every_occurrence_as_found_in_the_span():
    assert remove_spans(["a b c a b c d"], ["a b", "a b c"]) == [["d"]]
    assert remove_spans(["x y"], []) == [["x", "y"]]
    # cutting "severus snape" must not make "professor dumbledore" a run that was never there
    assert remove_spans(
        ["professor severus snape dumbledore"], ["Severus Snape", "Professor Dumbledore"]
    ) == [["professor", "dumbledore"]]


def test_recall_at_k_any_share_and_all_gold_passages():
    retrieved = [[5, 3, 9, 1], [2, 4, 6, 8], [1, 2, 3, 4]]
    gold = [(3, 1), (7,), ()]

    def at(k):
        return {name: values.tolist() for name, values in recall_at_k(retrieved, gold, k).items()}

    assert at(1) == {"r": [0, 0, 0], "r_all": [0, 0, 0], "hit_all": [0, 0, 0]}
    # R^All@k is the share of the gold passages found (Table 4's caption), not all-or-nothing
    assert at(2) == {"r": [1, 0, 0], "r_all": [0.5, 0, 0], "hit_all": [0, 0, 0]}
    # no gold passage: a miss on all three, not a vacuous hit
    assert at(4) == {"r": [1, 0, 0], "r_all": [1, 0, 0], "hit_all": [1, 0, 0]}
    three = recall_at_k([[1, 2, 3]], [(1, 2, 9)], 3)
    assert three["r_all"].item() == pytest.approx(2 / 3) and three["hit_all"].item() == 0


def test_perplexity_counts_each_example_once():
    metric = PerplexityMetric()
    metric.update(rows(torch.tensor([0, 1])), torch.tensor([2.0, 4.0]), torch.tensor([2, 2]))
    metric.update(rows(torch.tensor([1])), torch.tensor([4.0]), torch.tensor([2]))  # a repeat (DDP padding)
    assert metric.compute()["ppl"].item() == pytest.approx(math.exp(6.0 / 4.0), rel=1e-6)


def test_symmetric_bartscore_averages_both_directions():
    from pragexp.metrics.bartscore import Seq2SeqScorer, symmetric_bartscore

    scorer = Seq2SeqScorer("tiny", batch_size=2)
    predicted, gold = ["He is 46.", "", "born in 1971"], ["Snoop Dogg is 46 years old.", "Yes.", "born 1971"]
    q = symmetric_bartscore(scorer, predicted, gold)
    forward, backward = scorer.score(predicted, gold), scorer.score(gold, predicted)
    assert q == pytest.approx([(f + b) / 2 for f, b in zip(forward, backward, strict=True)])
    assert q == pytest.approx(symmetric_bartscore(scorer, gold, predicted))  # symmetric
    assert all(v < 0 for v in q)  # log-likelihoods
    assert Seq2SeqScorer("tiny").score(predicted, gold) == pytest.approx(
        forward
    )  # the same scorer every time
    assert scorer.score(["a b"], ["a b"]) == pytest.approx(
        scorer.score(["a b", "c"], ["a b", "c d e f"])[:1], abs=1e-5
    )
