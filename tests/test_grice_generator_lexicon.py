"""The GRICE generator's lexicon (pragexp.data.grice): only its words are written, the shipped lexicon is the
release's list with the documented changes, a custom one (dict or path) and the smallest one generate."""

from __future__ import annotations

import json

from grice_cases import GEN, LEX, shared, shipped_lexicon

from pragexp.data.grice.generator import (
    GriceGenerator,
)

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
