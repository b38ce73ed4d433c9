"""The And-Or graph of one round: subtopic -> utterance (implicature) type -> speech template.

``TEMPLATES[subtopic][implicature]`` lists weighted speech templates (OR nodes), one module per
subtopic. A template is an AND node: it binds its entity slots from the world (level 5), checks that
the world makes the implicature work (e.g. the woman must not know something for an ignorance
answer), then renders the question, the woman's answer and returns the gold fact, i.e. the meaning of
the explicit answer, with the question's topic. It returns None when the world offers no binding, and
the caller tries another OR branch.

Which implicature a subtopic can carry follows the release: relevance is about where agents or
objects are, limiting only about how many objects are somewhere, close-but about where agents were or
what they did (``SUPPORT``).

Every non-epistemic gold fact is true AND known to the woman; every epistemic gold ("I am not sure",
"I don't know") is true of her knowledge; ``build_turn`` checks this and rejects the binding otherwise.
"""

from __future__ import annotations

from pragexp.data.grice.schema import IMPLICATURE_TYPES, SUBTOPICS

from ..epistemic import EPISTEMIC
from . import agent_action, agent_location, object_location, object_scale
from .context import Ctx, Turn

TEMPLATES = {
    "agent_location": agent_location.TEMPLATES,
    "agent_action": agent_action.TEMPLATES,
    "object_location": object_location.TEMPLATES,
    "object_scale": object_scale.TEMPLATES,
}
assert tuple(TEMPLATES) == SUBTOPICS  # the subtopic order is part of the seeded output

# implicature -> ((weight, subtopic), ...): the subtopics that carry it, weighted as in the release's
# test files
SUPPORT = {
    "explicit": (
        (0.13, "agent_location"),
        (0.5, "agent_action"),
        (0.14, "object_location"),
        (0.2, "object_scale"),
    ),
    "relevance": ((0.42, "agent_location"), (0.58, "object_location")),
    "strengthening": (
        (0.23, "agent_location"),
        (0.15, "agent_action"),
        (0.28, "object_location"),
        (0.34, "object_scale"),
    ),
    "limiting": ((1.0, "object_scale"),),
    "ignorance": (
        (0.24, "agent_location"),
        (0.2, "agent_action"),
        (0.29, "object_location"),
        (0.27, "object_scale"),
    ),
    "close_but": ((0.58, "agent_location"), (0.42, "agent_action")),
}
assert set(SUPPORT) == set(IMPLICATURE_TYPES)
assert all(
    bool(TEMPLATES[s][t]) == any(s == x for _, x in SUPPORT[t]) for s in SUBTOPICS for t in IMPLICATURE_TYPES
)

__all__ = ["TEMPLATES", "SUPPORT", "Ctx", "Turn", "build_turn", "supports"]


def supports(subtopic: str, implicature: str) -> bool:
    return bool(TEMPLATES[subtopic][implicature])


_TOTALS: dict = {}  # id of a module-level weight table -> (the table, its total weight)


def _weighted_order(rng, pairs):
    """The items of [(weight, item), ...]: the first drawn by weight, the rest in their order (they
    are only tried when the first cannot be bound)."""
    if len(pairs) == 1:
        return (pairs[0][1],)
    hit = _TOTALS.get(id(pairs))
    if hit is None or hit[0] is not pairs:  # the tables are module constants: sum each once
        hit = _TOTALS[id(pairs)] = (pairs, sum(wt for wt, _ in pairs))
    r = rng.random() * hit[1]
    first = len(pairs) - 1
    for k, (wt, _) in enumerate(pairs):
        r -= wt
        if r < 0:
            first = k
            break
    return (pairs[first][1],) + tuple(item for j, (_, item) in enumerate(pairs) if j != first)


def build_turn(c: Ctx, implicature: str, subtopics=None) -> tuple | None:
    """OR over subtopics (weighted random order, or the given ones in order) and their templates;
    returns (subtopic, Turn) or None.

    Templates bind slots before they mention anything, but a template may still fail after a partial
    mention; the discourse is restored from a snapshot in that case.
    """
    order = subtopics if subtopics is not None else _weighted_order(c.rng, SUPPORT[implicature])
    d, w = c.d, c.w
    for subtopic in order:
        for template in _weighted_order(c.rng, TEMPLATES[subtopic][implicature]):
            snap = (d.last_agent, d.last_obj, d.last_loc, len(d.agents), len(d.objects), len(d.locations))
            turn = template(c)
            if turn is not None:
                gold = turn.gold
                if w.holds(gold) and (isinstance(gold, EPISTEMIC) or w.knows(gold)):
                    return subtopic, turn
            d.last_agent, d.last_obj, d.last_loc = snap[0], snap[1], snap[2]
            del d.agents[snap[3] :], d.objects[snap[4] :], d.locations[snap[5] :]
    return None
