"""Questions about the dialogue's world, asked after the dialogue, with single-word answers.

A question is a query tuple ``(kind, *args)``; ``answer(world, query)`` computes its one-word answer
from the world and the woman's knowledge (what she would answer: "unknown" when she does not know);
``phrase(query)`` words it as the release does (its slips included: "how many are the limes", "who
put the limes the den"; see the README). ``queries_about(world, fact)`` lists the weighted queries that
probe what a round's gold fact is about.
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
)
from .world import KNOWN

_MARKERS = ("finally", "in the end", "lastly")


def _yn(b):
    return "yes" if b else "no"


def _who(agent):
    return WOMAN if agent == WOMAN else agent


def _did_put(w, a, o, loc):
    return w.holds(Put(a, o, loc))


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


def phrase(q, lex) -> str:
    kind = q[0]
    if kind in (
        "knows_where",
        "where_obj",
        "believe_where",
        "obj_at",
        "who_put",
        "knows_who_put",
        "did_put",
        "knows_if_put",
    ):
        o = (
            q[1]
            if kind in ("knows_where", "where_obj", "believe_where", "obj_at", "who_put", "knows_who_put")
            else q[2]
        )
        be = "is" if lex.is_singular(o) else "are"
    if kind == "knows_where":
        head = "does the woman know" if q[2] == "know" else "is the woman sure about"
        return f"{head} where the {q[1]} {be}"
    if kind == "where_obj":
        return f"where {be} the {q[1]}"
    if kind == "believe_where":
        return f"where does the woman {q[2]} the {q[1]} {be}"
    if kind == "obj_at":
        return f"{be} the {q[1]} in the {q[2]}"
    if kind == "any_at":
        return f"is there any {q[1]} in the {q[2]}"
    if kind == "some_at":
        return f"are some of the {q[1]} in the {q[2]}"
    if kind == "all_at":
        return f"are all the {q[1]} in the {q[2]}"
    if kind == "knows_count":
        head = "does the woman know" if q[2] == "know" else "is the woman sure about"
        return f"{head} how many are the {q[1]}"  # (sic)
    if kind == "count_word":
        return f"how many {q[1]} are in the {q[2]}"
    if kind == "believe_count":
        return f"how many {q[1]} does the woman believe are there in the {q[2]}"
    if kind == "agent_believe_count":
        return f"how many {q[2]} does {q[1]} believe are there in the {q[3]}"
    if kind == "knows_who_put":
        if q[3] == "know":
            return f"does the woman know who put the {q[1]} in the {q[2]}"
        return f"is the woman sure about who put the {q[1]} the {q[2]}"  # (sic)
    if kind == "who_put":
        return f"who put the {q[1]} in the {q[2]}"
    if kind == "did_put":
        return f"did {_who(q[1])} put the {q[2]} in the {q[3]}"
    if kind == "knows_if_put":
        return f"does the woman know if {q[4] or _who(q[1])} put the {q[2]} in the {q[3]}"
    if kind == "visited":
        return f"was {_who(q[1])} in the {q[2]}"
    if kind == "visited_final":
        return f"was {_who(q[1])} in the {q[2]} {q[3]}"
    if kind == "final":
        return f"where was {_who(q[1])} {q[2]}"
    if kind == "where_unknown":
        return f"where was {_who(q[1])}"
    if kind == "believe_final":
        return f"where does the woman {q[2]} {_who(q[1])} was {q[3]}"
    if kind == "knows_final":
        head = "does the woman know" if q[2] == "know" else "is the woman sure about"
        return f"{head} where {_who(q[1])} was{' ' + q[3] if q[3] else ''}"
    raise ValueError(f"unknown query kind {kind!r}")


# --- which queries probe a round ------------------------------------------------------------------


def _about_object(w, o, loc, rng_pick):
    """Queries about where object o is (loc: the place the round named)."""
    out = []
    form = rng_pick(("know", "sure"))
    out.append((2.3, ("knows_where", o, form)))
    if w.knows_var("obj_loc", o):
        out += [(0.45, ("where_obj", o)), (0.66, ("believe_where", o, rng_pick(("believe", "think"))))]
        if loc is not None:
            out.append((0.54, ("obj_at", o, loc)))
    return out


def _about_count(w, o, loc, rng_pick, number_said):
    """Queries about how many of o are in loc (loc is where they are, and she knows it)."""
    out = [(0.85, ("knows_count", o, rng_pick(("know", "sure")))), (0.38, ("any_at", o, loc))]
    if w.knows_var("obj_count", o):
        n, total = w.obj_count[o], w.obj_total[o]
        out += [
            (0.29, ("count_word", o, loc, "number" if number_said and n < total else "scalar")),
            (0.28, ("some_at", o, loc)),
            (0.22, ("all_at", o, loc)),
            (0.15, ("believe_count", o, loc)),
        ]
    return out + _about_object(w, o, loc, rng_pick)[:1]


def _about_put(w, a, o, loc, rng_pick, lex):
    out = [(0.25, ("did_put", a, o, loc))]
    if a != WOMAN and w.knows(Put(a, o, loc)):
        pron = lex.pronoun.get(a) if rng_pick((0, 1)) else None
        out.append((0.24, ("knows_if_put", a, o, loc, pron)))
    if w.knows_var("putter", o) and w.knows_var("obj_loc", o):
        where = w.obj_loc[o]
        out += [(0.2, ("who_put", o, where)), (0.45, ("knows_who_put", o, where, rng_pick(("know", "sure"))))]
    else:
        out.append((0.2, ("knows_who_put", o, w.obj_loc[o], rng_pick(("know", "sure")))))
    return out + _about_object(w, o, loc, rng_pick)


def _about_agent(w, a, loc, rng_pick):
    out = []
    if loc is not None:
        out.append((0.52 if a == WOMAN else 0.32, ("visited", a, loc)))
    if a == WOMAN:
        out.append((0.4, ("final", WOMAN, rng_pick(_MARKERS))))
        # she asks about a place she was, as the release does
        out.append((0.3, ("visited", WOMAN, rng_pick((w.prev[WOMAN], w.cur[WOMAN])))))
        return out
    if w.knows_var("cur", a):
        marker = rng_pick(_MARKERS)
        out += [
            (0.22, ("final", a, marker)),
            (0.43, ("believe_final", a, rng_pick(("believe", "think")), marker)),
            (0.45, ("knows_final", a, rng_pick(("know", "sure")), rng_pick(_MARKERS))),
        ]
        if loc is not None:
            out.append((0.04, ("visited_final", a, loc, "finally")))
    else:
        out += [(0.16, ("where_unknown", a)), (0.17, ("knows_final", a, rng_pick(("know", "sure")), ""))]
    return out


def queries_about(w, fact, rng_pick, lex, teller=None):
    """Weighted queries [(weight, query)] probing the content of a round's gold fact (never empty).
    ``rng_pick(seq)`` chooses surface variants; ``teller`` is an agent the answer quoted."""
    t = type(fact)
    if t in (NotSure, DontKnow):
        q = fact.query
        if type(q) is WhereAgent:
            return _about_agent(w, q.agent, None, rng_pick)
        if type(q) is WhereObj:
            return _about_object(w, q.obj, None, rng_pick)
        if type(q) is HowMany:
            return _about_count(w, q.obj, q.loc, rng_pick, False)
        fact = q.fact
        t = type(fact)
        if t is ObjectQuant:
            return _about_count(w, fact.obj, fact.loc, rng_pick, False)
    if t in (AgentAt, AgentWent):
        return _about_agent(w, fact.agent, fact.loc, rng_pick)
    if t is AgentPath:
        return _about_agent(w, fact.agent, fact.second, rng_pick)
    if t is WasThenPut:
        return _about_agent(w, fact.agent, fact.loc, rng_pick) + _about_put(
            w, fact.agent, fact.obj, fact.loc, rng_pick, lex
        )
    if t in (Put, PutThenWent, PutBoth):
        return _about_put(w, fact.agent, fact.obj, fact.loc, rng_pick, lex)
    if t is PutTogether:
        return _about_put(w, WOMAN, fact.obj, fact.loc, rng_pick, lex)
    if t in (ObjectAt, InContainer):
        loc = getattr(fact, "loc", None)
        out = _about_object(w, fact.obj, loc, rng_pick)
        if t is ObjectAt and not fact.neg and w.obj_total[fact.obj] > 1:
            out.append((0.38, ("any_at", fact.obj, loc)))
        return out
    if t is ObjectQuant:
        out = _about_count(w, fact.obj, fact.loc, rng_pick, isinstance(fact.quant, int))
        if teller is not None and fact.quant == "all":
            out.append((0.6, ("agent_believe_count", teller, fact.obj, fact.loc)))
        return out
    raise ValueError(f"no queries for fact {fact!r}")
