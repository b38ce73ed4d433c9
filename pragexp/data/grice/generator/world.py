"""The simulated world behind one dialogue, and what the woman knows about it.

State (the "valuation"): every agent has a previous and a current location (it was in ``prev``, put
its objects there, then went to ``cur``); every object kind lies in one location, ``obj_count`` of
``obj_total`` items (the rest are elsewhere), put there by ``putter`` (with ``partner`` when the woman
and another agent put it there together); every location holds one coloured container, a landmark.
An object with one item is singular ("the potato is in the den").

Knowledge: for each world variable the woman holds a tuple of possible values that always contains
the true one (she may be uncertain, never wrong), at one of three levels: known (one value), partial
(narrowed down: "they are in the hall or the den") or none (every value: "I didn't see him"). She
knows a proposition when it has the same truth value in every combination of possible values;
``uncertainty(query)`` says "known", "partial" or "none" (none when some variable the answer depends
on is at level none). Her uncertainty about where an agent was is her uncertainty about where the
objects it put are, so the two never disagree.
"""

from __future__ import annotations

from itertools import product

from .epistemic import Whether
from .facts import WOMAN, Put
from .rand import choice, randint, sample

# the world variables facts read; each is a dict keyed by agent or object
TABLES = ("prev", "cur", "putter", "obj_loc", "obj_count")

KNOWN, PARTIAL, NONE = "known", "partial", "none"


class World:
    __slots__ = (
        "agents",
        "others",
        "locations",
        "objects",
        "prev",
        "cur",
        "putter",
        "partner",
        "obj_loc",
        "obj_count",
        "obj_total",
        "container",
        "puts",
        "routes_known",
        "_known_puts",
        "possible",
        "level",
        "_uncertainty",
    )

    def __init__(self):
        self.agents = []  # WOMAN first, then the named agents
        self.others = []  # the named agents
        self.locations = []
        self.objects = []  # object names as written: plural, or singular for one-item objects
        self.prev, self.cur = {}, {}
        self.putter, self.partner, self.obj_loc, self.obj_count, self.obj_total = {}, {}, {}, {}, {}
        self.container = {}  # location -> (colour, container kind)
        self.puts = {}  # agent -> the objects it put (alone or with the woman); read-only
        self.routes_known = []  # agents whose previous and current place she knows, in order; read-only
        self._known_puts = None  # (agent, object) pairs she knows were put, computed on first use
        self.possible = {t: {} for t in TABLES}  # table -> key -> tuple of values the woman allows
        self.level = {t: {} for t in TABLES}  # table -> key -> KNOWN / PARTIAL / NONE
        self._uncertainty = {}  # query -> level; the world is fixed once sampled, so a pure cache

    # --- truth --------------------------------------------------------------------------------
    def holds(self, fact) -> bool:
        return fact.holds(self)

    def candidates(self, table, key):
        return self.possible[table][key]

    def knows_var(self, table, key) -> bool:
        return self.level[table][key] == KNOWN

    def uncertainty(self, query) -> str:
        """KNOWN when the query's answer is the same in every world the woman holds possible; else NONE
        when she has no knowledge of one of the variables it depends on, else PARTIAL."""
        # keyed by the query itself (and its type: named tuples of equal fields compare equal); two
        # wordings of one query (verb synonyms) are merely two entries
        ckey = (type(query), query)
        cached = self._uncertainty.get(ckey)
        if cached is not None:
            return cached
        possible, level = self.possible, self.level
        # only the variables she is uncertain about vary; the others keep their (known) true value
        uncertain = {}
        for t, k in query.variables():
            pool = possible[t][k]
            if len(pool) > 1:
                uncertain[(t, k)] = pool
        result = KNOWN
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
                        break
            finally:
                for (table, k), value in zip(slots, saved, strict=True):
                    table[k] = value
            if len(seen) > 1:
                result = NONE if any(level[t][k] == NONE for t, k in uncertain) else PARTIAL
        self._uncertainty[ckey] = result
        return result

    def knows(self, fact) -> bool:
        """The woman knows whether this (non-epistemic) fact holds."""
        possible = self.possible
        for t, k in fact.variables():
            if len(possible[t][k]) > 1:
                return self.uncertainty(Whether(fact)) == KNOWN
        return True

    def visited(self, agent, loc) -> bool:
        return self.prev[agent] == loc or self.cur[agent] == loc

    def count_in(self, obj, loc) -> int:
        return self.obj_count[obj] if self.obj_loc[obj] == loc else 0

    def puts_of(self, agent):
        return self.puts[agent]

    def known_puts(self):
        """(agent, object) for every put she knows happened, agents and objects in world order."""
        if self._known_puts is None:
            self._known_puts = [
                (a, o) for a in self.agents for o in self.puts[a] if self.knows(Put(a, o, self.obj_loc[o]))
            ]
        return self._known_puts


def _others(pool, exclude):
    return [x for x in pool if x not in exclude]


def sample_world(rng, lex) -> World:
    """Draw a world (the context level of the AOG) and the woman's knowledge of it."""
    w = World()
    w.others = sample(rng, lex.agents, 3)
    w.agents = [WOMAN] + w.others
    w.locations = sample(rng, lex.locations, 6)
    for a in w.agents:
        w.prev[a], w.cur[a] = sample(rng, w.locations, 2)
    kinds = sample(rng, lex.objects, 6)
    # The woman puts at least one object and the others at least one, so that every subtopic has
    # something to talk about; now and then she put one together with another agent.
    putters = [WOMAN, choice(rng, w.others)] + [
        WOMAN if rng.random() < 0.35 else choice(rng, w.others) for _ in range(len(kinds) - 2)
    ]
    shuffle_pairs = list(zip(kinds, putters, strict=True))
    for kind, a in shuffle_pairs:
        one = rng.random() < 0.15 and kind in lex.singular_of  # a single item: "the potato"
        o = lex.singular_of[kind] if one else kind
        w.objects.append(o)
        w.putter[o], w.partner[o] = a, None
        if a == WOMAN and rng.random() < 0.2:
            mate = choice(rng, w.others)
            w.partner[o] = mate
            w.prev[mate] = w.prev[WOMAN]  # they were there together
            if w.cur[mate] == w.prev[mate]:
                w.cur[mate] = choice(rng, _others(w.locations, (w.prev[mate],)))
        if one:
            w.obj_total[o] = w.obj_count[o] = 1
        elif rng.random() < 0.45:  # all of them there (at most five: the numbers go to five)
            w.obj_total[o] = w.obj_count[o] = randint(rng, 3, 5)
        else:
            w.obj_total[o] = total = randint(rng, 3, 6)
            w.obj_count[o] = randint(rng, 2, min(total - 1, 5))
    for o in w.objects:  # after every joint put moved its partner
        w.obj_loc[o] = w.prev[w.putter[o]]
    w.puts = {a: [o for o in w.objects if a in (w.putter[o], w.partner[o])] for a in w.agents}
    combos = lex.container_kinds
    if len(combos) >= len(w.locations):  # distinct containers, so "a red box" names one place
        kinds = sample(rng, combos, len(w.locations))
    else:  # a small lexicon: containers repeat
        kinds = [choice(rng, combos) for _ in w.locations]
    w.container = dict(zip(w.locations, kinds, strict=True))
    _sample_knowledge(rng, w)
    w.routes_known = [a for a in w.agents if w.level["prev"][a] == KNOWN and w.level["cur"][a] == KNOWN]
    return w


def _set(w, table, key, level, values):
    w.level[table][key] = level
    w.possible[table][key] = values


def _location_knowledge(rng, w, true_loc, p_partial, p_none):
    """(level, candidates) for a location variable."""
    r = rng.random()
    if r < p_none:
        return NONE, tuple(w.locations)
    if r < p_none + p_partial:
        other = choice(rng, _others(w.locations, (true_loc,)))
        return PARTIAL, ((true_loc, other) if rng.random() < 0.5 else (other, true_loc))
    return KNOWN, (true_loc,)


def _sample_knowledge(rng, w):
    for a in w.agents:
        _set(w, "prev", a, KNOWN, (w.prev[a],))
        _set(w, "cur", a, KNOWN, (w.cur[a],))
    joint = {w.partner[o] for o in w.objects if w.partner[o] is not None}
    # The woman knows her own moves; about another agent she may miss where it went, or where it was
    # (and so where it put its objects).
    for a in w.others:
        # she saw it leave its first place, so that is never where it went
        pool = _others(w.locations, (w.prev[a],))
        r = rng.random()
        if r < 0.12:
            _set(w, "cur", a, NONE, tuple(pool))
        elif r < 0.52:
            other = choice(rng, _others(pool, (w.cur[a],)))
            _set(w, "cur", a, PARTIAL, (w.cur[a], other) if rng.random() < 0.5 else (other, w.cur[a]))
        if a not in joint:
            level, values = _location_knowledge(rng, w, w.prev[a], 0.35, 0.05)
            _set(w, "prev", a, level, values)
    for o in w.objects:
        a = w.putter[o]
        if a == WOMAN:  # her own actions (alone or with a partner)
            _set(w, "putter", o, KNOWN, (a,))
            _set(w, "obj_loc", o, KNOWN, (w.obj_loc[o],))
        elif rng.random() < 0.62:
            _set(w, "putter", o, KNOWN, (a,))
            # she knows who put them: where they are is where she thinks the putter was
            _set(w, "obj_loc", o, w.level["prev"][a], w.possible["prev"][a])
        else:  # "I didn't see him"
            _set(w, "putter", o, NONE, tuple(w.others))
            level, values = _location_knowledge(rng, w, w.obj_loc[o], 0.45, 0.1)
            _set(w, "obj_loc", o, level, values)
        n, total = w.obj_count[o], w.obj_total[o]
        r = rng.random()
        if total == 1 or (a == WOMAN and r < 0.7) or r < 0.4:
            _set(w, "obj_count", o, KNOWN, (n,))
        elif r < 0.9:
            if rng.random() < 0.5:  # "at least k"
                k = randint(rng, 1, min(n, total - 1))
                values = tuple(range(k, total + 1))
            else:  # "n or n + 1", both numbers a word of the lexicon
                lo = n if n < min(total, 5) and rng.random() < 0.5 else n - 1
                values = (lo, lo + 1)
            _set(w, "obj_count", o, PARTIAL, values)
        else:
            _set(w, "obj_count", o, NONE, tuple(range(0, total + 1)))
