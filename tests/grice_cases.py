"""What the GRICE generator's tests share: the generator and its lexicon, Hypothesis's strategies and
settings, and the official release's sample files (../shared/samples), whose tests skip, saying so, when that
folder is absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from pragexp.data.grice.generator import (
    SPLIT_PRESETS,
    GriceGenerator,
)
from pragexp.data.grice.generator.lexicon import DEFAULT_LEXICON_PATH

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples" / "grice"

GEN = GriceGenerator()
LEX = GEN.lex
WOMAN = "the woman"
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**31)
dialog_ids = st.integers(min_value=0, max_value=50_000)
splits = st.sampled_from(sorted(SPLIT_PRESETS))


def shared(name: str) -> Path:
    """A file of ../shared/samples/grice, or skip the test (a user's clone has no ../shared)."""
    path = SAMPLES / name
    if not path.is_file():
        pytest.skip(f"../shared/samples not present: {path} (the conformance check needs the release's file)")
    return path


def shipped_lexicon() -> dict:
    return json.loads(DEFAULT_LEXICON_PATH.read_text())
