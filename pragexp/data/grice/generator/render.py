"""Explicit forms: facts rendered as full sentences, every reference resolved (names, no pronouns).

String building only (no regex): this runs for every gold answer and every distractor.
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


def name(agent: str) -> str:
    return "I" if agent == WOMAN else agent


def _agent_at(f, lex):
    return f"{name(f.agent)} was {'not ' if f.neg else ''}in the {f.loc}"


def _agent_went(f, lex):
    return f"{name(f.agent)} {f.verb} to the {f.loc}"


def _agent_path(f, lex):
    return f"{name(f.agent)} {f.verb} to the {f.first} and then the {f.second}"


def _put(f, lex):
    if f.neg:
        return f"{name(f.agent)} didn't {lex.base[f.verb]} the {f.obj} in the {f.loc}"
    return f"{name(f.agent)} {f.verb} the {f.obj} in the {f.loc}"


def _put_then_went(f, lex):
    return f"{name(f.agent)} {f.put_verb} the {f.obj} in the {f.loc} and then {f.go_verb} to the {f.dest}"


def _object_at(f, lex):
    return f"the {f.obj} are {'not ' if f.neg else ''}in the {f.loc}"


def _object_quant(f, lex):
    q = f.quant
    if q == "all":
        head = f"all the {f.obj}"
    elif q == "some":
        head = f"some of the {f.obj}"
    elif q == "not_all":
        head = f"not all the {f.obj}"
    elif q == 0:
        head = f"none of the {f.obj}"
    else:
        head = f"{lex.number(q)} of the {f.obj}"
    return f"{head} {'is' if q == 1 else 'are'} in the {f.loc}"


def _not_sure(f, lex):
    q = f.query
    if isinstance(q, WhereAgent):
        return f"{f.phrase} where {name(q.agent)} went"
    if isinstance(q, WhereObj):
        return f"{f.phrase} where the {q.obj} are"
    if isinstance(q, HowMany):
        return f"{f.phrase} how many {q.obj} are in the {q.loc}"
    if isinstance(q, WhoPut):
        return f"{f.phrase} who put the {q.obj} in the {q.loc}"
    return f"{f.phrase} if {explicit(positive(q.fact), lex)}"


_RENDER = {
    AgentAt: _agent_at,
    AgentWent: _agent_went,
    AgentPath: _agent_path,
    Put: _put,
    PutThenWent: _put_then_went,
    ObjectAt: _object_at,
    ObjectQuant: _object_quant,
    NotSure: _not_sure,
}


def explicit(fact, lex) -> str:
    """The explicit sentence of a fact."""
    return _RENDER[type(fact)](fact, lex)


__all__ = ["explicit", "name", "Whether"]
