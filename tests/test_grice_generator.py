"""Property tests of the GRICE grammar generator (pragexp.data.grice).

Truth is re-checked here with an evaluator written independently of the generator's own
``holds``: facts are evaluated on plain dicts, and the woman's knowledge by enumerating every world
she holds possible.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pragexp.data.grice.generator import (
    IMPLICATURE_TYPES,
    SPLIT_PRESETS,
    SUBTOPICS,
    GriceGenerator,
    load_lexicon,
    write_dataset,
)
from pragexp.data.grice.generator.render import explicit
from pragexp.data.grice.generator.writer import write_records

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "samples" / "grice" / "impl_dial_sample.json"
OFFICIAL_LEXICON = REPO.parent / "shared" / "samples" / "grice" / "lexicon.json"

GEN = GriceGenerator()
LEX = GEN.lex
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=2**31)
dialog_ids = st.integers(min_value=0, max_value=50_000)
splits = st.sampled_from(sorted(SPLIT_PRESETS))


# ------------------------------- independent evaluator -----------------------------------------


def valuation(w):
    return {
        "prev": dict(w.prev),
        "cur": dict(w.cur),
        "putter": dict(w.putter),
        "obj_loc": dict(w.obj_loc),
        "obj_count": dict(w.obj_count),
        "obj_total": dict(w.obj_total),
    }


def possible_valuations(w):
    """Every world the woman holds possible (product over all her uncertain variables)."""
    slots = [(t, k, vals) for t, table in w.possible.items() for k, vals in table.items()]
    for values in itertools.product(*(vals for _, _, vals in slots)):
        v = valuation(w)
        for (t, k, _), value in zip(slots, values, strict=True):
            v[t][k] = value
        yield v


def count_in(v, obj, loc):
    return v["obj_count"][obj] if v["obj_loc"][obj] == loc else 0


def query_value(v, q):
    name = type(q).__name__
    if name == "WhereAgent":
        return v["cur"][q.agent]
    if name == "WhereObj":
        return v["obj_loc"][q.obj]
    if name == "HowMany":
        return count_in(v, q.obj, q.loc)
    if name == "WhoPut":
        return v["putter"][q.obj] if v["obj_loc"][q.obj] == q.loc else None
    assert name == "Whether"
    return truth(q.fact, v, None)


def unsure(w, q):
    return len({query_value(v, q) for v in possible_valuations(w)}) > 1


def truth(f, v, w):
    name = type(f).__name__
    if name == "AgentAt":
        return (f.loc in (v["prev"][f.agent], v["cur"][f.agent])) != f.neg
    if name == "AgentWent":
        return v["cur"][f.agent] == f.loc
    if name == "AgentPath":
        return (v["prev"][f.agent], v["cur"][f.agent]) == (f.first, f.second)
    if name == "Put":
        return (v["putter"][f.obj] == f.agent and v["obj_loc"][f.obj] == f.loc) != f.neg
    if name == "PutThenWent":
        return (
            v["putter"][f.obj] == f.agent
            and v["obj_loc"][f.obj] == f.loc == v["prev"][f.agent]
            and v["cur"][f.agent] == f.dest
        )
    if name == "ObjectAt":
        return (v["obj_loc"][f.obj] == f.loc) != f.neg
    if name == "ObjectQuant":
        n, total = count_in(v, f.obj, f.loc), v["obj_total"][f.obj]
        return {"all": n == total, "some": 0 < n < total, "not_all": n < total}.get(f.quant, n == f.quant)
    assert name == "NotSure", name
    return unsure(w, f.query)


def true_in_world(w, f):
    return truth(f, valuation(w), w)


def woman_knows(w, f):
    return len({truth(f, v, w) for v in possible_valuations(w)}) == 1


def qa_expected(w, q):
    """One-word answer of a query, recomputed from the raw world tables."""
    v, kind = valuation(w), q[0]
    yn = {True: "yes", False: "no"}
    if kind == "visited":
        return yn[q[2] in (w.prev[q[1]], w.cur[q[1]])]
    if kind == "final":
        return w.cur[q[1]]
    if kind == "first":
        return w.prev[q[1]]
    if kind == "put":
        return yn[w.putter[q[2]] == q[1] and w.obj_loc[q[2]] == q[3]]
    if kind == "obj_loc":
        return w.obj_loc[q[1]]
    if kind == "who_put":
        assert w.obj_loc[q[1]] == q[2]
        return w.putter[q[1]]
    if kind == "obj_at":
        return yn[w.obj_loc[q[1]] == q[2]]
    if kind == "count":
        return LEX.numbers[count_in(v, q[1], q[2]) - 1]
    if kind == "all_or_some":
        return "all" if count_in(v, q[1], q[2]) == w.obj_total[q[1]] else "some"
    worlds = list(possible_valuations(w))
    if kind == "knows_obj_loc":
        return yn[len({u["obj_loc"][q[1]] for u in worlds}) == 1]
    if kind in ("believe_obj_loc", "believe_agent"):
        table = "obj_loc" if kind == "believe_obj_loc" else "cur"
        (only,) = {u[table][q[1]] for u in worlds}
        return only
    if kind == "sure_agent":
        return yn[len({u["cur"][q[1]] for u in worlds}) == 1]
    if kind == "sure_count":
        return yn[len({count_in(u, q[1], q[2]) for u in worlds}) == 1]
    if kind == "sure_whether":
        return yn[len({truth(q[1], u, w) for u in worlds}) == 1]
    if kind == "knows_who_put":
        return yn[len({u["putter"][q[1]] if u["obj_loc"][q[1]] == q[2] else None for u in worlds}) == 1]
    raise AssertionError(kind)


def key_without_surface(f):
    return f.key()


# ------------------------------- per-round properties ------------------------------------------


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_gold_true_known_and_rendered(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    w = d.world
    for r, rec in zip(d.rounds, d.record["dialog"], strict=True):
        assert true_in_world(w, r.gold), (rec, r.gold)
        if rec["implicature"] == "ignorance" or type(r.gold).__name__ == "NotSure":
            assert type(r.gold).__name__ == "NotSure"
        else:
            assert woman_knows(w, r.gold), (rec, r.gold)  # she never states what she does not know
        assert explicit(r.gold, LEX) == rec["explict_answer"]
        assert rec["option"][rec["answer_index"]] == rec["explict_answer"]


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_distractors_wrong_distinct_and_not_paraphrases(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    w = d.world
    for r, rec in zip(d.rounds, d.record["dialog"], strict=True):
        opts = rec["option"]
        assert len(opts) == 4 and len(set(opts)) == 4
        assert 0 <= rec["answer_index"] < 4
        assert len(r.distractors) == 3
        for f, text in r.distractors:
            assert text != rec["explict_answer"]
            assert text in opts and explicit(f, LEX) == text
            assert f.key() != r.gold.key(), (f, r.gold)
            # a true distractor must be about something else than the gold (else: 2 right answers)
            if true_in_world(w, f):
                assert f.topic() != r.gold.topic(), (f, r.gold)


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_qa_answers_correct_single_words(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    names = set(LEX.agents)
    for q, rec in zip(d.questions, d.record["question"], strict=True):
        assert rec["answer"] == q.answer == qa_expected(d.world, q.query), (rec, q.query)
        assert " " not in rec["answer"] and rec["answer"]
        assert (
            rec["answer"] in names or rec["answer"] in LEX.locations or rec["answer"] == rec["answer"].lower()
        )
        assert rec["implicature"] == d.rounds[q.round_index].implicature


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_schema(split, dialog_id, seed):
    rec = GEN.dialogue(split, dialog_id, seed).record
    assert isinstance(rec["dialog_id"], int) and rec["dialog_id"] == dialog_id
    for r in rec["dialog"]:
        assert list(r) == [
            "question",
            "answer",
            "explict_answer",
            "option",
            "answer_index",
            "implicature",
            "subtopic",
        ]
        assert all(isinstance(r[k], str) and r[k] for k in ("question", "answer", "explict_answer"))
        assert isinstance(r["option"], list) and all(isinstance(o, str) for o in r["option"])
        assert isinstance(r["answer_index"], int)
        assert r["implicature"] in IMPLICATURE_TYPES and r["subtopic"] in SUBTOPICS
    for q in rec["question"]:
        assert set(q) == {"question", "answer", "implicature"}
        assert q["implicature"] in IMPLICATURE_TYPES
    assert ("test_condition" in rec) == (split == "test")
    json.loads(json.dumps(rec))


def test_schema_matches_official_sample():
    official = json.loads(SAMPLE.read_text())
    ours = GEN.dialogue("test", 0, 0).record
    o_dial = official["data"]["dialogs"][0]
    assert set(o_dial) <= set(ours)
    assert set(o_dial["dialog"][0]) <= set(ours["dialog"][0])
    assert set(o_dial["question"][0]) <= set(ours["question"][0])
    assert {d["test_condition"] for d in official["data"]["dialogs"]} == {"re", "st", "li", "ig", "cb"}


# ------------------------------- split structure -----------------------------------------------


@SETTINGS
@given(dialog_id=dialog_ids, seed=seeds)
def test_test_split_structure(dialog_id, seed):
    d = GEN.dialogue("test", dialog_id, seed)
    rec = d.record
    codes = {"relevance": "re", "strengthening": "st", "limiting": "li", "ignorance": "ig", "close_but": "cb"}
    want = ("relevance", "strengthening", "limiting", "ignorance", "close_but")[dialog_id % 5]
    assert rec["test_condition"] == codes[want]
    assert 3 <= len(rec["dialog"]) <= 5
    assert len(rec["question"]) == 1
    assert any(r["implicature"] == want for r in rec["dialog"])
    q = d.questions[0]
    assert rec["question"][0]["implicature"] == want
    assert d.rounds[q.round_index].implicature == want


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
    assert SPLIT_PRESETS["test"]["rounds"] == (3, 5) and SPLIT_PRESETS["test"]["questions"] == 1
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
        for s in SUBTOPICS:
            assert seen[(t, s)] > 0, (t, s)


def test_coreference_and_verb_synonyms_used():
    text = [(r["question"], r["answer"]) for rec in GEN.dialogs("train", 200, seed=3) for r in rec["dialog"]]
    words = Counter(wd for q, a in text for wd in (q + " " + a).split())
    for pron in ("them", "there", "he", "she", "they"):
        assert words[pron] > 0, pron
    assert any(q.startswith("what about") for q, _ in text)
    assert any(q.startswith("how about") for q, _ in text)
    assert any(q.startswith("who ") for q, _ in text)
    for form in ("where", "how many", "are all of", "are some of", "did you", "was", "were you"):
        assert any(q.startswith(form) for q, _ in text), form
    for v in LEX.put_verbs + LEX.go_verbs:
        assert words[v] > 0, v


# ------------------------------- lexicon -------------------------------------------------------

FUNCTION_WORDS = set(
    "a all am and are at be been but can did didn't do does don't either find first for go going has he her "
    "him how i if in is it know least many maybe me more not of only or sure the then there they think was "
    "wasn't were what where whether who woman you your she some said believe about aren't finally "
    "see yes no none them to".split()
)


def test_official_lexicon_is_package_data_and_used():
    shipped = json.loads((REPO / "pragexp" / "data" / "grice" / "generator" / "lexicon.json").read_text())
    assert shipped == json.loads(OFFICIAL_LEXICON.read_text())
    vocab = (
        set(w.lower() for w in LEX.agents)
        | set(x.lower() for x in LEX.locations)
        | set(LEX.objects)
        | set(LEX.containers)
        | set(LEX.colours)
        | set(LEX.numbers)
        | set(LEX.put_verbs)
        | set(LEX.go_verbs)
        | set(LEX.base.values())
        | FUNCTION_WORDS
    )
    for rec in GEN.dialogs("train", 50, seed=4):
        for r in rec["dialog"]:
            for s in [r["question"], r["answer"]] + r["option"]:
                for wd in s.lower().split():
                    assert wd in vocab, (wd, s)
        for q in rec["question"]:
            for wd in (q["question"] + " " + q["answer"]).lower().split():
                assert wd in vocab, (wd, q)


def test_custom_lexicon_dict_and_path(tmp_path):
    raw = json.loads(OFFICIAL_LEXICON.read_text())
    raw["agents"] = ["Zed", "Yara", "Xavi", "Wim"]
    raw["objects_plural"] = ["kiwis", "figs", "dates", "nuts", "olives"]
    g = GriceGenerator(lexicon=raw)
    d = g.dialogue("train", 0, 0)
    assert set(d.world.others) <= set(raw["agents"])
    assert set(d.world.objects) <= set(raw["objects_plural"])
    p = tmp_path / "lex.json"
    p.write_text(json.dumps(raw))
    assert GriceGenerator(lexicon=str(p)).dialogue("train", 0, 0).record == d.record


# ------------------------------- determinism and files -----------------------------------------


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(split=splits, seed=seeds)
def test_same_seed_byte_identical_files(tmp_path, split, seed):
    a, b = tmp_path / f"a{seed}.json", tmp_path / f"b{seed}.json"
    write_dataset(a, split, 12, seed)
    write_dataset(b, split, 12, seed)
    assert a.read_bytes() == b.read_bytes()
    data = json.loads(a.read_text())
    assert data["split"] == split and data["version"] == "v0.1" and len(data["data"]["dialogs"]) == 12


def test_different_seeds_differ_and_dialog_k_independent_of_n(tmp_path):
    write_dataset(tmp_path / "a.json", "train", 8, 1)
    write_dataset(tmp_path / "b.json", "train", 8, 2)
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "b.json").read_bytes()
    short = list(GEN.dialogs("test", 4, 9))
    long = list(GEN.dialogs("test", 9, 9))
    assert long[:4] == short


def test_deterministic_across_hash_seeds(tmp_path):
    code = "import sys; from pragexp.data.grice.generator import write_dataset; write_dataset(sys.argv[1], 'dev', 6, 3)"
    outs = []
    for hs in ("1", "2"):
        out = tmp_path / f"h{hs}.json"
        env = dict(os.environ, PYTHONHASHSEED=hs, PYTHONPATH=str(REPO))
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env, cwd=tmp_path)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_write_counts(tmp_path):
    counts = write_dataset(tmp_path / "t.json", "test", 10, 0)
    assert counts["dialogs"] == 10
    assert counts["test_condition"] == {"cb": 2, "ig": 2, "li": 2, "re": 2, "st": 2}
    data = json.loads((tmp_path / "t.json").read_text())
    assert sum(counts["rounds"].values()) == sum(len(d["dialog"]) for d in data["data"]["dialogs"])


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out.json"

    def records():
        yield from GEN.dialogs("train", 3, 0)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_records(target, records(), "train")
    assert list(tmp_path.iterdir()) == []
    # an existing file survives a failed rewrite untouched
    target.write_text("old")
    with pytest.raises(RuntimeError):
        write_records(target, records(), "train")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_write_on_keyboard_interrupt(tmp_path):
    def records():
        yield from GEN.dialogs("dev", 2, 0)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_records(tmp_path / "x.json", records(), "dev")
    assert list(tmp_path.iterdir()) == []


# ------------------------------- bad arguments -------------------------------------------------


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="split"):
        GEN.dialogue("validation", 0, 0)
    with pytest.raises(ValueError, match="split"):
        write_dataset(tmp_path / "x.json", "nope", 1, 0)
    with pytest.raises(ValueError, match="sum to 1"):
        GriceGenerator(implicature_mix={"explicit": 0.5, "relevance": 0.2})
    with pytest.raises(ValueError, match="sarcasm"):
        GriceGenerator(implicature_mix={"explicit": 0.5, "sarcasm": 0.5})
    raw = json.loads(OFFICIAL_LEXICON.read_text())
    del raw["colours"]
    bad = tmp_path / "bad_lex.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="colours") as err:
        load_lexicon(bad)
    assert str(bad) in str(err.value)
    with pytest.raises(ValueError, match="not found"):
        load_lexicon(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="seed"):
        write_dataset(tmp_path / "x.json", "train", 1, "0")
    with pytest.raises(ValueError, match="n_dialogs"):
        write_dataset(tmp_path / "x.json", "train", -1, 0)
    assert not (tmp_path / "x.json").exists()


# ------------------------------- CLI -----------------------------------------------------------


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pragexp.data.grice", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_cli_writes_valid_file(tmp_path):
    out = tmp_path / "sub" / "test.json"
    res = _cli("--split", "test", "--dialogs", "10", "--seed", "3", "--out", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "wrote 10 test dialogues" in res.stdout and str(out) in res.stdout
    data = json.loads(out.read_text())
    assert len(data["data"]["dialogs"]) == 10 and data["split"] == "test"
    assert [p.name for p in out.parent.iterdir()] == ["test.json"]


def test_cli_mix(tmp_path):
    out = tmp_path / "dev.json"
    res = _cli(
        "--split",
        "dev",
        "--dialogs",
        "20",
        "--mix",
        "explicit=0.5,ignorance=0.5",
        "--quiet",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    kinds = {r["implicature"] for d in json.loads(out.read_text())["data"]["dialogs"] for r in d["dialog"]}
    assert kinds == {"explicit", "ignorance"}
    res = _cli("--split", "dev", "--mix", "explicit=0.5,irony=0.5", "--out", str(out), cwd=tmp_path)
    assert res.returncode == 2 and "irony" in res.stderr


def test_cli_errors(tmp_path):
    res = _cli("--split", "bogus", "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert res.returncode == 2 and "invalid choice" in res.stderr
    res = _cli("--split", "train", "--dialogs", "-3", "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert res.returncode == 2 and "non-negative" in res.stderr
    res = _cli(
        "--split",
        "train",
        "--dialogs",
        "1",
        "--out",
        str(tmp_path / "x.json"),
        "--lexicon",
        str(tmp_path / "nope.json"),
        cwd=tmp_path,
    )
    assert res.returncode == 2 and "nope.json" in res.stderr
    assert not (tmp_path / "x.json").exists()
