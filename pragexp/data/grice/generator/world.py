"""The simulated world behind one dialogue, and what the woman knows about it.

State (the "valuation"): every agent has a previous and a current location (it was in ``prev``, put
its objects there, then went to ``cur``); every object kind lies in one location, ``obj_count`` of
``obj_total`` items (the rest are elsewhere), put there by ``putter``; every location holds one
coloured container in which the objects there are kept.

Knowledge: for each world variable the woman holds a tuple of possible values that always contains
the true one (she may be uncertain, never wrong). She knows a proposition when it has the same truth
value in every combination of possible values; ``unsure(query)`` is its negation (it visits those
combinations by setting the variables in place and restoring them). This is what makes
ignorance answers ("I am not sure where the limes are") checkable facts.
"""

from __future__ import annotations

from itertools import product

from .facts import WOMAN, Whether
from .rand import choice, randint, sample

# the world variables facts read; each is a dict keyed by agent or object
TABLES = ("prev", "cur", "putter", "obj_loc", "obj_count")


class World:
    __slots__ = (
        "agents",
        "others",
        "locations",
        "objects",
        "prev",
        "cur",
        "putter",
        "obj_loc",
        "obj_count",
        "obj_total",
        "container",
        "possible",
        "_unsure",
        "known_agents",
        "known_loc_objects",
        "known_count_objects",
    )

    def __init__(self):
        self.agents = []  # WOMAN first, then the named agents
        self.others = []  # the named agents
        self.locations = []
        self.objects = []
        self.prev, self.cur = {}, {}
        self.putter, self.obj_loc, self.obj_count, self.obj_total = {}, {}, {}, {}
        self.container = {}  # location -> (colour, container kind)
        self.possible = {t: {} for t in TABLES}  # table -> key -> tuple of values the woman allows
        self.known_agents = []  # agents whose previous and current location the woman knows
        self.known_loc_objects = []  # objects whose location the woman knows
        self.known_count_objects = []  # ... and also how many of them are there
        self._unsure = {}  # query -> bool; the world is fixed once sampled, so this is a pure cache

    # --- truth --------------------------------------------------------------------------------
    def holds(self, fact) -> bool:
        return fact.holds(self)

    def candidates(self, table, key):
        return self.possible[table][key]

    def knows_var(self, table, key) -> bool:
        return len(self.possible[table][key]) == 1

    def unsure(self, query) -> bool:
        """True when the query's answer differs across the worlds the woman holds possible."""
        # cache by meaning: Whether(Put(..., verb="left")) and (..., verb="put") are the same query
        ckey = query.fact.key() if isinstance(query, Whether) else (type(query).__name__,) + tuple(query)
        cached = self._unsure.get(ckey)
        if cached is not None:
            return cached
        possible = self.possible
        # only the variables she is uncertain about vary; the others keep their (known) true value
        uncertain = {}
        for t, k in query.variables():
            pool = possible[t][k]
            if len(pool) > 1:
                uncertain[(t, k)] = pool
        result = False
        if uncertain:
            # Visit each possible world by setting its values in place, restoring them afterwards
            # (cheaper than copying tables; generation is single-threaded).
            slots = [(getattr(self, t), k) for t, k in uncertain]
            saved = [table[k] for table, k in slots]
            seen = set()
            try:
                for values in product(*uncertain.values()):
                    for (table, k), value in zip(slots, values, strict=True):
                        table[k] = value
                    seen.add(query.answers(self))
                    if len(seen) > 1:
                        result = True
                        break
            finally:
                for (table, k), value in zip(slots, saved, strict=True):
                    table[k] = value
        self._unsure[ckey] = result
        return result

    def knows(self, fact) -> bool:
        """The woman knows whether this (non-epistemic) fact holds."""
        possible = self.possible
        for t, k in fact.variables():
            if len(possible[t][k]) > 1:
                return not self.unsure(Whether(fact))
        return True

    def visited(self, agent, loc) -> bool:
        return self.prev[agent] == loc or self.cur[agent] == loc

    def count_in(self, obj, loc) -> int:
        return self.obj_count[obj] if self.obj_loc[obj] == loc else 0

    def puts_of(self, agent):
        return [o for o in self.objects if self.putter[o] == agent]


def _other(rng, pool, exclude):
    """A random element of pool not in exclude (pools are small, so a filtered choice is fine)."""
    return choice(rng, [x for x in pool if x not in exclude])


def sample_world(rng, lex) -> World:
    """Draw a world (the context level of the AOG) and the woman's knowledge of it."""
    w = World()
    w.others = sample(rng, lex.agents, 3)
    w.agents = [WOMAN] + w.others
    w.locations = sample(rng, lex.locations, 6)
    w.objects = sample(rng, lex.objects, 5)
    for a in w.agents:
        w.prev[a], w.cur[a] = sample(rng, w.locations, 2)
    # The woman puts at least one object and the others at least one, so that every subtopic has
    # something to talk about.
    putters = [WOMAN, choice(rng, w.others)] + [
        WOMAN if rng.random() < 0.35 else choice(rng, w.others) for _ in range(len(w.objects) - 2)
    ]
    for o, a in zip(w.objects, putters, strict=True):
        w.putter[o] = a
        w.obj_loc[o] = w.prev[a]
        total = randint(rng, 2, 5)
        w.obj_total[o] = total
        w.obj_count[o] = total if rng.random() < 0.5 else randint(rng, 1, total - 1)
    # Both "all there" and "only some there" must exist for the scalar subtopic.
    if all(w.obj_count[o] == w.obj_total[o] for o in w.objects):
        o = choice(rng, w.objects)
        w.obj_count[o] = randint(rng, 1, w.obj_total[o] - 1)
    elif all(w.obj_count[o] < w.obj_total[o] for o in w.objects):
        o = choice(rng, w.objects)
        w.obj_count[o] = w.obj_total[o]
    combos = lex.container_kinds
    if len(combos) >= len(w.locations):  # distinct containers, so "a red box" names one place
        kinds = sample(rng, combos, len(w.locations))
    else:
        kinds = [choice(rng, combos) for _ in w.locations]
    w.container = dict(zip(w.locations, kinds, strict=True))
    _sample_knowledge(rng, w)
    _index_knowledge(w)
    return w


def _sample_knowledge(rng, w):
    P = w.possible
    for a in w.agents:
        P["prev"][a] = (w.prev[a],)
        P["cur"][a] = (w.cur[a],)
    # The woman knows her own moves; about another agent she may miss where it went or came from.
    for a in w.others:
        r = rng.random()
        if r < 0.3:
            P["cur"][a] = _pair(rng, w.cur[a], _other(rng, w.locations, (w.prev[a], w.cur[a])))
        elif r < 0.45:
            P["prev"][a] = _pair(rng, w.prev[a], _other(rng, w.locations, (w.prev[a], w.cur[a])))
    for o in w.objects:
        a = w.putter[o]
        mine = a == WOMAN
        P["putter"][o] = (a,) if mine or rng.random() < 0.7 else _pair(rng, a, _other(rng, w.others, (a,)))
        # She can only miss where the objects are if she cannot infer it from who put them where.
        loc_inferable = len(P["putter"][o]) == 1 and len(P["prev"][a]) == 1
        if loc_inferable or rng.random() < 0.5:
            P["obj_loc"][o] = (w.obj_loc[o],)
        else:
            P["obj_loc"][o] = _pair(rng, w.obj_loc[o], _other(rng, w.locations, (w.obj_loc[o],)))
        n, total = w.obj_count[o], w.obj_total[o]
        if (mine and rng.random() < 0.8) or rng.random() < 0.5:
            P["obj_count"][o] = (n,)
        else:
            P["obj_count"][o] = _pair(
                rng, n, n + 1 if n < total and (n == 1 or rng.random() < 0.5) else n - 1
            )
    # Every dialogue needs something the woman does not know, for ignorance rounds.
    if all(len(P["cur"][a]) == 1 and len(P["prev"][a]) == 1 for a in w.others):
        a = choice(rng, w.others)
        P["cur"][a] = _pair(rng, w.cur[a], _other(rng, w.locations, (w.prev[a], w.cur[a])))
    if all(len(P["obj_count"][o]) == 1 for o in w.objects):
        o = choice(rng, w.objects)
        n, total = w.obj_count[o], w.obj_total[o]
        P["obj_count"][o] = _pair(rng, n, n + 1 if n < total else n - 1)


def _index_knowledge(w):
    """Lists the templates ask for every round; the world is fixed, so compute them once."""
    P = w.possible
    w.known_agents = [a for a in w.agents if len(P["prev"][a]) == 1 and len(P["cur"][a]) == 1]
    w.known_loc_objects = [o for o in w.objects if len(P["obj_loc"][o]) == 1]
    w.known_count_objects = [o for o in w.known_loc_objects if len(P["obj_count"][o]) == 1]


def _pair(rng, true_value, other_value):
    """Two possible values in random order (so the true one is not always first)."""
    return (true_value, other_value) if rng.random() < 0.5 else (other_value, true_value)
