"""What every speech template reads and returns: the context `Ctx` (RNG, world, lexicon, discourse) and
`Turn`."""

from __future__ import annotations

from typing import NamedTuple

from ..facts import WOMAN

# the woman's answers when she has no idea (they mean "I don't know ...")
NO_IDEA = ("I don't know", "I'm not sure", "I have no idea")


class Turn(NamedTuple):
    question: str
    answer: str
    gold: tuple  # fact
    kind: str  # template kind, for follow-ups and the frame
    topic: tuple  # what the question asks (see facts.py): a true distractor must not answer it
    alt_loc: str | None = None  # another location the round mentions, for distractors
    alt_agent: str | None = None  # another agent the answer mentions


class Ctx:
    """What a template may read: the RNG, the world, the lexicon and the discourse so far."""

    __slots__ = ("rng", "w", "lex", "d")

    def __init__(self, rng, world, lex, discourse):
        self.rng, self.w, self.lex, self.d = rng, world, lex, discourse

    def pick(self, items, prefer=None, p=0.6):
        """Choose among items, favouring the entity in focus so that coreference happens."""
        if not items:
            return None
        if prefer is not None and prefer in items and self.rng.random() < p:
            return prefer
        return self.choice(items)

    def choice(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def weighted(self, pairs):
        """One item of [(weight, item), ...]."""
        total = sum(wt for wt, _ in pairs)
        r = self.rng.random() * total
        for wt, item in pairs:
            r -= wt
            if r < 0:
                return item
        return pairs[-1][1]

    def put_verb(self):
        return self.choice(self.lex.put_verbs)

    def go_verb(self):
        return self.choice(self.lex.go_verbs)

    def base(self, verb):
        return self.lex.base.get(verb, verb)

    def unvisited(self, agent):
        w = self.w
        return [x for x in w.locations if x != w.prev[agent] and x != w.cur[agent]]

    def followup(self, subtopic, p=0.35):
        """The previous round's frame when it was of this subtopic (a follow-up may reuse it)."""
        f = self.d.frame
        return f if f is not None and f[0] == subtopic and self.rng.random() < p else None

    def said(self, agent):
        """ "she said she" / "I" (the woman reports her own doings directly)."""
        if agent == WOMAN:
            return "I"
        s = self.d.subj(agent)
        return f"{s} said {s}"


__all__ = ["Ctx", "Turn", "NO_IDEA", "WOMAN"]
