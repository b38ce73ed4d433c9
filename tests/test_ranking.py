"""Ranking the scorer's options (pragexp/generation/ranking.py): the normalisations (sum, per token, per
byte), the rank and choice with ties, and contextual calibration in log space."""

from __future__ import annotations

import math

import pytest

from pragexp.generation.ranking import calibrate, choose, normalized, rank
from pragexp.generation.scoring.requests import OptionScore


def test_normalizations_and_rank():
    scores = [OptionScore(-4.0, 4, 8), OptionScore(-3.0, 1, 2), OptionScore(-6.0, 6, 24)]
    assert normalized(scores, "sum") == [-4.0, -3.0, -6.0]
    assert normalized(scores, "per_token") == [-1.0, -3.0, -1.0]
    assert normalized(scores, "per_byte") == [-0.5, -1.5, -0.25]
    assert rank(normalized(scores, "sum")) == [1, 0, 2]
    assert rank(normalized(scores, "per_token")) == [0, 2, 1]  # a tie keeps the earlier option first
    assert choose(normalized(scores, "per_token")) == 0
    assert rank(normalized(scores, "per_byte")) == [2, 0, 1]
    with pytest.raises(ValueError, match="per_word"):
        normalized(scores, "per_word")
    with pytest.raises(ValueError, match="no token counts"):
        normalized([OptionScore(-1.0, 0, 3)], "per_token")


def test_calibration_is_contextual_calibration_in_log_space():
    scores = [OptionScore(math.log(0.5), 1, 1), OptionScore(math.log(0.3), 1, 1)]
    # the content-free prompt prefers option 0 strongly: calibration flips the choice
    cf = [OptionScore(math.log(0.8), 1, 1), OptionScore(math.log(0.1), 1, 1)]
    p_cf = [0.8 / 0.9, 0.1 / 0.9]
    assert calibrate(scores, [cf]) == pytest.approx([math.log(0.5 / p_cf[0]), math.log(0.3 / p_cf[1])])
    assert choose(normalized(scores)) == 0 and choose(calibrate(scores, [cf])) == 1
    # several content-free inputs: their option distributions are averaged (Zhao et al. 2021)
    cf2 = [OptionScore(math.log(0.2), 1, 1), OptionScore(math.log(0.2), 1, 1)]
    mean = [(p_cf[0] + 0.5) / 2, (p_cf[1] + 0.5) / 2]
    assert calibrate(scores, [cf, cf2]) == pytest.approx([math.log(0.5 / mean[0]), math.log(0.3 / mean[1])])
    with pytest.raises(ValueError, match="content-free scores hold 1 options"):
        calibrate(scores, [cf[:1]])
