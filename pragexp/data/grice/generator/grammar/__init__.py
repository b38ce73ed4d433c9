"""The And-Or graph of one round: subtopic -> utterance (implicature) type -> speech template.

``TEMPLATES[subtopic][implicature]`` lists the speech templates (OR nodes), one module per subtopic.
A template is an AND node: it binds its entity slots from the world (level 5), checks that the world makes the implicature work
(e.g. the woman must not know something for an ignorance answer), then renders the question, the
woman's answer and returns the gold fact, i.e. the meaning of the explicit answer. It returns None
when the world offers no binding, and the caller tries another OR branch.

Every non-ignorance gold fact is true AND known to the woman; every ignorance gold is a true
epistemic fact (``NotSure``); ``build_turn`` checks this and rejects the binding otherwise.
"""

from __future__ import annotations

from itertools import permutations

from pragexp.data.grice.schema import SUBTOPICS

from ..facts import NotSure
from . import agent_action, agent_location, object_location, object_scale
from .context import Ctx, Turn

TEMPLATES = {
    "agent_location": agent_location.TEMPLATES,
    "agent_action": agent_action.TEMPLATES,
    "object_location": object_location.TEMPLATES,
    "object_scale": object_scale.TEMPLATES,
}
assert tuple(TEMPLATES) == SUBTOPICS  # the subtopic order is part of the seeded output

__all__ = ["TEMPLATES", "Ctx", "Turn", "build_turn"]


_SUBTOPIC_ORDERS = tuple(permutations(SUBTOPICS))


def build_turn(c: Ctx, implicature: str) -> tuple | None:
    """OR over subtopics (random order) and their templates; returns (subtopic, Turn) or None.

    Templates bind slots before they mention anything, but a template may still fail after a
    partial mention; the discourse is restored from a snapshot in that case.
    """
    order = _SUBTOPIC_ORDERS[int(c.rng.random() * len(_SUBTOPIC_ORDERS))]
    d = c.d
    for subtopic in order:
        for template in TEMPLATES[subtopic][implicature]:
            snap = (d.last_agent, d.last_obj, d.last_loc, len(d.agents), len(d.objects), len(d.locations))
            turn = template(c)
            if turn is not None:
                gold = turn.gold
                ok = c.w.holds(gold) and (isinstance(gold, NotSure) or c.w.knows(gold))
                if ok:
                    return subtopic, turn
            d.last_agent, d.last_obj, d.last_loc = snap[0], snap[1], snap[2]
            del d.agents[snap[3] :], d.objects[snap[4] :], d.locations[snap[5] :]
    return None
