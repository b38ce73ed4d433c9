"""Coreference across turns: what was mentioned last decides pronouns and deixis.

Temporal constraint of the AOG: a pronoun or "there" may only point to an entity introduced in an
earlier turn (or earlier in the same round), so references always resolve backwards.
"""

from __future__ import annotations

from .facts import WOMAN


class Discourse:
    __slots__ = ("lex", "last_agent", "last_obj", "last_loc", "agents", "objects", "locations", "frame")

    def __init__(self, lex):
        self.lex = lex
        self.last_agent = self.last_obj = self.last_loc = None
        self.agents, self.objects, self.locations = [], [], []  # introduced so far, in order
        self.frame = None  # (subtopic, template kind, agent, obj, loc) of the previous round, for follow-ups

    def mention(self, agent=None, obj=None, loc=None):
        if agent is not None and agent != WOMAN:
            self.last_agent = agent
            if agent not in self.agents:
                self.agents.append(agent)
        if obj is not None:
            self.last_obj = obj
            if obj not in self.objects:
                self.objects.append(obj)
        if loc is not None:
            self.last_loc = loc
            if loc not in self.locations:
                self.locations.append(loc)

    def pronoun(self, agent):
        """ "he"/"she" for the agent in focus (None if another agent, or a name without a gender)."""
        return self.lex.pronoun.get(agent) if agent == self.last_agent else None

    def agent_q(self, agent):
        """Agent as the subject of the questioner's turn ("you" is the woman)."""
        if agent == WOMAN:
            return "you"
        return self.pronoun(agent) or agent

    def subj(self, agent):
        """Agent as the subject of the woman's turn: "I", the pronoun, or the name."""
        if agent == WOMAN:
            return "I"
        return self.lex.pronoun.get(agent, agent)

    def obj_pron(self, agent):
        """ "him"/"her" ("I didn't see him"), or the name."""
        p = self.lex.pronoun.get(agent)
        return {"he": "him", "she": "her"}[p] if p else agent

    def it(self, obj):
        return "it" if self.lex.is_singular(obj) else "them"

    def obj(self, obj):
        """Object in object position: "them"/"it" once it was mentioned last."""
        return self.it(obj) if obj == self.last_obj else f"the {obj}"

    def obj_subj(self, obj):
        if obj != self.last_obj:
            return f"the {obj}"
        return "it" if self.lex.is_singular(obj) else "they"

    def in_loc(self, loc):
        return "there" if loc == self.last_loc else f"in the {loc}"

    def to_loc(self, loc):
        return "there" if loc == self.last_loc else f"to the {loc}"
