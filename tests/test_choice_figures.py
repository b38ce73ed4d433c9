"""The figures every LLM choice task reports as means (`pragexp.metrics.choice_figures`): the Brier score of
the option probabilities, on an example worked by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from batch_rows import choice_rows
from conftest import predictions

from pragexp.metrics.choice import ChoiceMetric
from pragexp.metrics.choice_figures import ChoiceFigure
from pragexp.metrics.uncertainty import estimate_mean
from pragexp.report.tables import undeclared_figures
from pragexp.run import run
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
