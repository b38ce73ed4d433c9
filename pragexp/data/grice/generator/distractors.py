"""The three wrong candidates of a round, from the four strategies of the GRICE paper (sec. 4):

1. wrong coreferenced entity   (another agent / "I", another object)
2. a true but irrelevant fact  (true, but about another entity than the question)
3. a wrong fact from context   (another location that was mentioned)
4. close but wrong             (negation flipped, some/all/number swapped, order swapped,
                                known vs not-sure swapped)

A candidate is accepted only if its key differs from the gold's (so it is not a paraphrase), its
sentence differs from every other option, and it is not both true and on the gold's topic (which
would make it a second correct answer).
"""

from __future__ import annotations

from itertools import permutations

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
)
from .rand import choice, randint, shuffle
from .render import _RENDER


def _with(g, field, value):
    """g with one field replaced; a cheap ``_replace`` (this runs for every candidate)."""
    i = g._fields.index(field)
    return tuple.__new__(type(g), g[:i] + (value,) + g[i + 1 :])


def _at(g, i, value):
    return tuple.__new__(type(g), g[:i] + (value,) + g[i + 1 :])


# Per fact type, precomputed: position of the agent / object slot, and the location slots with the
# slot a new value must differ from (a route never goes from a place to the same place).
# (Epistemic facts are handled through what they are about: their query, or the fact in Whether.)
_AGENT_AT = {
    t: t._fields.index("agent") for t in (AgentAt, AgentWent, AgentPath, Put, PutThenWent, WhereAgent)
}
_OBJ_AT = {
    t: t._fields.index("obj") for t in (Put, PutThenWent, ObjectAt, ObjectQuant, WhereObj, HowMany, WhoPut)
}
_LOC_SLOTS = {
    AgentAt: ((1, None),),
    AgentWent: ((1, None),),
    Put: ((2, None),),
    ObjectAt: ((1, None),),
    ObjectQuant: ((1, None),),
    AgentPath: ((1, 2), (2, 1)),
    PutThenWent: ((2, 3), (3, 2)),
    HowMany: ((1, None),),
    WhoPut: ((1, None),),
}


def _unwrap(g):
    """(what to alter, how to wrap it back): "I am not sure if Mia was in the den" is altered
    through "Mia was in the den", giving e.g. "I am not sure if I was in the den"."""
    if type(g) is not NotSure:
        return g, None
    q = g.query
    if type(q) is Whether:
        return q.fact, lambda f: NotSure(Whether(f), g.phrase)
    return q, lambda x: NotSure(x, g.phrase)


def _swap_entities(g, w, d, rng):
    """Strategy 1: same predicate, another agent or object (one that was talked about if possible)."""
    g, wrap = _unwrap(g)
    f = _swap_entity(g, w, d, rng)
    return wrap(f) if wrap is not None and f is not None else f


def _swap_entity(g, w, d, rng):
    t = type(g)
    i, j = _AGENT_AT.get(t), _OBJ_AT.get(t)
    if i is not None and (j is None or rng.random() < 0.5):
        agent = g[i]
        pool = [a for a in (d.agents or w.others) if a != agent]
        if pool and rng.random() < 0.6:
            return _at(g, i, choice(rng, pool))
        return _at(g, i, WOMAN if agent != WOMAN else choice(rng, w.others))
    if j is not None:
        obj = g[j]
        return _at(
            g, j, choice(rng, [o for o in (d.objects if len(d.objects) > 1 else w.objects) if o != obj])
        )
    return None


def _swap_locations(g, w, d, rng):
    """Strategy 3: a location from the context instead of the right one."""
    g, wrap = _unwrap(g)
    f = _swap_location(g, w, d, rng)
    return wrap(f) if wrap is not None and f is not None else f


def _swap_location(g, w, d, rng):
    slots = _LOC_SLOTS.get(type(g))
    if slots is None:
        return None
    i, partner = choice(rng, slots)
    cur = g[i]
    avoid = g[partner] if partner is not None else None
    loc = d.last_loc if rng.random() < 0.5 else choice(rng, w.locations)
    if loc is None or loc == cur or loc == avoid:
        return None
    return _at(g, i, loc)


_QUANTS = ("all", "some", "not_all", 1, 2, 3, 4, 5)


def _phrase(rng):
    return "I don't know" if rng.random() < 0.5 else "I am not sure"


def _close_but_wrong(g, w, d, rng):
    """Strategy 4: a minimal change of meaning (one variant, drawn at random)."""
    t = type(g)
    r = rng.random()
    if t is AgentAt or t is ObjectAt or t is Put:
        if r < 0.5:
            return _with(g, "neg", not g.neg)
        if r < 0.75 and not g.neg:
            return NotSure(Whether(g), _phrase(rng))
        if t is ObjectAt:
            return ObjectQuant(g.obj, g.loc, choice(rng, ("all", "some", randint(rng, 1, 5))))
        if t is AgentAt:
            return NotSure(WhereAgent(g.agent), _phrase(rng))
        return ObjectAt(g.obj, g.loc, not g.neg)
    if t is AgentWent:
        return AgentAt(g.agent, g.loc, True) if r < 0.5 else NotSure(WhereAgent(g.agent), _phrase(rng))
    if t is AgentPath:
        return AgentPath(g.agent, g.second, g.first, g.verb) if r < 0.6 else AgentAt(g.agent, g.second, True)
    if t is PutThenWent:
        if r < 0.5:
            return PutThenWent(g.agent, g.obj, g.dest, g.loc, g.put_verb, g.go_verb)
        return ObjectAt(g.obj, g.dest) if r < 0.75 else ObjectAt(g.obj, g.loc, True)
    if t is ObjectQuant:
        if r < 0.6:
            return ObjectQuant(g.obj, g.loc, choice(rng, _QUANTS))
        return ObjectAt(g.obj, g.loc, True) if r < 0.8 else NotSure(HowMany(g.obj, g.loc), _phrase(rng))
    if t is NotSure:
        q = g.query
        if isinstance(q, Whether):
            return _with(q.fact, "neg", r < 0.5)
        if isinstance(q, WhereObj):
            loc = w.obj_loc[q.obj] if r < 0.5 else choice(rng, w.locations)
            return ObjectAt(q.obj, loc, rng.random() < 0.5)
        if isinstance(q, WhereAgent):
            if r < 0.7:
                return AgentWent(q.agent, w.cur[q.agent] if r < 0.35 else choice(rng, w.locations), "went")
            return AgentAt(q.agent, w.cur[q.agent], True)
        if isinstance(q, WhoPut):
            if r < 0.8:
                a = w.putter[q.obj] if r < 0.4 else choice(rng, w.agents)
                return Put(a, q.obj, q.loc, rng.random() < 0.5)
            return ObjectAt(q.obj, q.loc, True)
        if isinstance(q, HowMany):
            n = w.count_in(q.obj, q.loc)
            if r < 0.75:
                return ObjectQuant(q.obj, q.loc, choice(rng, (n, n + 1 if n < 5 else n - 1, "all")))
            return ObjectAt(q.obj, q.loc, True)
    return None


def _true_irrelevant(g, w, d, rng):
    """Strategy 2: a true fact about something else (another agent's move, another object's place)."""
    if rng.random() < 0.5:
        a = choice(rng, w.agents)
        return AgentAt(a, w.cur[a])
    o = choice(rng, w.objects)
    return ObjectAt(o, w.obj_loc[o])


def _fallback(g, w, d, rng):
    """Always-false facts, so that three distractors can always be found."""
    out = []
    for o in w.objects:
        for loc in w.locations:
            if loc != w.obj_loc[o]:
                out.append(ObjectAt(o, loc))
    shuffle(rng, out)
    return out


_STRATEGIES = (_swap_entities, _true_irrelevant, _swap_locations, _close_but_wrong)
_PASSES = 3
_ORDERS = tuple(permutations(_STRATEGIES))


def choose_distractors(gold, gold_text, w, d, lex, rng, k=3):
    """k (fact, sentence) pairs. Each strategy proposes one candidate per pass, in a random order,
    so the distractors tend to come from different strategies; always-false facts fill up."""
    gold_topic = gold.topic()
    keys, texts, chosen = {gold.key()}, {gold_text}, []
    order = _ORDERS[int(rng.random() * len(_ORDERS))]

    def proposals():
        for _ in range(_PASSES):
            for strategy in order:
                yield strategy(gold, w, d, rng)
        yield from _fallback(gold, w, d, rng)

    for f in proposals():
        if f is None:
            continue
        key = f.key()
        if key in keys or (f.topic() == gold_topic and f.holds(w)):
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
