"""What the woman may not know: the queries of epistemic facts (where an agent went, where an object is,
how many are in a place, whether a fact holds) and the epistemic facts themselves, "I am not sure ..."
(`NotSure`: partial knowledge) and "I don't know ..." (`DontKnow`: none). See facts.py for what a fact gives.
"""

from __future__ import annotations

from typing import NamedTuple

from .facts import positive


class WhereAgent(NamedTuple):
    """Where agent went in the end."""

    agent: str

    def answers(self, v):
        return v.cur[self.agent]

    def variables(self):
        return (("cur", self.agent),)

    def topics(self):
        return (("agent", self.agent),)


class WhereObj(NamedTuple):
    obj: str

    def answers(self, v):
        return v.obj_loc[self.obj]

    def variables(self):
        return (("obj_loc", self.obj),)

    def topics(self):
        return (("object", self.obj),)


class HowMany(NamedTuple):
    obj: str
    loc: str

    def answers(self, v):
        return v.obj_count[self.obj] if v.obj_loc[self.obj] == self.loc else 0

    def variables(self):
        return (("obj_loc", self.obj), ("obj_count", self.obj))

    def topics(self):
        return (("count", self.obj, self.loc),)


class Whether(NamedTuple):
    fact: tuple

    def answers(self, v):
        return self.fact.holds(v)

    def variables(self):
        return self.fact.variables()

    def topics(self):
        return self.fact.topics()


def _query_key(q):
    if type(q) is Whether:
        # not knowing whether P == not knowing whether not-P, whatever verb words it
        return ("whether", positive(q.fact).key())
    return (type(q).__name__,) + tuple(q)


class NotSure(NamedTuple):
    """ "I am not sure ...": the woman is uncertain about the query, with partial knowledge."""

    query: tuple

    def key(self):
        return ("not_sure",) + _query_key(self.query)

    def topics(self):
        return self.query.topics()

    def variables(self):
        return ()

    def holds(self, v):
        # Epistemic: evaluated against the woman's knowledge, not a single valuation.
        return v.uncertainty(self.query) == "partial"


class DontKnow(NamedTuple):
    """ "I don't know ...": the woman has no knowledge about the query. ``bare``: just "I don't know"
    (a distractor the release often offers; its own key, as it is worded differently)."""

    query: tuple
    bare: bool = False

    def key(self):
        return ("dont_know", self.bare) + _query_key(self.query)

    def topics(self):
        return self.query.topics()

    def variables(self):
        return ()

    def holds(self, v):
        return v.uncertainty(self.query) == "none"


EPISTEMIC = (NotSure, DontKnow)
