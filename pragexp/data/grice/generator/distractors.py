"""The three wrong candidates of a round, from the four strategies of the GRICE paper (sec. 4):

1. wrong coreferenced entity   (the woman instead of the agent, another object)
2. a true but irrelevant fact  (about the woman, or where the objects are, when the question is
                                about something else)
3. a wrong fact from context   (another location the round mentioned)
4. close but wrong             (negation flipped, some/all/number swapped, order swapped, known vs
                                not-sure swapped, the container instead of the place)

Each kind of gold fact has a recipe (recipes_events.py: where agents went, who put what where;
recipes_knowledge.py: amounts and the woman's uncertainty): candidate distractors with weights, the share of
the release's rounds with such a gold that offer that candidate (measured on the official dev excerpt), so the
options look like the release's. A candidate is accepted only if its key differs from the gold's (so it is not
a paraphrase), its sentence differs from every other option, and it is not both true and on the question's
topic (which would make it a second right answer). Always-false facts fill up.

Where the release words the positive of "did you leave ..." as "I leave the limes in the den" (base
form), the flipped distractor does too: it is never a gold, so a model learns that it is wrong.
"""

from __future__ import annotations

from .epistemic import DontKnow, NotSure, Whether
from .facts import ObjectAt
from .rand import choice, shuffle
from .recipes_events import EVENT_RECIPES
from .recipes_knowledge import KNOWLEDGE_RECIPES
from .render import _RENDER


class _Slots:
    """The entities a recipe may use besides the gold's: L2 (another location of the round), L3 (one
    more), O2 (another object), A2 (an agent the answer named)."""

    __slots__ = ("w", "rng", "l1", "l2", "l3", "o2", "a2")

    def __init__(self, w, d, rng, l1, alt_loc, alt_agent, obj):
        self.w, self.rng, self.l1 = w, rng, l1
        if alt_loc is not None and alt_loc != l1:
            self.l2 = alt_loc
        else:
            seen = [x for x in d.locations if x != l1]
            self.l2 = choice(rng, seen) if seen and rng.random() < 0.6 else _draw(rng, w.locations, (l1,))
        self.l3 = _draw(rng, w.locations, (l1, self.l2))
        self.o2 = _draw(rng, d.objects if len(d.objects) > 2 else w.objects, (obj,))
        self.a2 = alt_agent


def _draw(rng, pool, avoid):
    """An element of pool not in avoid (pools hold several, so a few draws do)."""
    while True:
        x = pool[int(rng.random() * len(pool))]
        if x not in avoid:
            return x


_RECIPES = {**EVENT_RECIPES, **KNOWLEDGE_RECIPES}  # gold type -> its recipe


def _gold_loc(g):
    if type(g) in (NotSure, DontKnow):
        q = g.query
        g = q.fact if type(q) is Whether else q
    return getattr(g, "loc", None) or getattr(g, "first", None)


def _weighted_order(rng, pairs):
    """Candidates in a random order where heavier ones tend to come first (Efraimidis-Spirakis keys)."""
    rnd = rng.random
    keyed = [(rnd() ** (1.0 / wt), i) for i, (wt, _) in enumerate(pairs)]
    keyed.sort(reverse=True)
    return [pairs[i][1] for _, i in keyed]


def _fallback(w, rng):
    """Always-false facts, so that three distractors can always be found (rarely needed)."""
    out = [ObjectAt(o, loc) for o in w.objects for loc in w.locations if loc != w.obj_loc[o]]
    shuffle(rng, out)
    return out


def choose_distractors(gold, gold_text, turn, w, d, lex, rng, k=3):
    """k (fact, sentence) pairs for a round whose question has topic ``turn.topic``."""
    l1 = _gold_loc(gold)
    if l1 is None:
        l1 = turn.alt_loc or choice(rng, w.locations)
    slots = _Slots(w, d, rng, l1, turn.alt_loc, turn.alt_agent, getattr(gold, "obj", None))
    topic = turn.topic
    keys, texts, chosen = {gold.key()}, {gold_text}, []
    for candidates in (_weighted_order(rng, _RECIPES[type(gold)](gold, slots, lex)), None):
        for f in candidates if candidates is not None else _fallback(w, rng):
            key = f.key()
            if key in keys or (topic in f.topics() and f.holds(w)):
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
