"""Facts: the meaning of explicit answers, distractors and questions, evaluable against a world.

A fact is a small immutable tuple. Fields that only choose a surface word (a verb synonym, "all the"
vs "all of the") are left out of ``key()``, so two facts with equal keys are paraphrases of each other.

``topics()`` names what a fact answers: ("agent", a) where agent a was, ("agent", a, loc) whether a was
in loc, ("put", a, obj, loc) whether a put obj in loc, ("object", obj) where obj is, ("count", obj, loc)
how many of obj are in loc. A round's question has one such topic; a distractor that is true AND has
the question's topic would be a second right answer, so the grammar rejects those. (A true statement
on another topic, e.g. "I was in the den" for "were you in the hall? I went to the den", is allowed:
the release offers such options too.)

``holds(v)`` evaluates a fact under a valuation ``v`` (the actual world, or one of the worlds the woman
considers possible); ``variables()`` lists the world variables the fact reads, so that the woman's
knowledge can be checked by enumerating only those.

The woman's knowledge has three levels per variable (see world.py): known, partial (narrowed down to a
few values: "they are in the hall or the den") and none ("I didn't see him"). The release words them
differently and means different things: "I am not sure ..." is partial knowledge (``NotSure``), "I
don't know ..." is none (``DontKnow``), so the two are not paraphrases of each other; those two and the
queries they are about live in epistemic.py.
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

    def topics(self):
        return (("agent", self.agent), ("agent", self.agent, self.loc))

    def variables(self):
        return (("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        visited = v.prev[self.agent] == self.loc or v.cur[self.agent] == self.loc
        return visited != self.neg


class AgentWent(NamedTuple):
    """agent went (finally) to loc: "I went to the den"."""

    agent: str
    loc: str
    verb: str = "went"

    def key(self):
        return ("agent_went", self.agent, self.loc)

    def topics(self):
        return (("agent", self.agent), ("agent", self.agent, self.loc))

    def variables(self):
        return (("cur", self.agent),)

    def holds(self, v):
        return v.cur[self.agent] == self.loc


class AgentPath(NamedTuple):
    """agent went to first and then second (the order is part of the meaning)."""

    agent: str
    first: str
    second: str
    verb: str = "went"

    def key(self):
        return ("agent_path", self.agent, self.first, self.second)

    def topics(self):
        a = self.agent
        return (("agent", a), ("agent", a, self.first), ("agent", a, self.second))

    def variables(self):
        return (("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        return v.prev[self.agent] == self.first and v.cur[self.agent] == self.second


def _did_put(v, agent, obj, loc):
    return (v.putter[obj] == agent or v.partner[obj] == agent) and v.obj_loc[obj] == loc


class Put(NamedTuple):
    """agent did (not) put obj in loc. ``verb`` is the surface form to write (see render.py)."""

    agent: str
    obj: str
    loc: str
    neg: bool = False
    verb: str = "put"

    def key(self):
        return ("put", self.agent, self.obj, self.loc, self.neg)

    def topics(self):
        t = (("put", self.agent, self.obj, self.loc),)
        return t if self.neg else t + (("object", self.obj),)

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj))

    def holds(self, v):
        return _did_put(v, self.agent, self.obj, self.loc) != self.neg


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

    def topics(self):
        a = self.agent
        return (("put", a, self.obj, self.loc), ("object", self.obj), ("agent", a), ("agent", a, self.dest))

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj), ("prev", self.agent), ("cur", self.agent))

    def holds(self, v):
        return (
            _did_put(v, self.agent, self.obj, self.loc)
            and v.prev[self.agent] == self.loc
            and v.cur[self.agent] == self.dest
        )


class PutTogether(NamedTuple):
    """agent and the woman put obj in loc together."""

    agent: str
    obj: str
    loc: str
    verb: str = "put"

    def key(self):
        return ("put_together", self.agent, self.obj, self.loc)

    def topics(self):
        o, loc = self.obj, self.loc
        return (("put", self.agent, o, loc), ("put", WOMAN, o, loc), ("object", o))

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj))

    def holds(self, v):
        o = self.obj
        return {v.putter[o], v.partner[o]} == {self.agent, WOMAN} and v.obj_loc[o] == self.loc


class PutBoth(NamedTuple):
    """agent put obj and also other in loc."""

    agent: str
    obj: str
    other: str
    loc: str
    verb: str = "put"

    def key(self):
        return ("put_both", self.agent, self.obj, self.other, self.loc)

    def topics(self):
        a, loc = self.agent, self.loc
        return (
            ("put", a, self.obj, loc),
            ("put", a, self.other, loc),
            ("object", self.obj),
            ("object", self.other),
        )

    def variables(self):
        return (("putter", self.obj), ("obj_loc", self.obj), ("putter", self.other), ("obj_loc", self.other))

    def holds(self, v):
        return _did_put(v, self.agent, self.obj, self.loc) and _did_put(v, self.agent, self.other, self.loc)


class WasThenPut(NamedTuple):
    """agent was in loc and then put obj there."""

    agent: str
    loc: str
    obj: str
    verb: str = "put"

    def key(self):
        return ("was_then_put", self.agent, self.loc, self.obj)

    def topics(self):
        a = self.agent
        return (("agent", a), ("agent", a, self.loc), ("put", a, self.obj, self.loc), ("object", self.obj))

    def variables(self):
        return (("prev", self.agent), ("putter", self.obj), ("obj_loc", self.obj))

    def holds(self, v):
        return v.prev[self.agent] == self.loc and _did_put(v, self.agent, self.obj, self.loc)


class ObjectAt(NamedTuple):
    """the obj are (not) in loc."""

    obj: str
    loc: str
    neg: bool = False

    def key(self):
        return ("object_at", self.obj, self.loc, self.neg)

    def topics(self):
        return (("object", self.obj), ("object", self.obj, self.loc), ("count", self.obj, self.loc))

    def variables(self):
        return (("obj_loc", self.obj),)

    def holds(self, v):
        return (v.obj_loc[self.obj] == self.loc) != self.neg


class InContainer(NamedTuple):
    """the obj are in the colour container. Objects lie in their location, not in its container (a
    landmark), so this never holds: it is the over-literal reading of "there is a red box in the den"."""

    obj: str
    colour: str
    kind: str

    def key(self):
        return ("in_container", self.obj, self.colour, self.kind)

    def topics(self):
        return (("object", self.obj),)

    def variables(self):
        return ()

    def holds(self, v):
        return False


class ObjectQuant(NamedTuple):
    """How many of obj are in loc: "all", "some" (read strictly: some but not all, the scalar reading
    the dataset teaches), "not_all" (fewer than all), or an exact int. ``form`` picks the wording:
    "all the" / "all of the", "N of the O" / "N O" (same meaning)."""

    obj: str
    loc: str
    quant: str | int
    form: str = ""

    def key(self):
        return ("object_quant", self.obj, self.loc, self.quant)

    def topics(self):
        t = (("object", self.obj, self.loc), ("count", self.obj, self.loc))
        # all, some or a number there also says where the objects are
        return t if self.quant in ("not_all", 0) else t + (("object", self.obj),)

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


def positive(fact):
    """The fact with neg=False (facts without a polarity are returned as they are)."""
    fields = fact._fields
    if "neg" not in fields or not fact.neg:
        return fact
    i = fields.index("neg")
    return tuple.__new__(type(fact), fact[:i] + (False,) + fact[i + 1 :])
