"""The three wrong candidates of a round, from the four strategies of the GRICE paper (sec. 4):

1. wrong coreferenced entity   (the woman instead of the agent, another object)
2. a true but irrelevant fact  (about the woman, or where the objects are, when the question is
                                about something else)
3. a wrong fact from context   (another location the round mentioned)
4. close but wrong             (negation flipped, some/all/number swapped, order swapped, known vs
                                not-sure swapped, the container instead of the place)

Each kind of gold fact has a recipe: candidate distractors with weights, the share of the release's
rounds with such a gold that offer that candidate (measured on the official dev excerpt), so the
options look like the release's. A candidate is accepted only if its key differs from the gold's (so
it is not a paraphrase), its sentence differs from every other option, and it is not both true and on
the question's topic (which would make it a second right answer). Always-false facts fill up.

Where the release words the positive of "did you leave ..." as "I leave the limes in the den" (base
form), the flipped distractor does too: it is never a gold, so a model learns that it is wrong.
"""

from __future__ import annotations

from .facts import (
    WOMAN,
    AgentAt,
    AgentPath,
    AgentWent,
    DontKnow,
    HowMany,
    InContainer,
    NotSure,
    ObjectAt,
    ObjectQuant,
    Put,
    PutBoth,
    PutThenWent,
    PutTogether,
    WasThenPut,
    WhereAgent,
    WhereObj,
    Whether,
)
from .rand import choice, shuffle
from .render import _RENDER

W = WOMAN


class _Slots:
    """The entities a recipe may use besides the gold's: L2 (another location of the round), L3 (one
    more), O2 (another object), A2 (an agent the answer named)."""

    __slots__ = ("w", "rng", "l1", "l2", "l3", "o2", "a2")

    def __init__(self, w, d, rng, l1, alt_loc, alt_agent, obj):
        self.w, self.rng, self.l1 = w, rng, l1
        if alt_loc is not None and alt_loc != l1:
            self.l2 = alt_loc
        else:
            seen = [x for x in d.locations if x != l1]
            self.l2 = choice(rng, seen) if seen and rng.random() < 0.6 else _draw(rng, w.locations, (l1,))
        self.l3 = _draw(rng, w.locations, (l1, self.l2))
        self.o2 = _draw(rng, d.objects if len(d.objects) > 2 else w.objects, (obj,))
        self.a2 = alt_agent


def _draw(rng, pool, avoid):
    """An element of pool not in avoid (pools hold several, so a few draws do)."""
    while True:
        x = pool[int(rng.random() * len(pool))]
        if x not in avoid:
            return x


def _base(f, lex):
    return lex.base.get(f.verb, f.verb)


def _num_other(rng, n):
    """A number word's value other than n (2..5, as the release's 'N of the limes')."""
    return choice(rng, [k for k in (2, 3, 4, 5) if k != n])


# --- recipes: gold -> [(weight, candidate fact), ...] --------------------------------------------


def _agent_at(g, s, lex):
    a, l1, l2, l3 = g.agent, g.loc, s.l2, s.l3
    bare = DontKnow(WhereAgent(a), True)
    if a == W:
        if g.neg:
            return [
                (0.78, AgentAt(W, l1)),
                (0.7, bare),
                (0.68, AgentAt(W, l2)),
                (0.63, AgentAt(W, l2, True)),
                (0.11, AgentAt(W, l3, True)),
                (0.08, AgentAt(W, l3)),
            ]
        return [
            (0.8, bare),
            (0.8, AgentAt(W, l2, True)),
            (0.7, AgentAt(W, l1, True)),
            (0.5, AgentAt(W, l2)),
            (0.2, AgentAt(W, l3)),
        ]
    if g.neg:
        return [
            (0.61, DontKnow(Whether(AgentAt(a, l1)))),
            (0.59, AgentAt(a, l1)),
            (0.59, bare),
            (0.54, AgentAt(W, l1, True)),
            (0.47, AgentAt(W, l1)),
            (0.07, AgentAt(a, l2, True)),
            (0.06, AgentAt(W, l2)),
            (0.04, AgentAt(a, l2)),
        ]
    return [
        (0.59, AgentAt(W, l2)),
        (0.55, bare),
        (0.53, AgentAt(W, l2, True)),
        (0.44, DontKnow(WhereAgent(a))),
        (0.27, AgentAt(W, l1, True)),
        (0.26, AgentAt(W, l1)),
        (0.17, AgentAt(W, l3)),
        (0.16, AgentAt(W, l3, True)),
    ]


def _agent_went(g, s, lex):
    a, l1, l2 = g.agent, g.loc, s.l2
    return [
        (0.82, AgentAt(a, l2, True)),
        (0.82, DontKnow(WhereAgent(a), True)),
        (0.64, AgentAt(a, l2)),
        (0.55, AgentAt(a, l1, True)),
    ]


def _agent_path(g, s, lex):
    a, l1, l2, l3 = g.agent, g.first, g.second, s.l3
    bare = DontKnow(WhereAgent(a), True)
    if a == W:
        return [
            (0.56, AgentAt(W, l2)),
            (0.48, AgentAt(W, l2, True)),
            (0.47, AgentPath(W, l2, l1, g.verb)),
            (0.45, bare),
            (0.36, AgentAt(W, l3)),
            (0.29, AgentAt(W, l3, True)),
            (0.22, AgentAt(W, l1)),
            (0.15, AgentAt(W, l1, True)),
        ]
    return [
        (0.47, AgentPath(W, l2, l1, g.verb)),
        (0.44, AgentPath(a, l2, l1, g.verb)),
        (0.4, AgentAt(W, l1)),
        (0.4, DontKnow(WhereAgent(a))),
        (0.39, AgentAt(W, l1, True)),
        (0.39, AgentPath(W, l1, l2, g.verb)),
        (0.3, bare),
        (0.11, AgentAt(W, l3, True)),
    ]


def _was_then_put(g, s, lex):
    l1, l2 = g.loc, s.l2
    return [
        (0.67, AgentAt(W, l2, True)),
        (0.56, AgentAt(W, l1, True)),
        (0.5, DontKnow(WhereAgent(W), True)),
        (0.44, AgentAt(W, l2)),
        (0.33, AgentAt(W, l1)),
    ]


def _put(g, s, lex):
    a, o1, l1, l2, l3, o2 = g.agent, g.obj, g.loc, s.l2, s.l3, s.o2
    base = _base(g, lex)
    doubt = DontKnow(Whether(Put(a, o1, l1, False, base)))
    if not g.neg:
        out = [
            (0.77, ObjectAt(o1, l1)),
            (0.46, Put(a, o1, l1, True, base)),
            (0.38, Put(W, o1, l1, True, base)),
            (0.23, Put(W, o1, l1, False, base)),
            (0.2, ObjectAt(o1, l2)),
        ]
        return out + ([(0.46, doubt)] if a != W else [(0.3, Put(W, o2, l1, True, base))])
    if a == W:
        return [
            (0.7, Put(W, o1, l1, False, base)),
            (0.64, ObjectAt(o1, l1)),
            (0.31, ObjectAt(o1, l2)),
            (0.28, ObjectAt(o1, l2, True)),
            (0.2, Put(W, o2, l1, True, base)),
            (0.2, Put(W, o2, l1, False, base)),
            (0.15, Put(W, o1, l2, True, base)),
            (0.12, Put(W, o1, l2, False, base)),
            (0.1, ObjectAt(o1, l3)),
            (0.08, ObjectAt(o1, l3, True)),
            (0.05, AgentAt(W, l1)),
        ]
    return [
        (0.52, doubt),
        (0.5, Put(a, o1, l1, False, base)),
        (0.5, Put(W, o1, l1, False, base)),
        (0.46, ObjectAt(o1, l1)),
        (0.44, Put(W, o1, l1, True, base)),
        (0.09, Put(a, o2, l1, True, base)),
        (0.09, Put(a, o1, l2, True, base)),
        (0.07, AgentAt(a, l1)),
        (0.06, Put(W, o2, l1, True, base)),
        (0.06, Put(a, o1, l2, False, base)),
    ]


def _put_then_went(g, s, lex):
    a, o1, l1, l2, l3 = g.agent, g.obj, g.loc, g.dest, s.l3
    base = lex.base.get(g.put_verb, g.put_verb)
    pv, gv = g.put_verb, g.go_verb
    if a == W:
        return [
            (0.62, PutThenWent(W, o1, l2, l1, pv, gv)),
            (0.42, ObjectAt(o1, l3)),
            (0.33, DontKnow(WhereObj(o1))),
            (0.31, NotSure(WhereObj(o1))),
            (0.25, Put(W, o1, l1, True, base)),
            (0.24, ObjectAt(o1, l1)),
            (0.22, ObjectAt(o1, l3, True)),
            (0.2, ObjectAt(o1, l2)),
            (0.13, Put(W, o1, l1, False, base)),
            (0.1, ObjectAt(o1, l2, True)),
        ]
    return [
        (0.48, PutThenWent(a, o1, l2, l1, pv, gv)),
        (0.46, PutThenWent(W, o1, l1, l2, pv, gv)),
        (0.44, PutThenWent(W, o1, l2, l1, pv, gv)),
        (0.29, DontKnow(WhereObj(o1))),
        (0.21, NotSure(WhereObj(o1))),
        (0.19, Put(a, o1, l1, True, base)),
        (0.17, ObjectAt(o1, l1)),
        (0.14, DontKnow(Whether(Put(a, o1, l1, False, base)))),
        (0.13, ObjectAt(o1, l3)),
        (0.1, ObjectAt(o1, l2)),
        (0.08, Put(W, o1, l1, True, base)),
        (0.08, Put(a, o1, l1, False, base)),
    ]


def _put_together(g, s, lex):
    o1, l1, l2, l3 = g.obj, g.loc, s.l2, s.l3
    return [
        (0.77, ObjectAt(o1, l2)),
        (0.57, NotSure(WhereObj(o1))),
        (0.43, ObjectAt(o1, l3)),
        (0.37, DontKnow(WhereObj(o1))),
        (0.29, ObjectAt(o1, l2, True)),
        (0.09, ObjectAt(o1, l1, True)),
    ]


def _put_both(g, s, lex):
    a, o1, l1 = g.agent, g.obj, g.loc
    base = _base(g, lex)
    out = [
        (0.73, ObjectAt(o1, l1)),
        (0.45, Put(a, o1, l1, False, base)),
        (0.36, Put(W, o1, l1, True, base)),
        (0.27, Put(a, o1, l1, True, base)),
        (0.18, Put(W, o1, l1, False, base)),
        (0.18, ObjectAt(g.other, l1, True)),
        (0.2, ObjectAt(o1, s.l2)),
    ]
    return out + ([(0.27, DontKnow(Whether(Put(a, o1, l1, False, base))))] if a != W else [])


def _object_at(g, s, lex):
    o1, l1, l2, l3 = g.obj, g.loc, s.l2, s.l3
    colour, kind = s.w.container[l1]
    return [
        (0.62, DontKnow(WhereObj(o1))),
        (0.62, NotSure(WhereObj(o1))),
        (0.61, ObjectAt(o1, l1, True)),
        (0.56, ObjectAt(o1, l2)),
        (0.52, InContainer(o1, colour, kind)),
        (0.04, ObjectAt(o1, l3)),
    ]


def _quant(g, s, lex):
    o1, l1, l2, o2, q, n = g.obj, g.loc, s.l2, s.o2, g.quant, s.w.obj_count[g.obj]
    rng = s.rng
    all_of = ObjectQuant(o1, l1, "all", "of")
    n_of = ObjectQuant(o1, l1, _num_other(rng, n), "of")
    unsure_n = NotSure(HowMany(o1, l1))
    absent = ObjectAt(o1, l1, True)
    elsewhere, other_obj = ObjectQuant(o1, l2, "all", "of"), ObjectQuant(o2, l1, "all", "of")
    if isinstance(q, int):
        if g.form == "bare":
            return [
                (0.7, unsure_n),
                (0.63, n_of),
                (0.37, absent),
                (0.33, all_of),
                (0.19, other_obj),
                (0.15, elsewhere),
            ]
        out = [
            (0.66, NotSure(Whether(ObjectQuant(o1, l1, "some")))),
            (0.66, all_of),
            (0.65, absent),
            (0.61, unsure_n),
            (0.16, elsewhere),
            (0.12, other_obj),
        ]
        return out + ([(0.13, AgentAt(s.a2, l1, True))] if s.a2 else [])
    if q == "all" and g.form == "of":
        return [
            (0.62, ObjectQuant(o1, l1, "some")),
            (0.57, NotSure(Whether(ObjectQuant(o1, l1, "all", "of")))),
            (0.43, n_of),
            (0.43, unsure_n),
            (0.43, absent),
            (0.38, ObjectQuant(o1, l1, "not_all", "of")),
            (0.14, other_obj),
        ]
    if q == "all":
        return [
            (0.45, ObjectQuant(o1, l1, "some")),
            (0.43, AgentAt(W, l1, True)),
            (0.39, absent),
            (0.37, NotSure(Whether(ObjectQuant(o1, l1, "some")))),
            (0.35, unsure_n),
            (0.35, n_of),
            (0.12, elsewhere),
            (0.11, other_obj),
        ]
    if q == "not_all":
        return [
            (0.5, all_of),
            (0.49, unsure_n),
            (0.48, n_of),
            (0.46, NotSure(Whether(ObjectQuant(o1, l1, "all", "of")))),
            (0.44, AgentAt(W, l1, True)),
            (0.41, absent),
            (0.12, elsewhere),
            (0.08, other_obj),
        ]
    return [
        (0.69, NotSure(Whether(ObjectQuant(o1, l1, "some")))),
        (0.62, n_of),
        (0.62, all_of),
        (0.54, unsure_n),
        (0.27, elsewhere),
        (0.23, absent),
    ]


def _unsure_about_count(o1, l1, s):
    rng, n = s.rng, s.w.obj_count[o1]
    wrong = [k for k in (2, 3, 4, 5) if k != s.w.count_in(o1, l1)]
    return [
        (1.0, ObjectQuant(o1, l1, choice(rng, wrong), "bare")),
        (0.61, ObjectQuant(o1, l1, "all", "of")),
        (0.54, ObjectQuant(o1, l1, _num_other(rng, n), "of")),
        (0.51, ObjectAt(o1, l1, True)),
        (0.16, ObjectQuant(o1, s.l2, "all", "of")),
        (0.15, ObjectQuant(s.o2, l1, "all", "of")),
    ]


def _epistemic(g, s, lex):
    q, dont = g.query, type(g) is DontKnow
    if type(q) is WhereAgent:
        a, l1, l2 = q.agent, s.l1, s.l2
        out = [
            (0.66, AgentAt(W, l1)),
            (0.65, AgentAt(W, l1, True)),
            (0.62, DontKnow(q, True)),
            (0.39, AgentAt(W, l2)),
            (0.34, AgentAt(W, l2, True)),
        ]
        return out + ([] if dont else [(0.29, DontKnow(q))])
    if type(q) is WhereObj:
        o1, l1, l2 = q.obj, s.l1, s.l2
        if dont:
            return [
                (1.0, ObjectAt(o1, l2)),
                (0.8, ObjectAt(o1, l1)),
                (0.7, ObjectAt(o1, l1, True)),
                (0.3, ObjectAt(o1, l2, True)),
            ]
        return [
            (0.51, AgentAt(W, l1)),
            (0.47, AgentAt(W, l1, True)),
            (0.39, ObjectAt(o1, l1)),
            (0.35, AgentAt(W, l2, True)),
            (0.33, ObjectAt(o1, l1, True)),
            (0.32, AgentAt(W, l2)),
            (0.3, ObjectAt(o1, l2)),
            (0.21, ObjectAt(o1, l2, True)),
            (0.05, ObjectAt(o1, s.l3)),
        ]
    if type(q) is HowMany:
        if dont:
            return [
                (0.67, ObjectQuant(q.obj, q.loc, "all", "of")),
                (0.67, ObjectQuant(q.obj, q.loc, _num_other(s.rng, 0), "of")),
                (0.3, ObjectAt(q.obj, q.loc, True)),
                (0.17, ObjectQuant(s.o2, q.loc, "all", "of")),
                (0.17, ObjectQuant(q.obj, s.l2, "all", "of")),
            ]
        return _unsure_about_count(q.obj, q.loc, s)
    f = q.fact
    if type(f) is AgentAt:
        a, l1, l2 = f.agent, f.loc, s.l2
        if dont:
            return [
                (1.0, AgentAt(W, l1)),
                (1.0, AgentAt(W, l1, True)),
                (0.5, AgentAt(a, l1)),
                (0.5, AgentAt(W, l2)),
            ]
        return [
            (0.65, AgentAt(a, l1, True)),
            (0.62, AgentAt(a, l1)),
            (0.54, AgentAt(W, l1)),
            (0.51, AgentAt(W, l1, True)),
            (0.47, DontKnow(WhereAgent(a), True)),
            (0.05, AgentAt(W, l2)),
            (0.05, AgentAt(W, l2, True)),
            (0.05, AgentAt(a, l2)),
        ]
    if type(f) is Put:
        a, o1, l1, l2, o2, base = f.agent, f.obj, f.loc, s.l2, s.o2, f.verb
        if dont:
            return [
                (0.6, Put(W, o1, l1, False, base)),
                (0.56, Put(a, o1, l1, False, base)),
                (0.56, Put(a, o1, l1, True, base)),
                (0.5, ObjectAt(o1, l1)),
                (0.48, Put(W, o1, l1, True, base)),
                (0.08, Put(W, o2, l1, True, base)),
                (0.08, Put(W, o2, l1, False, base)),
            ]
        return [
            (0.58, Put(a, o1, l1, False, base)),
            (0.48, Put(a, o1, l1, True, base)),
            (0.36, Put(W, o1, l1, True, base)),
            (0.33, DontKnow(q)),
            (0.28, Put(a, o1, l2, True, base)),
            (0.26, Put(a, o1, l2, False, base)),
            (0.25, Put(W, o1, l1, False, base)),
            (0.17, ObjectAt(o1, l1)),
            (0.12, Put(W, o2, l1, False, base)),
            (0.1, Put(W, o2, l1, True, base)),
        ]
    if type(f) is ObjectQuant:  # "I don't know if all / some of the limes are in the den"
        o1, l1 = f.obj, f.loc
        return [
            (0.58, ObjectQuant(o1, l1, _num_other(s.rng, 0), "of")),
            (0.58, ObjectQuant(o1, l1, "all", "of")),
            (0.25, ObjectQuant(o1, s.l2, "all", "of")),
            (0.3, ObjectAt(o1, l1, True)),
            (0.17, ObjectQuant(s.o2, l1, "all", "of")),
        ]
    return []


_RECIPES = {
    AgentAt: _agent_at,
    AgentWent: _agent_went,
    AgentPath: _agent_path,
    WasThenPut: _was_then_put,
    Put: _put,
    PutThenWent: _put_then_went,
    PutTogether: _put_together,
    PutBoth: _put_both,
    ObjectAt: _object_at,
    ObjectQuant: _quant,
    NotSure: _epistemic,
    DontKnow: _epistemic,
}


def _gold_loc(g):
    if type(g) in (NotSure, DontKnow):
        q = g.query
        g = q.fact if type(q) is Whether else q
    return getattr(g, "loc", None) or getattr(g, "first", None)


def _weighted_order(rng, pairs):
    """Candidates in a random order where heavier ones tend to come first (Efraimidis-Spirakis keys)."""
    rnd = rng.random
    keyed = [(rnd() ** (1.0 / wt), i) for i, (wt, _) in enumerate(pairs)]
    keyed.sort(reverse=True)
    return [pairs[i][1] for _, i in keyed]


def _fallback(w, rng):
    """Always-false facts, so that three distractors can always be found (rarely needed)."""
    out = [ObjectAt(o, loc) for o in w.objects for loc in w.locations if loc != w.obj_loc[o]]
    shuffle(rng, out)
    return out


def choose_distractors(gold, gold_text, turn, w, d, lex, rng, k=3):
    """k (fact, sentence) pairs for a round whose question has topic ``turn.topic``."""
    l1 = _gold_loc(gold)
    if l1 is None:
        l1 = turn.alt_loc or choice(rng, w.locations)
    slots = _Slots(w, d, rng, l1, turn.alt_loc, turn.alt_agent, getattr(gold, "obj", None))
    topic = turn.topic
    keys, texts, chosen = {gold.key()}, {gold_text}, []
    for candidates in (_weighted_order(rng, _RECIPES[type(gold)](gold, slots, lex)), None):
        for f in candidates if candidates is not None else _fallback(w, rng):
            key = f.key()
            if key in keys or (topic in f.topics() and f.holds(w)):
                continue
            text = _RENDER[type(f)](f, lex)
            if text in texts:
                continue
            keys.add(key)
            texts.add(text)
            chosen.append((f, text))
            if len(chosen) == k:
                return chosen
    raise RuntimeError("could not find enough distractors")  # unreachable with >= 2 objects
