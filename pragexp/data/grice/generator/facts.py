"""Facts: the meaning of explicit answers, distractors and questions, evaluable against a world.

A fact is a small immutable tuple. Fields that only choose a surface word (a verb synonym, "not sure"
vs "don't know") are left out of ``key()``, so two facts with equal keys are paraphrases of each other.
``topic()`` names what a fact is about; a distractor that is true AND on the gold's topic would be a
second correct answer, so the grammar rejects those.

``holds(v)`` evaluates a fact under a valuation ``v`` (the actual world, or one of the worlds the woman
considers possible); ``variables()`` lists the world variables the fact reads, so that the woman's
knowledge can be checked by enumerating only those.
"""

from __future__ import annotations

from typing import NamedTuple

WOMAN = "the woman"  # the answerer; rendered as "I" in answers and "you" in questions


class AgentAt(NamedTuple):
    """agent was (not) in loc at some point (its previous or current location)."""

    agent: str
    loc: str
    neg: bool = False

    def key(self):
        return ("agent_at", self.agent, self.loc, self.neg)

    def topic(self):
        return ("agent", self.agent)

    def variables(self):
        return (("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        visited = v.prev[self.agent] == self.loc or v.cur[self.agent] == self.loc
        return visited != self.neg


class AgentWent(NamedTuple):
    """agent went (finally) to loc."""

    agent: str
    loc: str
    verb: str = "went"

    def key(self):
        return ("agent_went", self.agent, self.loc)

    def topic(self):
        return ("agent", self.agent)

    def variables(self):
        return (("cur", self.agent),)

    def holds(self, v):
        return v.cur[self.agent] == self.loc


class AgentPath(NamedTuple):
    """agent was in first and then went to second (temporal order is part of the meaning)."""

    agent: str
    first: str
    second: str
    verb: str = "went"

    def key(self):
        return ("agent_path", self.agent, self.first, self.second)

    def topic(self):
        return ("agent", self.agent)

    def variables(self):
        return (("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        return v.prev[self.agent] == self.first and v.cur[self.agent] == self.second


class Put(NamedTuple):
    """agent did (not) put obj in loc."""

    agent: str
    obj: str
    loc: str
    neg: bool = False
    verb: str = "put"

    def key(self):
        return ("put", self.agent, self.obj, self.loc, self.neg)

    def topic(self):
        # about who put obj: a true statement naming any agent answers the same question
        return ("put", self.obj)

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj))

    def holds(self, v):
        did = v.putter[self.obj] == self.agent and v.obj_loc[self.obj] == self.loc
        return did != self.neg


class PutThenWent(NamedTuple):
    """agent put obj in loc and then went to dest."""

    agent: str
    obj: str
    loc: str
    dest: str
    put_verb: str = "put"
    go_verb: str = "went"

    def key(self):
        return ("put_then_went", self.agent, self.obj, self.loc, self.dest)

    def topic(self):
        return ("put", self.obj)

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj), ("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        return (
            v.putter[self.obj] == self.agent
            and v.obj_loc[self.obj] == self.loc
            and v.prev[self.agent] == self.loc
            and v.cur[self.agent] == self.dest
        )


class ObjectAt(NamedTuple):
    """(some of) the obj are (not) in loc."""

    obj: str
    loc: str
    neg: bool = False

    def key(self):
        return ("object_at", self.obj, self.loc, self.neg)

    def topic(self):
        return ("object", self.obj)

    def variables(self):
        return (("obj_loc", self.obj),)

    def holds(self, v):
        return (v.obj_loc[self.obj] == self.loc) != self.neg


class ObjectQuant(NamedTuple):
    """How many of obj are in loc: "all", "some" (read strictly: some but not all, the scalar
    reading the dataset teaches), "not_all" (fewer than all), or an exact int."""

    obj: str
    loc: str
    quant: str | int

    def key(self):
        return ("object_quant", self.obj, self.loc, self.quant)

    def topic(self):
        return ("object", self.obj)

    def variables(self):
        return (("obj_loc", self.obj), ("obj_count", self.obj))

    def holds(self, v):
        n = v.obj_count[self.obj] if v.obj_loc[self.obj] == self.loc else 0
        total = v.obj_total[self.obj]
        q = self.quant
        if q == "all":
            return n == total
        if q == "some":
            return 0 < n < total
        if q == "not_all":
            return n < total
        return n == q


# --- what the woman may not know: the queries of epistemic facts ---------------------------------


class WhereAgent(NamedTuple):
    agent: str

    def answers(self, v):
        return v.cur[self.agent]

    def variables(self):
        return (("cur", self.agent),)

    def topic(self):
        return ("agent", self.agent)


class WhereObj(NamedTuple):
    obj: str

    def answers(self, v):
        return v.obj_loc[self.obj]

    def variables(self):
        return (("obj_loc", self.obj),)

    def topic(self):
        return ("object", self.obj)


class HowMany(NamedTuple):
    obj: str
    loc: str

    def answers(self, v):
        return v.obj_count[self.obj] if v.obj_loc[self.obj] == self.loc else 0

    def variables(self):
        return (("obj_loc", self.obj), ("obj_count", self.obj))

    def topic(self):
        return ("object", self.obj)


class WhoPut(NamedTuple):
    obj: str
    loc: str

    def answers(self, v):
        return v.putter[self.obj] if v.obj_loc[self.obj] == self.loc else None

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj))

    def topic(self):
        return ("put", self.obj)


class Whether(NamedTuple):
    fact: tuple

    def answers(self, v):
        return self.fact.holds(v)

    def variables(self):
        return self.fact.variables()

    def topic(self):
        return self.fact.topic()


class NotSure(NamedTuple):
    """The woman does not know the answer to query: it differs across the worlds she holds possible."""

    query: tuple
    phrase: str = "I am not sure"  # or "I don't know": same meaning

    def key(self):
        q = self.query
        if isinstance(q, Whether):
            # not knowing whether P == not knowing whether not-P (neg is the last item of a key
            # when a fact has it), and verbs do not matter
            k = q.fact.key()
            return ("not_sure", "whether") + (k[:-1] if "neg" in q.fact._fields else k)
        return ("not_sure", type(q).__name__) + tuple(q)

    def topic(self):
        return self.query.topic()

    def variables(self):
        return ()

    def holds(self, v):
        # Epistemic: evaluated against the woman's knowledge, not a single valuation.
        return v.unsure(self.query)


def positive(fact):
    """The fact with neg=False (facts without a polarity are returned as they are)."""
    fields = fact._fields
    if "neg" not in fields or not fact.neg:
        return fact
    i = fields.index("neg")
    return tuple.__new__(type(fact), fact[:i] + (False,) + fact[i + 1 :])


FACT_TYPES = (AgentAt, AgentWent, AgentPath, Put, PutThenWent, ObjectAt, ObjectQuant, NotSure)
