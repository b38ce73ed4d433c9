"""Distractor recipes for golds about what happened: where an agent was or went, who put an object where,
where an object is. Each recipe maps a gold fact and its round's slots (`distractors._Slots`) to weighted
candidate facts; the weights are the shares of the release's rounds with such a gold that offer the
candidate."""

from __future__ import annotations

from .epistemic import DontKnow, NotSure, WhereAgent, WhereObj, Whether
from .facts import (
    WOMAN,
    AgentAt,
    AgentPath,
    AgentWent,
    InContainer,
    ObjectAt,
    Put,
    PutBoth,
    PutThenWent,
    PutTogether,
    WasThenPut,
)

W = WOMAN


def _base(f, lex):
    return lex.base.get(f.verb, f.verb)


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


EVENT_RECIPES = {
    AgentAt: _agent_at,
    AgentWent: _agent_went,
    AgentPath: _agent_path,
    WasThenPut: _was_then_put,
    Put: _put,
    PutThenWent: _put_then_went,
    PutTogether: _put_together,
    PutBoth: _put_both,
    ObjectAt: _object_at,
}
