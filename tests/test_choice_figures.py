"""The figures every LLM choice task reports as means (`pragexp.metrics.choice_figures`): the Brier score of
the option probabilities, on examples worked by hand (a choice task's and intentions_mc's over its two
option orders, a classifier LLM's over its labels), and a figure added to the hook reaching all three."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from batch_rows import choice_rows, rows
from conftest import predictions
from torch import nn

from pragexp.metrics import GroupedMeanMetric, choice_figures
from pragexp.metrics.choice import ChoiceMetric
from pragexp.metrics.choice_figures import ChoiceFigure
from pragexp.metrics.uncertainty import estimate_mean
from pragexp.models.bert import BertClassifier
from pragexp.models.traits import ModelTraits
from pragexp.prompting import PromptItem
from pragexp.report.tables import undeclared_figures
from pragexp.run import run
from pragexp.tasks.classification import ClassificationTask
from pragexp.tasks.intentions import IntentionsMCTask
from pragexp.tasks.llm_choice import option_probabilities

INF = math.inf


def test_the_brier_score_of_the_option_probabilities_on_an_example_worked_by_hand():
    """Four examples, their option scores the logs of the probabilities the task's softmax gives back:
    A: p = (0.5, 0.3, 0.2), gold 0: (0.5 - 1)^2 + 0.3^2 + 0.2^2 = 0.25 + 0.09 + 0.04 = 0.38;
    B: two options, p = (0.4, 0.6) and a padding option (-inf: p 0), gold 0: 0.6^2 + 0.6^2 = 0.72;
    C: a generated reply naming no option (no finite score): no Brier score, left out;
    D: a generated reply naming option 1 (0, the others -inf: p = (0, 1, 0)), gold 1: 0.
    Mean (0.38 + 0.72 + 0) / 3 = 0.3667; A and B are one unit (group x), C and D another (group y)."""
    scores = torch.tensor(
        [
            [math.log(0.5), math.log(0.3), math.log(0.2)],
            [math.log(0.4), math.log(0.6), -INF],
            [-INF, -INF, -INF],
            [-INF, 0.0, -INF],
        ]
    )
    probs = option_probabilities(scores)
    label = torch.tensor([0, 0, 2, 1])
    batch, choice = choice_rows(
        torch.arange(4),
        [1.0, 0.0, 0.0, 1.0],
        probs[torch.arange(4), label],
        label=label,
        group=[0, 0, 1, 1],
        cluster=[0, 0, 1, 1],
        predicted=[0, 1, -1, 1],
        probs=probs,
    )
    metric = ChoiceMetric(["x", "y"])
    metric.update(batch, choice)
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["brier"] == pytest.approx(1.1 / 3, abs=1e-6)
    assert out["brier/x"] == pytest.approx(0.55, abs=1e-6) and out["brier/y"] == 0.0
    expected = estimate_mean([0.38, 0.72, 0.0], [0, 0, 1])
    assert out["brier_stderr"] == pytest.approx(expected.stderr, rel=1e-5)
    assert (out["brier_n"], out["brier_rows"]) == (2, 3) and (out["brier_n/y"], out["brier_rows/y"]) == (1, 1)
    assert out["acc"] == 0.5 and out["count"] == 4  # the other figures as before: C counts, and is wrong


def test_a_figure_added_to_the_hook_is_a_mean_with_its_interval_in_every_choice_metric():
    margin = ChoiceFigure("margin", lambda batch, scores: scores.p_true - 0.5)
    metric = ChoiceMetric([], figures=(margin,))
    metric.update(*choice_rows(torch.arange(4), [1.0, 1.0, 0.0, 0.0], [0.9, 0.7, 0.4, 0.2]))
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["margin"] == pytest.approx(0.05) and out["margin_n"] == 4 and "brier" not in out
    assert out["margin_stderr"] == pytest.approx(estimate_mean([0.4, 0.2, -0.1, -0.3]).stderr, rel=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("task", ["hu_pragmatics", "bigtom"])
def test_an_llm_choice_task_s_metrics_hold_the_brier_score_of_its_predictions(make_config, task):
    cfg = make_config([f"task={task}"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    brier = [sum((p - (o == r["gold"])) ** 2 for o, p in enumerate(r["probs"])) for r in records]
    assert metrics["test/brier"] == pytest.approx(sum(brier) / len(brier), abs=1e-5)
    assert metrics["test/brier_n"] == len({r["cluster"] for r in records}) and "test/brier_stderr" in metrics


def test_a_report_table_shows_a_figure_of_the_hook_only_where_a_task_declares_it():
    def row(*headline: str):
        task = SimpleNamespace(headline=[SimpleNamespace(key=key) for key in headline])
        return SimpleNamespace(runs=[SimpleNamespace(record=SimpleNamespace(task=task))])

    assert undeclared_figures([row("test/acc")]) == {"brier"}  # in metrics.json, in no table
    assert undeclared_figures([row("test/acc"), row("test/brier")]) == set()


class TwoOrderScorer(nn.Module):
    """A stand-in model: the given option scores for the views it is shown, one row per view."""

    generates, shots = False, 0

    def __init__(self, scores: list[list[float]]):
        super().__init__()
        self.scores, self.views = torch.tensor(scores), []

    def forward(self, views):
        self.views = list(views)
        return self.scores

    def take_records(self):
        return [(view.index, {"continuations": ["1", "2"]}) for view in self.views]


def test_intentions_mc_s_brier_score_is_its_orders_mean_on_an_example_worked_by_hand():
    """Two items, options (true, literal), each shown in both orders (the true option first, then second):
    item 0: p = (0.8, 0.2), gold 0: 0.2^2 + 0.2^2 = 0.08; p = (0.6, 0.4), gold 1: 0.6^2 + 0.6^2 = 0.72;
    its Brier score (0.08 + 0.72) / 2 = 0.4, as its p_true (0.8 + 0.4) / 2 = 0.6;
    item 1: a generated reply naming the true option (0 and -inf: p = (1, 0)), gold 0: 0; then one naming no
    option: no Brier score, so its Brier score is its first order's, 0 (p_true (1 + 0) / 2 = 0.5).
    Over the items (each its own unit): brier 0.2, p_true 0.55."""
    scores = [[math.log(0.8), math.log(0.2)], [math.log(0.6), math.log(0.4)], [0.0, -INF], [-INF, -INF]]
    task = IntentionsMCTask(None)
    task.net = task.prompted = TwoOrderScorer(scores)
    items = [PromptItem(i, {}, ["true", "literal"], 0) for i in range(2)]
    batch, _ = choice_rows(torch.arange(2), [1.0, 1.0], group=[0, 1])
    batch["inputs"] = {"items": items}
    out = task.evaluate_batch("test", batch)
    assert out["brier"].tolist() == pytest.approx([0.4, 0.0]) and out["p_true"].tolist() == pytest.approx(
        [0.6, 0.5]
    )
    assert [r["p_true"] for r in out["_records"]] == pytest.approx([0.6, 0.5]) and "brier" not in out[
        "_records"
    ][0]
    metric = GroupedMeanMetric(task.score_names, ["x", "y"])
    metric.update(batch, **{name: out[name] for name in task.score_names})
    means = {k: float(v) for k, v in metric.compute().items()}
    assert means["brier"] == pytest.approx(0.2) and means["p_true"] == pytest.approx(0.55)
    assert means["brier_stderr"] == pytest.approx(estimate_mean([0.4, 0.0]).stderr, rel=1e-5)


class LabelScorer(nn.Module):
    """A stand-in LLM reading prompts: the given label scores (`logits`), one row per example."""

    @classmethod
    def traits(cls) -> ModelTraits:
        return ModelTraits(learns_weights=False, reads_prompts=True)

    def __init__(self, logits: list[list[float]]):
        super().__init__()
        self.logits = torch.tensor(logits)

    def forward(self, items):
        return self.logits


def test_a_classifier_llm_s_brier_score_of_its_label_probabilities_on_an_example_worked_by_hand():
    """Circa-like labels (yes, no, middle), an LLM's label scores the logs of the probabilities:
    A: p = (0.7, 0.2, 0.1), gold yes: 0.3^2 + 0.2^2 + 0.1^2 = 0.09 + 0.04 + 0.01 = 0.14;
    B: p = (0.5, 0.5, 0), gold middle: 0.5^2 + 0.5^2 + 1 = 1.5;
    C: a generated reply naming no label (all -inf): no Brier score (wrong for acc, and counted);
    D: a generated reply naming no (0, the others -inf), gold no: 0.
    Mean (0.14 + 1.5 + 0) / 3 = 0.5467; A and B one unit (group x), C and D another (group y)."""
    logits = [
        [math.log(0.7), math.log(0.2), math.log(0.1)],
        [math.log(0.5), math.log(0.5), -INF],
        [-INF, -INF, -INF],
        [-INF, 0.0, -INF],
    ]
    task = ClassificationTask(LabelScorer, optimizer=None)
    task.net = LabelScorer(logits)
    batch = rows(torch.arange(4), group=[0, 0, 1, 1], cluster=[0, 0, 1, 1], label=[0, 2, 0, 1])
    batch["inputs"] = {"items": []}
    task.metrics = task.build_metrics(SimpleNamespace(label_slugs=["yes", "no", "middle"], group_names="xy"))
    scores = task.evaluate_batch("test", batch)
    assert (
        scores["brier"][[0, 1, 3]].tolist() == pytest.approx([0.14, 1.5, 0.0]) and scores["brier"][2].isnan()
    )
    task.label_names = ["yes", "no", "middle"]  # the records as before: no figure of the hook in them
    assert task.prediction_records(batch, scores)[2] == {"index": 2, "gold": "yes", "predicted": None}
    task.update_metrics("test", batch, scores)
    out = {k: float(v) for k, v in task.metrics["test"].compute().items()}
    assert out["brier"] == pytest.approx(1.64 / 3, abs=1e-6)
    assert out["brier/x"] == pytest.approx(0.82, abs=1e-6) and out["brier/y"] == 0.0
    assert out["brier_stderr"] == pytest.approx(estimate_mean([0.14, 1.5, 0.0], [0, 0, 1]).stderr, rel=1e-5)
    assert (out["brier_n"], out["brier_rows"]) == (2, 3) and (out["brier_n/y"], out["brier_rows/y"]) == (1, 1)
    assert out["acc"] == 0.5 and out["count"] == 4  # the classification figures as before: C is wrong


def test_a_trained_classifier_stays_off_the_hook():
    assert ClassificationTask(BertClassifier, optimizer=None).figures == ()


@pytest.mark.slow
@pytest.mark.parametrize(
    "overrides", [["task=hu_pragmatics"], ["task=intentions_mc"], ["task=circa", "model=llm"]]
)
def test_a_figure_added_to_the_hook_reaches_every_kind_of_llm_choice_task(
    make_config, monkeypatch, overrides
):
    """One more `ChoiceFigure` in `CHOICE_FIGURES` and nothing else: every kind of LLM choice task reports it
    (`ChoiceMetric`'s, intentions_mc per item over its orders like p_true, a classifier LLM over its labels):
    1 - p_true averages to 1 - p_true, a classifier's to its mean probability of a wrong label."""
    miss = ChoiceFigure("miss", lambda batch, scores: 1.0 - scores.p_true.double())
    monkeypatch.setattr(choice_figures, "CHOICE_FIGURES", (*choice_figures.CHOICE_FIGURES, miss))
    metrics = run(make_config(overrides, name="eval"))
    if "test/p_true" in metrics:
        assert metrics["test/miss"] == pytest.approx(1.0 - metrics["test/p_true"], abs=1e-5)
    else:  # a classifier: no p_true of its own; a probability of the wrong labels, every label scored
        assert 0.0 < metrics["test/miss"] < 1.0 and metrics["test/miss_rows"] == metrics["test/count"]
    assert {"test/brier", "test/miss_stderr", "test/miss_n"} <= set(metrics)
