"""Explicit forms: facts rendered as full sentences, every reference resolved (names, no pronouns).

String building only (no regex): this runs for every gold answer and every distractor. A verb field
is written as it is (templates pass the past tense for what someone did, and the question's base form
where the release writes one, e.g. "I am not sure if Mia leave the limes in the den"); negations
always take the base form.
"""

from __future__ import annotations

from .epistemic import DontKnow, HowMany, NotSure, WhereAgent, WhereObj
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
    positive,
)


def name(agent: str) -> str:
    return "I" if agent == WOMAN else agent


def _be(obj, lex):
    return "is" if lex.is_singular(obj) else "are"


def _agent_at(f, lex):
    return f"{name(f.agent)} was {'not ' if f.neg else ''}in the {f.loc}"


def _agent_went(f, lex):
    return f"{name(f.agent)} {f.verb} to the {f.loc}"


def _agent_path(f, lex):
    return f"{name(f.agent)} {f.verb} to the {f.first} and then the {f.second}"


def _put(f, lex):
    if f.neg:
        return f"{name(f.agent)} didn't {lex.base.get(f.verb, f.verb)} the {f.obj} in the {f.loc}"
    return f"{name(f.agent)} {f.verb} the {f.obj} in the {f.loc}"


def _put_then_went(f, lex):
    return f"{name(f.agent)} {f.put_verb} the {f.obj} in the {f.loc} and then {f.go_verb} to the {f.dest}"


def _put_together(f, lex):
    return f"{f.agent} and I {f.verb} the {f.obj} in the {f.loc} together"


def _put_both(f, lex):
    return f"{name(f.agent)} {f.verb} the {f.obj} and also the {f.other} in the {f.loc}"


def _was_then_put(f, lex):
    return f"{name(f.agent)} was in the {f.loc} and then {f.verb} the {f.obj} there"


def _object_at(f, lex):
    return f"the {f.obj} {_be(f.obj, lex)} {'not ' if f.neg else ''}in the {f.loc}"


def _in_container(f, lex):
    return f"the {f.obj} {_be(f.obj, lex)} in the {f.colour} {f.kind}"


def _object_quant(f, lex):
    q, of = f.quant, f.form == "of"
    if q == "all":
        head = f"all of the {f.obj}" if of else f"all the {f.obj}"
    elif q == "not_all":
        head = f"not all of the {f.obj}" if of else f"not all the {f.obj}"
    elif q == "some":
        head = f"some of the {f.obj}"
    elif q == 0:
        head = f"none of the {f.obj}"
    elif f.form == "bare":
        head = f"{lex.number(q)} {f.obj}"
    else:
        head = f"{lex.number(q)} of the {f.obj}"
    return f"{head} {'is' if q == 1 else 'are'} in the {f.loc}"


def _clause(q, lex):
    """What the woman is unsure of, as a clause: "where the limes are", "if Mia was in the den"."""
    if isinstance(q, WhereAgent):
        return f"where {name(q.agent)} was"
    if isinstance(q, WhereObj):
        return f"where the {q.obj} {_be(q.obj, lex)}"
    if isinstance(q, HowMany):
        return f"how many {q.obj} are in the {q.loc}"
    return f"if {explicit(positive(q.fact), lex)}"


def _not_sure(f, lex):
    return f"I am not sure {_clause(f.query, lex)}"


def _dont_know(f, lex):
    return "I don't know" if f.bare else f"I don't know {_clause(f.query, lex)}"


_RENDER = {
    AgentAt: _agent_at,
    AgentWent: _agent_went,
    AgentPath: _agent_path,
    Put: _put,
    PutThenWent: _put_then_went,
    PutTogether: _put_together,
    PutBoth: _put_both,
    WasThenPut: _was_then_put,
    ObjectAt: _object_at,
    InContainer: _in_container,
    ObjectQuant: _object_quant,
    NotSure: _not_sure,
    DontKnow: _dont_know,
}


def explicit(fact, lex) -> str:
    """The explicit sentence of a fact."""
    return _RENDER[type(fact)](fact, lex)


__all__ = ["explicit", "name"]
