"""Questions about the dialogue's world, asked after the dialogue, with single-word answers.

A question is a query tuple ``(kind, *args)``; ``answer(world, query)`` computes its one-word answer
from the world and the woman's knowledge (what she would answer: "unknown" when she does not know);
``phrase(query)`` words it as the release does (its slips included: "how many are the limes", "who
put the limes the den"; see the README). ``queries_about(world, fact)`` lists the weighted queries that
probe what a round's gold fact is about.
"""

from __future__ import annotations

from .epistemic import DontKnow, HowMany, NotSure, WhereAgent, WhereObj, Whether
from .facts import (
    WOMAN,
    AgentAt,
    AgentPath,
    AgentWent,
    InContainer,
    ObjectAt,
    ObjectQuant,
    Put,
    PutBoth,
    PutThenWent,
    PutTogether,
    WasThenPut,
)
from .world import KNOWN

_MARKERS = ("finally", "in the end", "lastly")


def _yn(b):
    return "yes" if b else "no"


def _who(agent):
    return WOMAN if agent == WOMAN else agent


def answer(w, q, lex) -> str:
    kind = q[0]
    if kind in ("knows_where",):
        return _yn(w.uncertainty(WhereObj(q[1])) == KNOWN)
    if kind in ("where_obj", "believe_where"):
        return w.obj_loc[q[1]]
    if kind == "obj_at":
        return _yn(w.obj_loc[q[1]] == q[2])
    if kind in ("any_at", "some_at"):
        return _yn(w.count_in(q[1], q[2]) > 0)
    if kind == "all_at":
        return _yn(w.count_in(q[1], q[2]) == w.obj_total[q[1]])
    if kind == "knows_count":
        return _yn(w.uncertainty(HowMany(q[1], w.obj_loc[q[1]])) == KNOWN)
    if kind == "count_word":
        n = w.count_in(q[1], q[2])
        if q[3] == "number":
            return lex.number(n)
        return "all" if n == w.obj_total[q[1]] else "some"
    if kind == "believe_count":
        return lex.number(w.count_in(q[1], q[2]))
    if kind == "agent_believe_count":
        n = w.count_in(q[2], q[3])
        return "all" if n == w.obj_total[q[2]] else lex.number(n)
    if kind == "knows_who_put":
        return _yn(w.knows_var("putter", q[1]))
    if kind == "who_put":
        return "woman" if w.putter[q[1]] == WOMAN else w.putter[q[1]]
    if kind == "did_put":
        f = Put(q[1], q[2], q[3])
        return _yn(w.holds(f)) if w.knows(f) else "unknown"
    if kind == "knows_if_put":
        return _yn(w.knows(Put(q[1], q[2], q[3])))
    if kind == "visited":
        f = AgentAt(q[1], q[2])
        return _yn(w.holds(f)) if w.knows(f) else "unknown"
    if kind == "visited_final":
        return _yn(w.cur[q[1]] == q[2])
    if kind in ("final", "believe_final"):
        return w.cur[q[1]]
    if kind == "where_unknown":
        return "unknown"
    if kind == "knows_final":
        return _yn(w.uncertainty(WhereAgent(q[1])) == KNOWN)
    raise ValueError(f"unknown query kind {kind!r}")


def _knowing(verb: str) -> str:
    """The head of a question about the woman's knowledge: "know" or (the release's other wording) "sure"."""
    return "does the woman know" if verb == "know" else "is the woman sure about"


def _be(obj: str, lex) -> str:
    return "is" if lex.is_singular(obj) else "are"


def _knows_who_put(q, lex) -> str:
    place = "in the" if q[3] == "know" else "the"  # (sic): the release drops "in" after "sure about"
    return f"{_knowing(q[3])} who put the {q[1]} {place} {q[2]}"


# How the release words each kind of query, from the query's arguments.
_PHRASES = {
    "knows_where": lambda q, lex: f"{_knowing(q[2])} where the {q[1]} {_be(q[1], lex)}",
    "where_obj": lambda q, lex: f"where {_be(q[1], lex)} the {q[1]}",
    "believe_where": lambda q, lex: f"where does the woman {q[2]} the {q[1]} {_be(q[1], lex)}",
    "obj_at": lambda q, lex: f"{_be(q[1], lex)} the {q[1]} in the {q[2]}",
    "any_at": lambda q, lex: f"is there any {q[1]} in the {q[2]}",
    "some_at": lambda q, lex: f"are some of the {q[1]} in the {q[2]}",
    "all_at": lambda q, lex: f"are all the {q[1]} in the {q[2]}",
    "knows_count": lambda q, lex: f"{_knowing(q[2])} how many are the {q[1]}",  # (sic)
    "count_word": lambda q, lex: f"how many {q[1]} are in the {q[2]}",
    "believe_count": lambda q, lex: f"how many {q[1]} does the woman believe are there in the {q[2]}",
    "agent_believe_count": lambda q, lex: f"how many {q[2]} does {q[1]} believe are there in the {q[3]}",
    "knows_who_put": _knows_who_put,
    "who_put": lambda q, lex: f"who put the {q[1]} in the {q[2]}",
    "did_put": lambda q, lex: f"did {_who(q[1])} put the {q[2]} in the {q[3]}",
    "knows_if_put": lambda q, lex: (
        f"does the woman know if {q[4] or _who(q[1])} put the {q[2]} in the {q[3]}"
    ),
    "visited": lambda q, lex: f"was {_who(q[1])} in the {q[2]}",
    "visited_final": lambda q, lex: f"was {_who(q[1])} in the {q[2]} {q[3]}",
    "final": lambda q, lex: f"where was {_who(q[1])} {q[2]}",
    "where_unknown": lambda q, lex: f"where was {_who(q[1])}",
    "believe_final": lambda q, lex: f"where does the woman {q[2]} {_who(q[1])} was {q[3]}",
    "knows_final": lambda q, lex: f"{_knowing(q[2])} where {_who(q[1])} was{' ' + q[3] if q[3] else ''}",
}


def phrase(q, lex) -> str:
    if q[0] not in _PHRASES:
        raise ValueError(f"unknown query kind {q[0]!r}")
    return _PHRASES[q[0]](q, lex)


# --- which queries probe a round ------------------------------------------------------------------
# Weights: how often the release asks each question after a round with such a gold fact (its QA
# matched to the round naming the same entities, on the official dev excerpt).


class _Q:
    """Builds the queries of one round; drops those the woman could not answer with a word."""

    __slots__ = ("w", "pick", "lex", "out")

    def __init__(self, w, pick, lex):
        self.w, self.pick, self.lex, self.out = w, pick, lex, []

    def add(self, weight, *query):
        if weight > 0:
            self.out.append((weight, query))

    def knows_where(self, wt, o):
        self.add(wt, "knows_where", o, self.pick(("know", "sure")))

    def where(self, wt, o):
        """Where o is, asked two ways (only when she knows)."""
        if self.w.knows_var("obj_loc", o):
            self.add(wt * 0.45, "where_obj", o)
            self.add(wt * 0.55, "believe_where", o, self.pick(("believe", "think")))

    def obj_at(self, wt, o, loc):
        if self.w.knows_var("obj_loc", o) and loc is not None:
            self.add(wt, "obj_at", o, loc)

    def count(self, wt, kind, o, loc, *extra):
        """A question about how many of o are in loc (only when she knows the number)."""
        w = self.w
        if w.knows_var("obj_loc", o) and w.knows_var("obj_count", o) and w.obj_total[o] > 1:
            self.add(wt, kind, o, loc, *extra)

    def knows_count(self, wt, o):
        if self.w.knows_var("obj_loc", o) and self.w.obj_total[o] > 1:
            self.add(wt, "knows_count", o, self.pick(("know", "sure")))

    def who(self, wt, o, asked_wt=0.0):
        w = self.w
        if not w.knows_var("obj_loc", o):
            return
        where = w.obj_loc[o]
        self.add(wt + asked_wt, "knows_who_put", o, where, self.pick(("know", "sure")))
        if w.knows_var("putter", o):
            # the release asks "who put" mostly of what another agent put
            self.add(wt * (0.3 if w.putter[o] == WOMAN else 1.0), "who_put", o, where)

    def did(self, wt, a, o, loc):
        self.add(wt, "did_put", a, o, loc)

    def knows_if(self, wt, a, o, loc):
        if a != WOMAN and self.w.knows(Put(a, o, loc)):
            # the release sometimes writes the agent's pronoun here
            self.add(wt, "knows_if_put", a, o, loc, self.lex.pronoun.get(a) if self.pick((0, 1)) else None)

    def woman(self, wt):
        """Where the woman was: "was the woman in the den" (a place she was), "where was she finally"."""
        w = self.w
        self.add(wt * 0.6, "visited", WOMAN, self.pick((w.prev[WOMAN], w.cur[WOMAN])))
        self.add(wt * 0.4, "final", WOMAN, self.pick(_MARKERS))

    def agent(self, wt, a, loc=None):
        """Where agent a went in the end, asked as the release does: with "finally" and the like when
        the woman knows, without when she does not (then the answer is "unknown" or "no")."""
        w = self.w
        if a == WOMAN:
            return self.woman(wt)
        if w.knows_var("cur", a):
            marker = self.pick(_MARKERS)
            self.add(wt * 0.25, "final", a, marker)
            self.add(wt * 0.35, "believe_final", a, self.pick(("believe", "think")), marker)
            self.add(wt * 0.4, "knows_final", a, self.pick(("know", "sure")), self.pick(_MARKERS))
        else:
            self.add(wt * 0.4, "where_unknown", a)
            self.add(wt * 0.6, "knows_final", a, self.pick(("know", "sure")), "")
        if loc is not None:
            self.add(wt * 0.18, "visited", a, loc)


def _about_uncertainty(b, fact):
    """A gold "I am not sure ..." (NotSure) or "I don't know ..." (DontKnow)."""
    q, unsure = fact.query, type(fact) is NotSure
    if type(q) is Whether:
        f = q.fact
        if type(f) is Put:
            if unsure:
                b.knows_where(0.85, f.obj)
                b.woman(0.05)
                b.agent(0.1, f.agent, f.loc)
            else:
                b.did(0.04, f.agent, f.obj, f.loc)
                b.who(0.0, f.obj, 0.53)
                b.knows_where(0.25, f.obj)
                b.agent(0.18, f.agent)
        elif type(f) is AgentAt:
            b.agent(1.0, f.agent, f.loc)
        else:  # how many: "I don't know if all the limes are in the den"
            q = HowMany(f.obj, f.loc)
    if type(q) is WhereAgent:
        b.agent(1.0, q.agent)
    elif type(q) is WhereObj:
        b.knows_where(0.95, q.obj)
        b.woman(0.05)
    elif type(q) is HowMany:
        b.knows_count(0.65, q.obj)
        b.knows_where(0.15, q.obj)
        b.where(0.08, q.obj)
        b.obj_at(0.04, q.obj, q.loc)
        b.who(0.0, q.obj, 0.04)
        b.woman(0.04)


def _about_number(b, w, fact):
    """A gold with a number: "two of the limes are in the den"."""
    o, loc = fact.obj, fact.loc
    b.count(0.13 if fact.form == "of" else 0.09, "believe_count", o, loc)
    b.knows_count(0.18 if fact.form == "of" else 0.36, o)
    b.knows_where(0.12, o)
    b.count(0.075, "any_at", o, loc)
    b.count(0.065, "some_at", o, loc)
    b.count(0.05, "count_word", o, loc, "number")
    b.who(0.04, o, 0.03)
    b.where(0.03, o)
    b.woman(0.04)
    if w.knows_var("putter", o):
        b.did(0.04, w.putter[o], o, loc)


# any_at, some_at, count_word, all_at: the weights of the questions after a scalar gold
_SCALAR_WEIGHTS = {
    "all": (0.16, 0.15, 0.12, 0.12),
    "not_all": (0.17, 0.1, 0.14, 0.1),
    "some": (0.07, 0.07, 0.35, 0.12),
}


def _about_scalar(b, w, fact, teller):
    """A gold with a scalar word: "all / not all / some of the limes are in the den"."""
    o, loc, quant = fact.obj, fact.loc, fact.quant
    any_w, some_w, word_w, all_w = _SCALAR_WEIGHTS[quant]
    b.count(any_w, "any_at", o, loc)
    b.count(some_w, "some_at", o, loc)
    b.count(word_w, "count_word", o, loc, "scalar")
    b.count(all_w, "all_at", o, loc)
    b.knows_where(0.1, o)
    b.where(0.08, o)
    b.obj_at(0.06, o, loc)
    b.woman(0.05)
    if teller is not None and quant == "all" and w.knows_var("obj_count", o):
        b.add(0.1, "agent_believe_count", teller, o, loc)


def _about_put(b, fact):
    """A gold about putting an object somewhere (alone, then going, both, together, after being there)."""
    t = type(fact)
    a = WOMAN if t in (PutTogether, WasThenPut) else fact.agent
    o, loc = fact.obj, fact.loc
    b.who(0.08, o, 0.06)
    b.where(0.2, o)
    b.knows_where(0.08, o)
    # "did Mia put ..." is asked of what was done (the release's answers are mostly yes)
    b.did(0.015 if t is Put and fact.neg else 0.08, a, o, loc)
    b.knows_if(0.07, a, o, loc)
    b.obj_at(0.1, o, fact.dest if t is PutThenWent else loc)
    if t is PutTogether:
        b.did(0.2, fact.agent, o, loc)
    if t in (PutBoth, PutTogether) or (t is Put and not fact.neg):
        b.count(0.1, "any_at", o, loc)
    b.agent(0.08, a, loc if t is Put and a != WOMAN else None)


def queries_about(w, fact, rng_pick, lex, teller=None):
    """Weighted queries [(weight, query)] probing the content of a round's gold fact (never empty).
    ``rng_pick(seq)`` chooses surface variants; ``teller`` is an agent the answer quoted."""
    b = _Q(w, rng_pick, lex)
    t = type(fact)
    if t in (NotSure, DontKnow):
        _about_uncertainty(b, fact)
    elif t is ObjectQuant and isinstance(fact.quant, int):
        _about_number(b, w, fact)
    elif t is ObjectQuant:
        _about_scalar(b, w, fact, teller)
    elif t in (ObjectAt, InContainer):
        o = fact.obj
        b.where(0.44, o)
        b.knows_where(0.15, o)
        if t is ObjectAt:
            b.obj_at(0.1, o, fact.loc)
        b.obj_at(0.06, o, rng_pick([x for x in w.locations if x != w.obj_loc[o]]))
        b.woman(0.05)
    elif t in (Put, PutThenWent, PutBoth, PutTogether, WasThenPut):
        _about_put(b, fact)
    elif t in (AgentAt, AgentWent):
        b.agent(1.0, fact.agent, fact.loc if fact.agent != WOMAN else None)
    elif t is AgentPath:
        b.agent(1.0, fact.agent, rng_pick((fact.first, fact.second)))
    else:
        raise ValueError(f"no queries for fact {fact!r}")
    return b.out
