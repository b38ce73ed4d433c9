"""Property tests of the GRICE grammar generator (pragexp.data.grice).

Truth is re-checked here with an evaluator written independently of the generator's own ``holds``:
facts are evaluated on plain dicts, and the woman's knowledge by enumerating every world she holds
possible for the variables a fact reads (listed here, not taken from the generator).

The suite stands alone: tests that compare with the official release's files (../shared/samples)
skip, saying so, when that folder is absent.
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
from pragexp.data.grice.generator.grammar import SUPPORT
from pragexp.data.grice.generator.lexicon import DEFAULT_LEXICON_PATH
from pragexp.data.grice.generator.render import explicit
from pragexp.data.grice.generator.writer import write_records

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


# ------------------------------- independent evaluator -----------------------------------------


def valuation(w):
    return {
        "prev": dict(w.prev),
        "cur": dict(w.cur),
        "putter": dict(w.putter),
        "partner": dict(w.partner),
        "obj_loc": dict(w.obj_loc),
        "obj_count": dict(w.obj_count),
        "obj_total": dict(w.obj_total),
    }


def reads(f):
    """The world variables a fact or query depends on."""
    name = type(f).__name__
    if name == "Whether":
        return reads(f.fact)
    if name in ("NotSure", "DontKnow"):
        return reads(f.query)
    if name in ("AgentAt", "AgentPath"):
        return [("prev", f.agent), ("cur", f.agent)]
    if name in ("AgentWent", "WhereAgent"):
        return [("cur", f.agent)]
    if name in ("Put", "PutTogether"):
        return [("putter", f.obj), ("obj_loc", f.obj)]
    if name == "PutBoth":
        return [("putter", f.obj), ("obj_loc", f.obj), ("putter", f.other), ("obj_loc", f.other)]
    if name == "PutThenWent":
        return [("putter", f.obj), ("obj_loc", f.obj), ("prev", f.agent), ("cur", f.agent)]
    if name == "WasThenPut":
        return [("prev", f.agent), ("putter", f.obj), ("obj_loc", f.obj)]
    if name in ("ObjectAt", "WhereObj"):
        return [("obj_loc", f.obj)]
    if name in ("ObjectQuant", "HowMany"):
        return [("obj_loc", f.obj), ("obj_count", f.obj)]
    assert name == "InContainer", name
    return []


def possible_valuations(w, f):
    """Every world the woman holds possible, varying the variables f reads."""
    slots = sorted(set(reads(f)))
    for values in itertools.product(*(w.possible[t][k] for t, k in slots)):
        v = valuation(w)
        for (t, k), value in zip(slots, values, strict=True):
            v[t][k] = value
        yield v


def count_in(v, obj, loc):
    return v["obj_count"][obj] if v["obj_loc"][obj] == loc else 0


def did_put(v, a, o, loc):
    return a in (v["putter"][o], v["partner"][o]) and v["obj_loc"][o] == loc


def query_value(v, q, w):
    name = type(q).__name__
    if name == "WhereAgent":
        return v["cur"][q.agent]
    if name == "WhereObj":
        return v["obj_loc"][q.obj]
    if name == "HowMany":
        return count_in(v, q.obj, q.loc)
    assert name == "Whether"
    return truth(q.fact, v, w)


def knowledge(w, q):
    """known / partial / none, recomputed: none when she has no knowledge of a variable that matters."""
    if len({query_value(v, q, w) for v in possible_valuations(w, q)}) == 1:
        return "known"
    varying = [(t, k) for t, k in set(reads(q)) if len(w.possible[t][k]) > 1]
    return "none" if any(w.level[t][k] == "none" for t, k in varying) else "partial"


def truth(f, v, w):
    name = type(f).__name__
    if name == "AgentAt":
        return (f.loc in (v["prev"][f.agent], v["cur"][f.agent])) != f.neg
    if name == "AgentWent":
        return v["cur"][f.agent] == f.loc
    if name == "AgentPath":
        return (v["prev"][f.agent], v["cur"][f.agent]) == (f.first, f.second)
    if name == "Put":
        return did_put(v, f.agent, f.obj, f.loc) != f.neg
    if name == "PutTogether":
        return {v["putter"][f.obj], v["partner"][f.obj]} == {f.agent, WOMAN} and v["obj_loc"][f.obj] == f.loc
    if name == "PutBoth":
        return did_put(v, f.agent, f.obj, f.loc) and did_put(v, f.agent, f.other, f.loc)
    if name == "WasThenPut":
        return v["prev"][f.agent] == f.loc and did_put(v, f.agent, f.obj, f.loc)
    if name == "PutThenWent":
        return (
            did_put(v, f.agent, f.obj, f.loc) and v["prev"][f.agent] == f.loc and v["cur"][f.agent] == f.dest
        )
    if name == "ObjectAt":
        return (v["obj_loc"][f.obj] == f.loc) != f.neg
    if name == "InContainer":
        return False
    if name == "ObjectQuant":
        n, total = count_in(v, f.obj, f.loc), v["obj_total"][f.obj]
        return {"all": n == total, "some": 0 < n < total, "not_all": n < total}.get(f.quant, n == f.quant)
    if name == "NotSure":
        return knowledge(w, f.query) == "partial"
    assert name == "DontKnow", name
    return knowledge(w, f.query) == "none"


def true_in_world(w, f):
    return truth(f, valuation(w), w)


def woman_knows(w, f):
    return len({truth(f, v, w) for v in possible_valuations(w, f)}) == 1


def qa_expected(w, q):
    """One-word answer of a query, recomputed from the raw world tables and the woman's knowledge."""
    from pragexp.data.grice.generator import epistemic as E
    from pragexp.data.grice.generator import facts as F

    v, kind = valuation(w), q[0]
    yn = {True: "yes", False: "no"}
    if kind == "knows_where":
        return yn[knowledge(w, E.WhereObj(q[1])) == "known"]
    if kind in ("where_obj", "believe_where"):
        assert len(w.possible["obj_loc"][q[1]]) == 1
        return w.obj_loc[q[1]]
    if kind == "obj_at":
        return yn[w.obj_loc[q[1]] == q[2]]
    if kind in ("any_at", "some_at"):
        return yn[count_in(v, q[1], q[2]) > 0]
    if kind == "all_at":
        return yn[count_in(v, q[1], q[2]) == w.obj_total[q[1]]]
    if kind == "knows_count":
        return yn[knowledge(w, E.HowMany(q[1], w.obj_loc[q[1]])) == "known"]
    if kind == "count_word":
        n = count_in(v, q[1], q[2])
        if q[3] == "number":
            return LEX.numbers[n - 1]
        return "all" if n == w.obj_total[q[1]] else "some"
    if kind == "believe_count":
        return LEX.numbers[count_in(v, q[1], q[2]) - 1]
    if kind == "agent_believe_count":
        n = count_in(v, q[2], q[3])
        return "all" if n == w.obj_total[q[2]] else LEX.numbers[n - 1]
    if kind == "knows_who_put":
        return yn[len(w.possible["putter"][q[1]]) == 1]
    if kind == "who_put":
        return "woman" if w.putter[q[1]] == WOMAN else w.putter[q[1]]
    if kind in ("did_put", "knows_if_put"):
        f = F.Put(q[1], q[2], q[3])
        known = woman_knows(w, f)
        if kind == "knows_if_put":
            return yn[known]
        return yn[did_put(v, q[1], q[2], q[3])] if known else "unknown"
    if kind == "visited":
        f = F.AgentAt(q[1], q[2])
        return yn[true_in_world(w, f)] if woman_knows(w, f) else "unknown"
    if kind == "visited_final":
        return yn[w.cur[q[1]] == q[2]]
    if kind in ("final", "believe_final"):
        assert len(w.possible["cur"][q[1]]) == 1
        return w.cur[q[1]]
    if kind == "where_unknown":
        assert len(w.possible["cur"][q[1]]) > 1
        return "unknown"
    if kind == "knows_final":
        return yn[len(w.possible["cur"][q[1]]) == 1]
    raise AssertionError(kind)


# ------------------------------- per-round properties ------------------------------------------


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_gold_true_known_and_rendered(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    w = d.world
    for r, rec in zip(d.rounds, d.record["dialog"], strict=True):
        assert true_in_world(w, r.gold), (rec, r.gold)
        kind = type(r.gold).__name__
        if kind not in ("NotSure", "DontKnow"):
            assert woman_knows(w, r.gold), (rec, r.gold)  # she never states what she does not know
        else:  # what she does not know: an ignorance round, or a plain "I have no idea"
            assert rec["implicature"] == "ignorance" or (
                rec["implicature"] == "explicit" and kind == "DontKnow"
            ), rec
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
            assert f.key() != r.gold.key(), (f, r.gold)  # not the gold's meaning in other words
            # a true distractor must not answer the round's question (else: 2 right answers)
            if true_in_world(w, f):
                assert r.topic not in f.topics(), (rec["question"], f, r.gold)


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
        assert any(s == r["subtopic"] for _, s in SUPPORT[r["implicature"]])
    for q in rec["question"]:
        assert set(q) == {"question", "answer", "implicature"}
        assert q["implicature"] in IMPLICATURE_TYPES
    assert ("test_condition" in rec) == (split == "test")
    json.loads(json.dumps(rec))


def test_schema_matches_official_sample():
    official = json.loads(shared("impl_dial_sample.json").read_text())
    ours = GEN.dialogue("test", 0, 0).record
    o_dial = official["data"]["dialogs"][0]
    assert set(o_dial) <= set(ours)
    assert set(o_dial["dialog"][0]) <= set(ours["dialog"][0])
    assert set(o_dial["question"][0]) <= set(ours["question"][0])
    assert {d["test_condition"] for d in official["data"]["dialogs"]} == {"re", "st", "li", "ig", "cb"}


def test_official_qa_answer_words_are_generated():
    """Every answer word of the release's questions (abstracted to its kind) is one we produce."""
    data = json.loads(shared("official_dev/impl_dial_v0.1_cb.json").read_text())
    names, locs, nums = set(LEX.agents), set(LEX.locations), set(LEX.numbers)

    def kind(a):
        return "AGENT" if a in names else "LOC" if a in locs else "NUM" if a in nums else a

    official = {kind(q["answer"]) for d in data["data"]["dialogs"] for q in d["question"]}
    ours = {kind(q["answer"]) for rec in GEN.dialogs("test", 500, seed=1) for q in rec["question"]}
    assert official <= ours, official - ours


# ------------------------------- split structure -----------------------------------------------


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


# ------------------------------- lexicon -------------------------------------------------------

FUNCTION_WORDS = set(
    "a all also am and any are at back believe but can did didn't do does don't end find finally for "
    "get go have he her him how i i'm idea if in is it know least likely lastly many move no not of or "
    "put said saw see she some sure the them then there they think to together was were what where who "
    "woman yes you unknown about".split()
)


def test_lexicon_words_only():
    """Every word generated is a lexicon word (or a form of one) or a function word."""
    vocab = (
        set(w.lower() for w in LEX.agents)
        | set(x.lower() for x in LEX.locations)
        | {w for o in LEX.objects for w in o.split()}
        | {w for o in LEX.singulars for w in o.split()}
        | {w for _, k in LEX.container_kinds for w in k.split()}
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


# The shipped lexicon is the release's, as ../shared/samples/grice/lexicon.json lists it, with what the
# release's text shows beyond that list (see pragexp/data/grice/README.md).
LEXICON_CHANGES = {
    "agents": ({"Logan"}, set()),
    "objects_plural": ({"green peppers", "sweet potatoes"}, {"peppers"}),
    "containers": ({"pantry"}, set()),
}
PUT_VERBS_DROPPED = {"dropped"}  # never used by the release


def test_shipped_lexicon_is_the_release_list_with_documented_changes():
    official = json.loads(shared("lexicon.json").read_text())
    ours = shipped_lexicon()
    assert set(ours) == set(official)
    for key in official:
        if key == "verb_synonyms":
            assert set(official[key]["put"]) - set(ours[key]["put"]) == PUT_VERBS_DROPPED
            assert set(ours[key]["put"]) <= set(official[key]["put"])
            assert ours[key]["went"] == official[key]["went"]
            continue
        added, removed = LEXICON_CHANGES.get(key, (set(), set()))
        assert set(ours[key]) - set(official[key]) == added, key
        assert set(official[key]) - set(ours[key]) == removed, key


def test_custom_lexicon_dict_and_path(tmp_path):
    raw = shipped_lexicon()
    raw["agents"] = ["Zed", "Yara", "Xavi", "Wim"]
    raw["objects_plural"] = ["kiwis", "figs", "dates", "nuts", "olives", "limes"]
    g = GriceGenerator(lexicon=raw)
    d = g.dialogue("train", 0, 0)
    assert set(d.world.others) <= set(raw["agents"])
    assert {g.lex.singular_of.get(o, o) for o in raw["objects_plural"]} >= set(d.world.objects) - set(
        raw["objects_plural"]
    )
    p = tmp_path / "lex.json"
    p.write_text(json.dumps(raw))
    assert GriceGenerator(lexicon=str(p)).dialogue("train", 0, 0).record == d.record


def test_smallest_lexicon_generates(tmp_path):
    raw = shipped_lexicon()
    raw.update(
        agents=raw["agents"][:4],
        locations=raw["locations"][:6],
        objects_plural=raw["objects_plural"][:6],
        containers=raw["containers"][:1],
        colours=raw["colours"][:1],
    )
    g = GriceGenerator(lexicon=raw)
    for split in ("train", "test"):
        for k in range(20):
            d = g.dialogue(split, k, 3)
            # four different options even with so few words to draw distractors from
            assert all(len(set(r.options)) == 4 for r in d.rounds)


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
    code = (
        "import sys; from pragexp.data.grice.generator import write_dataset; "
        "write_dataset(sys.argv[1], 'dev', 6, 3)"
    )
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
    raw = shipped_lexicon()
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
