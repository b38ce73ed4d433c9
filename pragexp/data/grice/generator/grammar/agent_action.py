"""Speech templates of the agent action subtopic, one or more per implicature type (see grammar/__init__.py)."""

from __future__ import annotations

from ..facts import WOMAN, NotSure, Put, PutThenWent, Whether, WhoPut
from ..rand import choice
from .context import UNSURE_PHRASES, Turn


def _aa_question(c, a, obj, loc, verb, follow=False):
    d = c.d
    if follow:
        q = "what about you" if a == WOMAN else f"what about {a}"
    else:
        q = f"did {d.agent_q(a)} {c.lex.base[verb]} {d.obj(obj)} {d.in_loc(loc)}"
    d.mention(agent=a, obj=obj, loc=loc)
    return q


def aa_explicit(c):
    w, rng = c.w, c.rng
    frame = c.followup("aa_yesno")
    if frame is not None:
        _, prev_agent, obj, loc = frame
        cands = [a for a in w.agents if a != prev_agent and w.knows(Put(a, obj, loc))]
        if cands:
            a = choice(rng, cands)
            verb = c.put_verb()
            q = _aa_question(c, a, obj, loc, verb, follow=True)
            return _aa_yesno_answer(c, a, obj, loc, verb, q)
    r = rng.random()
    if r < 0.2:
        return _aa_who(c)
    if r < 0.6:
        obj = c.pick(w.objects, c.d.last_obj)
        a, loc = w.putter[obj], w.obj_loc[obj]
        if rng.random() < 0.5:
            a = choice(rng, w.agents)
    else:
        a = c.pick(w.agents, c.d.last_agent)
        obj = choice(rng, w.objects)
        loc = choice(rng, (w.obj_loc[obj], w.prev[a], choice(rng, w.locations)))
    if not w.knows(Put(a, obj, loc)):
        return None
    verb = c.put_verb()
    q = _aa_question(c, a, obj, loc, verb)
    return _aa_yesno_answer(c, a, obj, loc, verb, q)


def _who_question(c, obj, loc, verb):
    d = c.d
    q = f"who {verb} {d.obj(obj)} {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    return q


def _aa_who(c):
    """ "who put the O in the L" / "Noah did" """
    w = c.w
    objs = [o for o in w.objects if w.knows_var("putter", o) and w.knows_var("obj_loc", o)]
    obj = c.pick(objs, c.d.last_obj)
    if obj is None:
        return None
    a, loc, verb = w.putter[obj], w.obj_loc[obj], c.put_verb()
    q = _who_question(c, obj, loc, verb)
    c.d.mention(agent=a)
    return Turn(q, "I did" if a == WOMAN else f"{a} did", Put(a, obj, loc, False, verb), "aa_who")


def _aa_yesno_answer(c, a, obj, loc, verb, q):
    did = c.w.putter[obj] == a and c.w.obj_loc[obj] == loc
    s = c.d.agent_a(a)
    ans = c.choice(("yes", f"{s} did")) if did else c.choice(("no", f"{s} didn't"))
    return Turn(q, ans, Put(a, obj, loc, not did, verb), "aa_yesno")


def aa_relevance(c):
    w, rng = c.w, c.rng
    a = c.pick([a for a in c.known_agents() if w.puts_of(a)], c.d.last_agent)
    if a is None:
        return None
    mine = w.puts_of(a)
    said = choice(rng, mine)
    loc = w.obj_loc[said]
    others = [o for o in w.objects if o not in mine and w.knows(Put(a, o, loc))]
    if not others or not w.knows(Put(a, said, loc)):
        return None
    obj = c.pick(others, c.d.last_obj)
    verb = c.put_verb()
    q = _aa_question(c, a, obj, loc, verb)
    ans = f"{c.d.agent_a(a)} {verb} the {said} there"
    c.d.mention(obj=said)
    return Turn(q, ans, Put(a, obj, loc, True, verb), "aa_relevance")


def aa_strengthening(c):
    w = c.w
    pairs = [(a, o) for a in c.known_agents() for o in w.puts_of(a) if w.knows(Put(a, o, w.obj_loc[o]))]
    if not pairs:
        return None
    a, obj = c.choice(pairs)
    loc, dest = w.obj_loc[obj], w.cur[a]
    verb, gverb = c.put_verb(), c.go_verb()
    if w.knows_var("putter", obj) and c.rng.random() < 0.35:
        q = _who_question(c, obj, loc, verb)
        ans = f"{'I' if a == WOMAN else a} {verb} them there and {gverb} to the {dest}"
        c.d.mention(agent=a)
    else:
        q = _aa_question(c, a, obj, loc, verb)
        ans = f"{c.d.agent_a(a)} {verb} them there and {gverb} to the {dest}"
    c.d.mention(loc=dest)
    return Turn(q, ans, PutThenWent(a, obj, loc, dest, verb, gverb), "aa_strengthening")


def aa_limiting(c):
    w, d, rng = c.w, c.d, c.rng
    pairs = [(a, o) for a in w.agents for o in w.puts_of(a) if w.knows(Put(a, o, w.obj_loc[o]))]
    if not pairs:
        return None
    a, obj = choice(rng, pairs)
    loc = w.obj_loc[obj]
    others = [o for o in w.objects if o != obj and not w.holds(Put(a, o, loc)) and w.knows(Put(a, o, loc))]
    if not others:
        return None
    other = choice(rng, others)
    pair = (obj, other) if rng.random() < 0.5 else (other, obj)
    verb = c.put_verb()
    q = f"did {d.agent_q(a)} {c.lex.base[verb]} the {pair[0]} and the {pair[1]} {d.in_loc(loc)}"
    d.mention(agent=a, loc=loc)
    ans = f"{d.agent_a(a)} {verb} the {obj} there"
    d.mention(obj=obj)
    return Turn(q, ans, Put(a, other, loc, True, verb), "aa_limiting")


def aa_ignorance(c):
    w, rng = c.w, c.rng
    objs = [o for o in w.objects if not (w.knows_var("putter", o) and w.knows_var("obj_loc", o))]
    obj = c.pick(objs, c.d.last_obj)
    if obj is None:
        return None
    verb = c.put_verb()
    putters, locs = w.candidates("putter", obj), w.candidates("obj_loc", obj)
    if len(putters) > 1 and len(locs) == 1 and rng.random() < 0.4:
        loc = locs[0]
        gold = NotSure(WhoPut(obj, loc), choice(rng, UNSURE_PHRASES))
        q = _who_question(c, obj, loc, verb)
        return Turn(q, f"either {putters[0]} or {putters[1]} did", gold, "aa_who")
    a = choice(rng, putters)
    loc = choice(rng, locs)
    gold = NotSure(Whether(Put(a, obj, loc, False, verb)), choice(rng, UNSURE_PHRASES))
    if not w.holds(gold):
        return None
    q = _aa_question(c, a, obj, loc, verb)
    if len(locs) > 1:
        other = locs[1] if locs[0] == loc else locs[0]
        ans = f"{c.d.agent_a(a)} {verb} them there if not in the {other}"
    else:
        b = putters[1] if putters[0] == a else putters[0]
        ans = f"either {a} or {b} {verb} them there"
    return Turn(q, ans, gold, "aa_yesno")


def aa_close_but(c):
    w, rng = c.w, c.rng
    a = c.pick(c.known_agents(), c.d.last_agent)
    loc = choice(rng, c.unvisited(a))
    objs = [o for o in w.objects if w.knows(Put(a, o, loc))]
    if not objs:
        return None
    obj = c.pick(objs, c.d.last_obj)
    verb = c.put_verb()
    q = _aa_question(c, a, obj, loc, verb)
    s = c.d.agent_a(a)
    if rng.random() < 0.5:
        ans = f"{s} was in the {w.prev[a]}"
    else:
        ans = f"{s} was in the {w.prev[a]} and {c.go_verb()} to the {w.cur[a]}"
    c.d.mention(loc=w.prev[a])
    return Turn(q, ans, Put(a, obj, loc, True, verb), "aa_yesno")


TEMPLATES = {
    "explicit": (aa_explicit,),
    "relevance": (aa_relevance,),
    "strengthening": (aa_strengthening,),
    "limiting": (aa_limiting,),
    "ignorance": (aa_ignorance,),
    "close_but": (aa_close_but,),
}
