"""The structure of the GRICE generator's splits (pragexp.data.grice): the test split's rounds and round
robin, train and dev, the paper's presets, the implicature mix, subtopics and types, coreference and verb
synonyms."""

from __future__ import annotations

from collections import Counter

from grice_cases import GEN, LEX, SETTINGS, dialog_ids, seeds
from grice_truth import qa_expected
from hypothesis import given, settings
from hypothesis import strategies as st

from pragexp.data.grice.generator import (
    IMPLICATURE_TYPES,
    SPLIT_PRESETS,
    GriceGenerator,
)
from pragexp.data.grice.generator.grammar import SUPPORT


@SETTINGS
@given(dialog_id=dialog_ids, seed=seeds)
def test_test_split_structure(dialog_id, seed):
    d = GEN.dialogue("test", dialog_id, seed)
    rec = d.record
    codes = {"relevance": "re", "strengthening": "st", "limiting": "li", "ignorance": "ig", "close_but": "cb"}
    want = ("relevance", "strengthening", "limiting", "ignorance", "close_but")[dialog_id % 5]
    assert rec["test_condition"] == codes[want]
    assert 3 <= len(rec["dialog"]) <= 4
    assert len(rec["question"]) == 1
    assert any(r["implicature"] == want for r in rec["dialog"])
    q = d.questions[0]
    assert rec["question"][0]["answer"] == qa_expected(d.world, q.query)  # the one question, answered right


def test_test_split_rounds_mostly_of_the_file_type():
    """As in the release's test files, most rounds of a test dialogue have its type."""
    recs = list(GEN.dialogs("test", 200, seed=4))
    own = Counter()
    for rec in recs:
        want = {
            "re": "relevance",
            "st": "strengthening",
            "li": "limiting",
            "ig": "ignorance",
            "cb": "close_but",
        }
        own[rec["test_condition"]] += sum(
            r["implicature"] == want[rec["test_condition"]] for r in rec["dialog"]
        )
    rounds = Counter()
    for rec in recs:
        rounds[rec["test_condition"]] += len(rec["dialog"])
    for code in ("ig", "st"):  # every subtopic can carry these
        assert own[code] / rounds[code] > 0.6, (code, own[code], rounds[code])


@settings(max_examples=15, deadline=None)
@given(split=st.sampled_from(["train", "dev"]), dialog_id=dialog_ids, seed=seeds)
def test_train_dev_structure(split, dialog_id, seed):
    rec = GEN.dialogue(split, dialog_id, seed).record
    assert len(rec["dialog"]) == 10
    assert len(rec["question"]) == 3
    assert len({q["question"] for q in rec["question"]}) == 3


def test_test_split_even_round_robin():
    recs = list(GEN.dialogs("test", 23, seed=5))
    counts = Counter(r["test_condition"] for r in recs)
    assert counts == {"re": 5, "st": 5, "li": 5, "ig": 4, "cb": 4}
    assert [r["dialog_id"] for r in recs] == list(range(23))


def test_presets_reproduce_paper():
    assert SPLIT_PRESETS["train"]["n_dialogs"] == 6000 and SPLIT_PRESETS["dev"]["n_dialogs"] == 4000
    assert SPLIT_PRESETS["train"]["rounds"] == (10, 10) and SPLIT_PRESETS["train"]["questions"] == 3
    # the paper says 3-5 turns; the released test files hold 3 or 4 rounds, half each
    assert SPLIT_PRESETS["test"]["rounds"] == (3, 4) and SPLIT_PRESETS["test"]["questions"] == 1
    assert SPLIT_PRESETS["test"]["per_type"] * 5 == SPLIT_PRESETS["test"]["n_dialogs"]


def test_implicature_mix_default_close_to_configured():
    counts = Counter(r["implicature"] for rec in GEN.dialogs("train", 2000, seed=11) for r in rec["dialog"])
    total = sum(counts.values())
    for t, p in GEN.mix.items():
        assert abs(counts[t] / total - p) < 0.03, (t, counts[t] / total, p)


def test_implicature_mix_custom():
    mix = {"explicit": 0.2, "ignorance": 0.5, "close_but": 0.3}
    g = GriceGenerator(implicature_mix=mix)
    counts = Counter(r["implicature"] for rec in g.dialogs("dev", 300, seed=1) for r in rec["dialog"])
    total = sum(counts.values())
    assert set(counts) <= set(mix)
    for t, p in mix.items():
        assert abs(counts[t] / total - p) < 0.04


def test_subtopics_and_types_all_occur():
    seen = Counter(
        (r["implicature"], r["subtopic"]) for rec in GEN.dialogs("train", 300, seed=2) for r in rec["dialog"]
    )
    for t in IMPLICATURE_TYPES:
        for _, s in SUPPORT[t]:
            assert seen[(t, s)] > 0, (t, s)
    assert set(seen) <= {(t, s) for t in IMPLICATURE_TYPES for _, s in SUPPORT[t]}


def test_coreference_and_verb_synonyms_used():
    text = [(r["question"], r["answer"]) for rec in GEN.dialogs("train", 200, seed=3) for r in rec["dialog"]]
    words = Counter(wd for q, a in text for wd in (q + " " + a).split())
    for pron in ("them", "there", "he", "she", "it", "him", "her"):
        assert words[pron] > 0, pron
    for form in (
        "what about",
        "how about",
        "or the",
        "how many",
        "are all",
        "are some of",
        "did you",
        "where were you",
    ):
        assert any(q.startswith(form) for q, _ in text), form
    for v in LEX.put_verbs + LEX.go_verbs:
        assert words[v] > 0, v
