"""Questions about the dialogue's world, asked after the dialogue, with single-word answers.

A question is a query tuple ``(kind, *args)``; ``answer(world, query)`` computes its one-word
answer from the world (and the woman's knowledge for belief queries); ``phrase(query)`` words it.
``queries_about(fact)`` lists the queries that probe what a round's gold fact says.
"""

from __future__ import annotations

from .facts import (
    WOMAN,
    AgentAt,
    AgentPath,
    AgentWent,
    HowMany,
    NotSure,
    ObjectAt,
    ObjectQuant,
    Put,
    PutThenWent,
    WhereAgent,
    WhereObj,
    Whether,
    WhoPut,
    positive,
)
from .render import explicit


def _yn(b):
    return "yes" if b else "no"


def _who(agent):
    return "the woman" if agent == WOMAN else agent


def answer(w, q, lex) -> str:
    kind = q[0]
    if kind == "visited":
        return _yn(w.visited(q[1], q[2]))
    if kind == "final":
        return w.cur[q[1]]
    if kind == "first":
        return w.prev[q[1]]
    if kind == "put":
        return _yn(w.putter[q[2]] == q[1] and w.obj_loc[q[2]] == q[3])
    if kind == "obj_loc":
        return w.obj_loc[q[1]]
    if kind == "obj_at":
        return _yn(w.obj_loc[q[1]] == q[2])
    if kind == "count":
        return lex.number(w.count_in(q[1], q[2]))
    if kind == "all_or_some":
        return "all" if w.count_in(q[1], q[2]) == w.obj_total[q[1]] else "some"
    if kind == "knows_obj_loc":
        return _yn(w.knows_var("obj_loc", q[1]))
    if kind == "believe_obj_loc":
        (loc,) = w.candidates("obj_loc", q[1])
        return loc
    if kind == "sure_agent":
        return _yn(not w.unsure(WhereAgent(q[1])))
    if kind == "believe_agent":
        (loc,) = w.candidates("cur", q[1])
        return loc
    if kind == "sure_count":
        return _yn(not w.unsure(HowMany(q[1], q[2])))
    if kind == "sure_whether":
        return _yn(not w.unsure(Whether(q[1])))
    if kind == "who_put":
        return w.putter[q[1]]
    if kind == "knows_who_put":
        return _yn(not w.unsure(WhoPut(q[1], q[2])))
    raise ValueError(f"unknown query kind {kind!r}")


def phrase(q, lex) -> str:
    kind = q[0]
    if kind == "visited":
        return f"was {_who(q[1])} in the {q[2]}"
    if kind == "final":
        return f"where did {_who(q[1])} go"
    if kind == "first":
        return f"where was {_who(q[1])} first"
    if kind == "put":
        return f"did {_who(q[1])} put the {q[2]} in the {q[3]}"
    if kind == "obj_loc":
        return f"where are the {q[1]}"
    if kind == "obj_at":
        return f"are the {q[1]} in the {q[2]}"
    if kind == "count":
        return f"how many {q[1]} are in the {q[2]}"
    if kind == "all_or_some":
        return f"are all or only some of the {q[1]} in the {q[2]}"
    if kind == "knows_obj_loc":
        return f"does the woman know where the {q[1]} are"
    if kind == "believe_obj_loc":
        return f"where does the woman believe the {q[1]} are"
    if kind == "sure_agent":
        return f"is the woman sure about where {_who(q[1])} went"
    if kind == "believe_agent":
        return f"where does the woman think {_who(q[1])} went finally"
    if kind == "sure_count":
        return f"is the woman sure about how many {q[1]} are in the {q[2]}"
    if kind == "who_put":
        return f"who put the {q[1]} in the {q[2]}"
    if kind == "knows_who_put":
        return f"does the woman know who put the {q[1]} in the {q[2]}"
    if kind == "sure_whether":
        # third person throughout: the clause is about the world, not the woman speaking
        clause = explicit(q[1], lex)
        if clause.startswith("I "):
            clause = "she " + clause[2:]
        return f"is the woman sure whether {clause}"
    raise ValueError(f"unknown query kind {kind!r}")


def queries_about(w, fact):
    """Queries probing the content of a gold fact (non-empty for every fact type)."""
    t = type(fact)
    if t is AgentAt:
        return [("visited", fact.agent, fact.loc)]
    if t is AgentWent:
        out = [("final", fact.agent)]
        if fact.agent != WOMAN:
            out.append(("believe_agent", fact.agent))
        return out
    if t is AgentPath:
        return [("first", fact.agent), ("final", fact.agent)]
    if t is Put:
        out = [("put", fact.agent, fact.obj, fact.loc)]
        if not fact.neg and fact.agent != WOMAN:
            out.append(("who_put", fact.obj, fact.loc))
        return out
    if t is PutThenWent:
        return [("final", fact.agent), ("put", fact.agent, fact.obj, fact.loc), ("obj_loc", fact.obj)]
    if t is ObjectAt:
        out = [("obj_at", fact.obj, fact.loc)]
        if not fact.neg:
            out += [("obj_loc", fact.obj), ("believe_obj_loc", fact.obj)]
        return out
    if t is ObjectQuant:
        if w.count_in(fact.obj, fact.loc) == 0:
            return [("obj_at", fact.obj, fact.loc)]
        return [
            ("count", fact.obj, fact.loc),
            ("all_or_some", fact.obj, fact.loc),
            ("obj_at", fact.obj, fact.loc),
        ]
    if t is NotSure:
        q = fact.query
        if isinstance(q, WhereAgent):
            return [("sure_agent", q.agent)]
        if isinstance(q, WhereObj):
            return [("knows_obj_loc", q.obj)]
        if isinstance(q, HowMany):
            return [("sure_count", q.obj, q.loc)]
        if isinstance(q, WhoPut):
            return [("knows_who_put", q.obj, q.loc)]
        return [("sure_whether", positive(q.fact))]
    raise ValueError(f"no queries for fact {fact!r}")
