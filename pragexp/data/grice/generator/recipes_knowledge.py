"""Distractor recipes for golds about amounts (a number, all, not all, some) and for the woman's uncertainty
("I am not sure ...", "I don't know ..."). Each recipe maps a gold fact and its round's slots
(`distractors._Slots`) to weighted candidate facts, as in recipes_events.py."""

from __future__ import annotations

from typing import NamedTuple

from .epistemic import DontKnow, HowMany, NotSure, WhereAgent, WhereObj, Whether
from .facts import WOMAN, AgentAt, ObjectAt, ObjectQuant, Put
from .rand import choice

W = WOMAN


def _num_other(rng, n):
    """A number word's value other than n (2..5, as the release's 'N of the limes')."""
    return choice(rng, [k for k in (2, 3, 4, 5) if k != n])


class _Amounts(NamedTuple):
    """The candidates every amount recipe draws on (built once per round: one of them takes a draw)."""

    all_of: ObjectQuant  # "all of the limes are in the den"
    n_of: ObjectQuant  # another number of them
    unsure_n: NotSure  # "I am not sure how many ..."
    absent: ObjectAt  # "the limes are not in the den"
    elsewhere: ObjectQuant  # all of them in another place
    other_obj: ObjectQuant  # all of another object


def _amounts(g, s) -> _Amounts:
    o1, l1 = g.obj, g.loc
    return _Amounts(
        all_of=ObjectQuant(o1, l1, "all", "of"),
        n_of=ObjectQuant(o1, l1, _num_other(s.rng, s.w.obj_count[o1]), "of"),
        unsure_n=NotSure(HowMany(o1, l1)),
        absent=ObjectAt(o1, l1, True),
        elsewhere=ObjectQuant(o1, s.l2, "all", "of"),
        other_obj=ObjectQuant(s.o2, l1, "all", "of"),
    )


def _quant(g, s, lex):
    c = _amounts(g, s)
    if isinstance(g.quant, int):
        return _number(g, s, c)
    return _scalar(g, c)


def _number(g, s, c: _Amounts):
    """A gold with a number: "two (of the) limes are in the den"."""
    if g.form == "bare":
        return [
            (0.7, c.unsure_n),
            (0.63, c.n_of),
            (0.37, c.absent),
            (0.33, c.all_of),
            (0.19, c.other_obj),
            (0.15, c.elsewhere),
        ]
    out = [
        (0.66, NotSure(Whether(ObjectQuant(g.obj, g.loc, "some")))),
        (0.66, c.all_of),
        (0.65, c.absent),
        (0.61, c.unsure_n),
        (0.16, c.elsewhere),
        (0.12, c.other_obj),
    ]
    return out + ([(0.13, AgentAt(s.a2, g.loc, True))] if s.a2 else [])


def _scalar(g, c: _Amounts):
    """A gold with a scalar word: "all (of) / not all of / some of the limes are in the den"."""
    o1, l1, q = g.obj, g.loc, g.quant
    if q == "all" and g.form == "of":
        return [
            (0.62, ObjectQuant(o1, l1, "some")),
            (0.57, NotSure(Whether(ObjectQuant(o1, l1, "all", "of")))),
            (0.43, c.n_of),
            (0.43, c.unsure_n),
            (0.43, c.absent),
            (0.38, ObjectQuant(o1, l1, "not_all", "of")),
            (0.14, c.other_obj),
        ]
    if q == "all":
        return [
            (0.45, ObjectQuant(o1, l1, "some")),
            (0.43, AgentAt(W, l1, True)),
            (0.39, c.absent),
            (0.37, NotSure(Whether(ObjectQuant(o1, l1, "some")))),
            (0.35, c.unsure_n),
            (0.35, c.n_of),
            (0.12, c.elsewhere),
            (0.11, c.other_obj),
        ]
    if q == "not_all":
        return [
            (0.5, c.all_of),
            (0.49, c.unsure_n),
            (0.48, c.n_of),
            (0.46, NotSure(Whether(ObjectQuant(o1, l1, "all", "of")))),
            (0.44, AgentAt(W, l1, True)),
            (0.41, c.absent),
            (0.12, c.elsewhere),
            (0.08, c.other_obj),
        ]
    return [
        (0.69, NotSure(Whether(ObjectQuant(o1, l1, "some")))),
        (0.62, c.n_of),
        (0.62, c.all_of),
        (0.54, c.unsure_n),
        (0.27, c.elsewhere),
        (0.23, c.absent),
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
    """A gold "I am not sure ..." or "I don't know ...": the recipe of the query it is about."""
    q, dont = g.query, type(g) is DontKnow
    if type(q) is Whether:
        recipe = _UNSURE_WHETHER.get(type(q.fact))
        return recipe(q, s, dont) if recipe else []
    return _UNSURE_OF[type(q)](q, s, dont)


def _unsure_where_agent(q, s, dont):
    out = [
        (0.66, AgentAt(W, s.l1)),
        (0.65, AgentAt(W, s.l1, True)),
        (0.62, DontKnow(q, True)),
        (0.39, AgentAt(W, s.l2)),
        (0.34, AgentAt(W, s.l2, True)),
    ]
    return out + ([] if dont else [(0.29, DontKnow(q))])


def _unsure_where_obj(q, s, dont):
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


def _unsure_how_many(q, s, dont):
    if dont:
        return [
            (0.67, ObjectQuant(q.obj, q.loc, "all", "of")),
            (0.67, ObjectQuant(q.obj, q.loc, _num_other(s.rng, 0), "of")),
            (0.3, ObjectAt(q.obj, q.loc, True)),
            (0.17, ObjectQuant(s.o2, q.loc, "all", "of")),
            (0.17, ObjectQuant(q.obj, s.l2, "all", "of")),
        ]
    return _unsure_about_count(q.obj, q.loc, s)


def _unsure_whether_agent_at(q, s, dont):
    a, l1, l2 = q.fact.agent, q.fact.loc, s.l2
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


def _unsure_whether_put(q, s, dont):
    f = q.fact
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


def _unsure_whether_amount(q, s, dont):
    """ "I don't know if all / some of the limes are in the den"."""
    o1, l1 = q.fact.obj, q.fact.loc
    return [
        (0.58, ObjectQuant(o1, l1, _num_other(s.rng, 0), "of")),
        (0.58, ObjectQuant(o1, l1, "all", "of")),
        (0.25, ObjectQuant(o1, s.l2, "all", "of")),
        (0.3, ObjectAt(o1, l1, True)),
        (0.17, ObjectQuant(s.o2, l1, "all", "of")),
    ]


# query type -> recipe; for a Whether query, the type of the fact it asks about
_UNSURE_OF = {WhereAgent: _unsure_where_agent, WhereObj: _unsure_where_obj, HowMany: _unsure_how_many}
_UNSURE_WHETHER = {
    AgentAt: _unsure_whether_agent_at,
    Put: _unsure_whether_put,
    ObjectQuant: _unsure_whether_amount,
}


KNOWLEDGE_RECIPES = {ObjectQuant: _quant, NotSure: _epistemic, DontKnow: _epistemic}
