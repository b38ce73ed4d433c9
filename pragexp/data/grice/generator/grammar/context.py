"""What every speech template reads and returns: the context `Ctx` (RNG, world, lexicon, discourse) and `Turn`."""

from __future__ import annotations

from typing import NamedTuple

UNSURE_PHRASES = ("I am not sure", "I don't know")


class Turn(NamedTuple):
    question: str
    answer: str
    gold: tuple  # fact
    kind: str  # template kind, for follow-ups and the frame


class Ctx:
    """What a template may read: the RNG, the world, the lexicon and the discourse so far."""

    __slots__ = ("rng", "w", "lex", "d")

    def __init__(self, rng, world, lex, discourse):
        self.rng, self.w, self.lex, self.d = rng, world, lex, discourse

    def pick(self, items, prefer=None):
        """Choose among items, favouring the entity in focus so that coreference happens."""
        if not items:
            return None
        if prefer is not None and prefer in items and self.rng.random() < 0.5:
            return prefer
        return self.choice(items)

    def choice(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def put_verb(self):
        return self.choice(self.lex.put_verbs)

    def go_verb(self):
        return self.choice(self.lex.go_verbs)

    def known_agents(self):
        return self.w.known_agents

    def unvisited(self, agent):
        w = self.w
        return [x for x in w.locations if x != w.prev[agent] and x != w.cur[agent]]

    def followup(self, kind):
        """The previous round's frame when it was of the same kind (a follow-up may reuse it)."""
        f = self.d.frame
        return f if f is not None and f[0] == kind and self.rng.random() < 0.4 else None


def hearsay(c, agent):
    """ "she said she" / "Avery said Avery": hearsay prefix for an agent just mentioned."""
    return f"{c.d.agent_a(agent)} said {c.lex.pronoun.get(agent, agent)}"
