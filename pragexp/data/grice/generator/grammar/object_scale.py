"""Speech templates of the object scale subtopic, one or more per implicature type (see grammar/__init__.py)."""

from __future__ import annotations

from ..facts import WOMAN, HowMany, NotSure, ObjectAt, ObjectQuant
from ..rand import choice
from .context import UNSURE_PHRASES, Turn
from .object_location import known_location_objects


def _counted_objects(c, pred):
    """Objects whose place and number the woman knows, filtered on (count, total)."""
    w = c.w
    return [o for o in w.known_count_objects if pred(w.obj_count[o], w.obj_total[o])]


def _how_many_question(c, obj, loc):
    d = c.d
    frame = c.followup("os_how_many")
    if frame is not None and frame[2] != obj and frame[3] == loc:
        q = f"how about the {obj}"
    elif obj == d.last_obj:
        q = f"how many of them are {d.in_loc(loc)}"
    else:
        q = f"how many {obj} are {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    return q


def _quant_question(c, obj, loc, quant):
    d = c.d
    q = f"are {quant} of {d.obj(obj)} {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    return q


def os_explicit(c):
    w, rng = c.w, c.rng
    obj = c.pick(_counted_objects(c, lambda n, t: True), c.d.last_obj)
    if obj is None:
        return None
    loc, n, total = w.obj_loc[obj], w.obj_count[obj], w.obj_total[obj]
    if rng.random() < 0.5:
        q = _how_many_question(c, obj, loc)
        num = c.lex.number(n)
        there = f"there is {num} there" if n == 1 else f"there are {num} there"
        return Turn(q, choice(rng, (num, there)), ObjectQuant(obj, loc, n), "os_how_many")
    q = _quant_question(c, obj, loc, "all")
    if n == total:
        return Turn(q, choice(rng, ("yes", "they are all there")), ObjectQuant(obj, loc, "all"), "os_quant")
    return Turn(q, choice(rng, ("no", "not all of them")), ObjectQuant(obj, loc, "not_all"), "os_quant")


def os_relevance(c):
    w = c.w
    obj = c.pick(_counted_objects(c, lambda n, t: n < t), c.d.last_obj)
    if obj is None:
        return None
    loc, n = w.obj_loc[obj], w.obj_count[obj]
    q = _quant_question(c, obj, loc, "some")
    ans = f"{c.lex.number(n)} is there" if n == 1 else f"{c.lex.number(n)} are there"
    return Turn(q, ans, ObjectQuant(obj, loc, n), "os_quant")


def os_strengthening(c):
    w, rng = c.w, c.rng
    obj = c.pick(_counted_objects(c, lambda n, t: n == t), c.d.last_obj)
    if obj is None:
        return None
    loc = w.obj_loc[obj]
    q = _quant_question(c, obj, loc, "some")
    forms = ["all of them are there", "they are all there"]
    if w.putter[obj] == WOMAN:
        forms.append(f"I {c.put_verb()} all of them there")
    return Turn(q, choice(rng, forms), ObjectQuant(obj, loc, "all"), "os_quant")


def os_limiting(c):
    w, rng = c.w, c.rng
    obj = c.pick(_counted_objects(c, lambda n, t: n < t), c.d.last_obj)
    if obj is None:
        return None
    loc, n = w.obj_loc[obj], w.obj_count[obj]
    q = _quant_question(c, obj, loc, "all")
    if rng.random() < 0.5:
        return Turn(q, "some of them are", ObjectQuant(obj, loc, "not_all"), "os_quant")
    return Turn(
        q, f"{c.lex.number(n)} of them {'is' if n == 1 else 'are'}", ObjectQuant(obj, loc, n), "os_quant"
    )


def os_ignorance(c):
    w, rng = c.w, c.rng
    objs = [o for o in w.objects if w.knows_var("obj_loc", o) and not w.knows_var("obj_count", o)]
    obj = c.pick(objs, c.d.last_obj)
    if obj is None:
        return None
    loc = w.obj_loc[obj]
    lo, hi = sorted(w.candidates("obj_count", obj))
    q = _how_many_question(c, obj, loc)
    low, high = c.lex.number(lo), c.lex.number(hi)
    if hi == w.obj_total[obj] and rng.random() < 0.5:
        ans = f"there are at least {low} there"
    else:
        ans = choice(rng, (f"there are {low} or {high}", f"{low} or {high}"))
    return Turn(q, ans, NotSure(HowMany(obj, loc), choice(rng, UNSURE_PHRASES)), "os_how_many")


def os_close_but(c):
    w, rng = c.w, c.rng
    obj = c.pick(known_location_objects(c), c.d.last_obj)
    loc = w.obj_loc[obj]
    asked = choice(rng, [x for x in w.locations if x != loc])
    q = _quant_question(c, obj, asked, "some")
    all_there = w.obj_count[obj] == w.obj_total[obj] and w.knows_var("obj_count", obj)
    ans = f"they are all in the {loc}" if all_there else f"they are in the {loc}"
    c.d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, asked, True), "os_quant")


TEMPLATES = {
    "explicit": (os_explicit,),
    "relevance": (os_relevance,),
    "strengthening": (os_strengthening,),
    "limiting": (os_limiting,),
    "ignorance": (os_ignorance,),
    "close_but": (os_close_but,),
}
