"""Speech templates of the agent action subtopic: who put what where.

Every question is "did X <verb> the O in the L" (or "what about Y", the same question about another
agent). The question carries the base form of a put verb; the woman answers with its past tense, and
the explicit form is "X didn't <base> ..." / "X <past> ..." as in the release.
"""

from __future__ import annotations

from ..epistemic import DontKnow, NotSure, Whether
from ..facts import WOMAN, Put, PutBoth, PutThenWent
from ..world import KNOWN, NONE, PARTIAL
from .context import NO_IDEA, Turn

SUBTOPIC = "agent_action"

# "he didn't go there" and the other ways the release says an agent was never somewhere
_NOT_THERE_VERBS = ("go", "journey", "travel", "go back", "move")


def _question(c, a, obj, loc, base, follow=False):
    d = c.d
    if follow:
        q = f"what about {a}"
    else:
        it, there = d.obj(obj), d.in_loc(loc)
        # the release says "did he leave the limes in the den", never "did he leave them there"
        who = (
            d.agent_q(a)
            if it.startswith("the ") and there.startswith("in ")
            else ("you" if a == WOMAN else a)
        )
        q = f"did {who} {base} {it} {there}"
    d.mention(agent=a, obj=obj, loc=loc)
    return q


def _frame(c):
    """(agent, obj, loc) of the previous round when it was about who put what where."""
    f = c.followup(SUBTOPIC, 0.3)
    return None if f is None or f[3] is None or f[4] is None else (f[2], f[3], f[4])


def _topic(a, obj, loc):
    return ("put", a, obj, loc)


def _knows_not(c, a, obj, loc):
    w = c.w
    f = Put(a, obj, loc)
    return not w.holds(f) and w.knows(f)


# --- explicit ----------------------------------------------------------------------------------


def aa_explicit(c):
    """ "did you leave the limes in the den" / "I didn't" (or "I did")."""
    w, d, rng = c.w, c.d, c.rng
    verb = c.put_verb()
    base = c.base(verb)
    frame = _frame(c)
    if frame is not None:
        _, obj, loc = frame
        cands = [a for a in w.others if a != frame[0] and w.knows(Put(a, obj, loc))]
        if cands:
            a = c.choice(cands)
            q = _question(c, a, obj, loc, base, follow=True)
            return _yes_no(c, a, obj, loc, verb, q)
    if rng.random() < 0.12:  # a yes: someone who put something, asked about it
        pairs = w.known_puts()
        if not pairs:
            return None
        a, obj = c.choice(pairs)
        loc = w.obj_loc[obj]
    else:
        a = c.pick(w.agents, d.last_agent if rng.random() < 0.6 else WOMAN)
        obj = c.pick(w.objects, d.last_obj)
        loc = c.pick(w.locations, d.last_loc)
        if not w.knows(Put(a, obj, loc)):
            return None
    q = _question(c, a, obj, loc, base)
    return _yes_no(c, a, obj, loc, verb, q)


def _yes_no(c, a, obj, loc, verb, q):
    did = c.w.holds(Put(a, obj, loc))
    s = c.d.subj(a)
    ans = f"{s} did" if did else f"{s} didn't"
    gold = Put(a, obj, loc, False, verb) if did else Put(a, obj, loc, True, c.base(verb))
    return Turn(q, ans, gold, "aa_yesno", _topic(a, obj, loc))


# --- close but ---------------------------------------------------------------------------------


def aa_close_but(c):
    """ "did you leave the limes in the den" / "I left the figs there" (or "I left them in the hall",
    "I was in the hall", "I didn't go there"): I didn't leave the limes in the den."""
    way = c.weighted(((0.33, _put_other_object), (0.27, _put_elsewhere), (0.4, _never_there)))
    return way(c)


def _pick_agent(c, pool):
    return c.pick(pool, c.d.last_agent if c.rng.random() < 0.6 else WOMAN)


def _puts_she_can_place(w):
    """(agent, object) for every put whose putter and place she knows, in world order."""
    return [
        (a, o)
        for a in w.agents
        for o in w.puts_of(a)
        if w.knows_var("putter", o) and w.knows_var("obj_loc", o)
    ]


def _put_other_object(c):
    """a put other in loc, not obj: "I left the figs there"."""
    w, d = c.w, c.d
    pairs = _puts_she_can_place(w)
    if not pairs:
        return None
    a, other = c.choice(pairs)
    loc = w.obj_loc[other]
    objs = [o for o in w.objects if o != other and _knows_not(c, a, o, loc)]
    if not objs:
        return None
    obj = c.pick(objs, d.last_obj)
    verb = c.put_verb()
    q = _question(c, a, obj, loc, c.base(verb))
    ans = f"{d.subj(a)} {verb} the {other} there"
    d.mention(obj=other)
    return Turn(q, ans, Put(a, obj, loc, True, c.base(verb)), "aa_yesno", _topic(a, obj, loc))


def _put_elsewhere(c):
    """a put obj in another place: "I left them in the hall" / "she said she left them in the hall"."""
    w, d = c.w, c.d
    pairs = _puts_she_can_place(w)
    if not pairs:
        return None
    a, obj = c.choice(pairs)
    where = w.obj_loc[obj]
    loc = c.pick([x for x in w.locations if x != where], d.last_loc)
    verb = c.put_verb()
    q = _question(c, a, obj, loc, c.base(verb))
    said = c.said(a) if a != WOMAN and c.rng.random() < 0.45 else d.subj(a)
    ans = f"{said} {verb} {d.it(obj)} in the {where}"
    d.mention(loc=where)
    return Turn(q, ans, Put(a, obj, loc, True, c.base(verb)), "aa_yesno", _topic(a, obj, loc), alt_loc=where)


def _never_there(c):
    """a was never in loc: "I was in the hall", "she said she was in the hall", "he didn't go there"."""
    w, d, rng = c.w, c.d, c.rng
    frame = _frame(c)
    pool = w.routes_known
    follow = False
    if frame is not None:
        _, obj, loc = frame
        cands = [a for a in pool if a not in (frame[0], WOMAN) and loc in c.unvisited(a)]
        if cands:
            a, follow = c.choice(cands), True
    if not follow:
        a = _pick_agent(c, pool)
        loc = c.pick(c.unvisited(a), d.last_loc)
        obj = c.pick(w.objects, d.last_obj)
    verb = c.put_verb()
    q = _question(c, a, obj, loc, c.base(verb), follow)
    s = d.subj(a)
    alt = None
    r = rng.random()
    if r < 0.45:
        alt = c.choice((w.prev[a], w.cur[a]))
        said = c.said(a) if a != WOMAN and rng.random() < 0.6 else s
        ans = f"{said} was in the {alt}"
    elif r < 0.8:
        said = c.said(a) if a != WOMAN and rng.random() < 0.3 else s
        ans = f"{said} didn't {c.choice(_NOT_THERE_VERBS)} there"
    else:
        said = c.said(a) if a != WOMAN and rng.random() < 0.3 else s
        ans = f"{said} was not there"
    if alt is not None:
        d.mention(loc=alt)
    return Turn(q, ans, Put(a, obj, loc, True, c.base(verb)), "aa_yesno", _topic(a, obj, loc), alt_loc=alt)


# --- strengthening -----------------------------------------------------------------------------


def aa_strengthening(c):
    """ "did you leave the limes in the den" / "I left them there and went to the hall": and then."""
    w, d = c.w, c.d
    routes = w.routes_known
    pairs = [(a, o) for a, o in w.known_puts() if a in routes]
    if not pairs:
        return None
    if c.rng.random() < 0.15:
        both = [
            (a, o, x)
            for a, o in pairs
            for x in w.puts_of(a)
            if x != o and w.obj_loc[x] == w.obj_loc[o] and w.knows(Put(a, x, w.obj_loc[x]))
        ]
        if both:
            a, obj, other = c.choice(both)
            loc, verb = w.obj_loc[obj], c.put_verb()
            q = _question(c, a, obj, loc, c.base(verb))
            said = c.said(a) if a != WOMAN and c.rng.random() < 0.5 else d.subj(a)
            ans = f"{said} {verb} {d.it(obj)} and the {other} there"
            d.mention(obj=other)
            return Turn(q, ans, PutBoth(a, obj, other, loc, verb), "aa_yesno", _topic(a, obj, loc))
    a, obj = c.choice(pairs)
    loc, dest = w.obj_loc[obj], w.cur[a]
    verb, gverb = c.put_verb(), c.go_verb()
    q = _question(c, a, obj, loc, c.base(verb))
    ans = f"{d.subj(a)} {verb} {d.it(obj)} there and {gverb} to the {dest}"
    d.mention(loc=dest)
    return Turn(
        q, ans, PutThenWent(a, obj, loc, dest, verb, gverb), "aa_yesno", _topic(a, obj, loc), alt_loc=dest
    )


# --- ignorance ---------------------------------------------------------------------------------


def aa_ignorance(c):
    """ "did Mia leave the limes in the den" / "I didn't see her" (I don't know if ...) or "she left
    them in the den or the hall" (I am not sure if ...)."""
    w, d, rng = c.w, c.d, c.rng
    verb = c.put_verb()
    base = c.base(verb)
    unseen = [o for o in w.objects if w.level["putter"][o] == NONE]
    narrowed = [
        o
        for o in w.objects
        if w.level["putter"][o] == KNOWN and w.putter[o] != WOMAN and w.level["obj_loc"][o] == PARTIAL
    ]
    if not (unseen or narrowed):
        return None
    if unseen and (not narrowed or rng.random() < 0.45):
        obj = c.pick(unseen, d.last_obj)
        a = c.pick(w.others, d.last_agent)
        loc = c.pick(list(w.candidates("obj_loc", obj)), d.last_loc)
        q = _question(c, a, obj, loc, base)
        ans = f"I didn't see {d.obj_pron(a)}" if rng.random() < 0.85 else c.choice(NO_IDEA)
        gold = DontKnow(Whether(Put(a, obj, loc, False, base)))
        return Turn(q, ans, gold, "aa_yesno", _topic(a, obj, loc))
    obj = c.pick(narrowed, d.last_obj)
    a = w.putter[obj]
    c1, c2 = w.candidates("obj_loc", obj)
    loc = c.pick([c1, c2], d.last_loc)
    other = c2 if loc == c1 else c1
    q = _question(c, a, obj, loc, base)
    s, it = d.subj(a), d.it(obj)
    first, second = (loc, other) if rng.random() < 0.5 else (other, loc)
    link = "or" if rng.random() < 0.55 else "if not"
    ans = f"{s} {verb} {it} in the {first} {link} the {second}"
    d.mention(loc=other)
    gold = NotSure(Whether(Put(a, obj, loc, False, base)))
    return Turn(q, ans, gold, "aa_yesno", _topic(a, obj, loc), alt_loc=other)


TEMPLATES = {
    "explicit": ((1.0, aa_explicit),),
    "relevance": (),
    "strengthening": ((1.0, aa_strengthening),),
    "limiting": (),
    "ignorance": ((1.0, aa_ignorance),),
    "close_but": ((1.0, aa_close_but),),
}
