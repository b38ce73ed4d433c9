"""Speech templates of the object location subtopic, one or more per implicature type (see grammar/__init__.py)."""

from __future__ import annotations

from ..facts import WOMAN, NotSure, ObjectAt, PutThenWent, WhereObj, Whether
from ..rand import choice
from .context import UNSURE_PHRASES, Turn

_WHERE_FORMS = ("where are {}", "where can I find {}", "did you see {}")


def _ol_where_question(c, obj, allow_follow=True):
    d = c.d
    frame = c.followup("ol_where") if allow_follow else None
    if frame is not None and frame[2] != obj:
        q = f"how about the {obj}"
    else:
        form = c.choice(_WHERE_FORMS)
        q = form.format(d.obj_subj(obj) if form.startswith("where are") else d.obj(obj))
    d.mention(obj=obj)
    return q


def known_location_objects(c):
    return c.w.known_loc_objects


def ol_explicit(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick(known_location_objects(c), d.last_obj)
    loc = w.obj_loc[obj]
    if rng.random() < 0.5:
        q = _ol_where_question(c, obj)
        ans = f"they are {d.in_loc(loc)}"
        d.mention(loc=loc)
        return Turn(q, ans, ObjectAt(obj, loc), "ol_where")
    asked = loc if rng.random() < 0.5 else choice(rng, [x for x in w.locations if x != loc])
    q = f"are {d.obj_subj(obj)} {d.in_loc(asked)}"
    d.mention(obj=obj, loc=asked)
    there = asked == loc
    ans = choice(rng, ("yes", "they are")) if there else choice(rng, ("no", "they aren't"))
    return Turn(q, ans, ObjectAt(obj, asked, not there), "ol_yesno")


def ol_relevance(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick(known_location_objects(c), d.last_obj)
    loc = w.obj_loc[obj]
    colour, kind = w.container[loc]
    q = _ol_where_question(c, obj)
    ans = f"there is a {colour} {kind} in the {loc}"
    if rng.random() < 0.5:
        ans = f"{choice(rng, w.others)} said {ans}"
    d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, loc), "ol_where")


def ol_strengthening(c):
    w, d = c.w, c.d
    objs = [
        o for o in known_location_objects(c) if w.putter[o] in c.known_agents() and w.knows_var("putter", o)
    ]
    obj = c.pick(objs, d.last_obj)
    if obj is None:
        return None
    a, loc = w.putter[obj], w.obj_loc[obj]
    verb, gverb = c.put_verb(), c.go_verb()
    q = _ol_where_question(c, obj, allow_follow=False)
    body = f"{verb} them in the {loc} and {gverb} to the {w.cur[a]}"
    ans = f"I {body}" if a == WOMAN else f"{a} said {c.lex.pronoun.get(a, a)} {body}"
    d.mention(agent=a, loc=w.cur[a])
    return Turn(q, ans, PutThenWent(a, obj, loc, w.cur[a], verb, gverb), "ol_strengthening")


def ol_limiting(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick(known_location_objects(c), d.last_obj)
    loc = w.obj_loc[obj]
    other = choice(rng, [x for x in w.locations if x != loc])
    pair = (loc, other) if rng.random() < 0.5 else (other, loc)
    q = f"are {d.obj_subj(obj)} in the {pair[0]} or the {pair[1]}"
    d.mention(obj=obj)
    ans = f"they are in the {loc}"
    d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, other, True), "ol_limiting")


def ol_ignorance(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick([o for o in w.objects if not w.knows_var("obj_loc", o)], d.last_obj)
    if obj is None:
        return None
    c1, c2 = w.candidates("obj_loc", obj)
    phrase = choice(rng, UNSURE_PHRASES)
    if rng.random() < 0.5:
        q = _ol_where_question(c, obj)
        return Turn(q, f"they are in the {c1} or the {c2}", NotSure(WhereObj(obj), phrase), "ol_where")
    loc, other = (c1, c2) if rng.random() < 0.5 else (c2, c1)
    q = f"are {d.obj_subj(obj)} {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    ans = choice(rng, (f"they are there or in the {other}", f"they are there if not in the {other}"))
    return Turn(q, ans, NotSure(Whether(ObjectAt(obj, loc)), phrase), "ol_yesno")


def ol_close_but(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick(known_location_objects(c), d.last_obj)
    loc = w.obj_loc[obj]
    asked = choice(rng, [x for x in w.locations if x != loc])
    q = f"are {d.obj_subj(obj)} {d.in_loc(asked)}"
    d.mention(obj=obj, loc=asked)
    if w.putter[obj] == WOMAN and rng.random() < 0.5:
        ans = f"I {c.put_verb()} them in the {loc}"
    else:
        ans = f"they are in the {loc}"
    d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, asked, True), "ol_yesno")


TEMPLATES = {
    "explicit": (ol_explicit,),
    "relevance": (ol_relevance,),
    "strengthening": (ol_strengthening,),
    "limiting": (ol_limiting,),
    "ignorance": (ol_ignorance,),
    "close_but": (ol_close_but,),
}
