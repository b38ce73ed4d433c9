"""Speech templates of the object location subtopic: where the objects are ("where can I find the
limes", "did you see the limes"; follow-ups "what about the figs")."""

from __future__ import annotations

from ..epistemic import DontKnow, NotSure, WhereObj
from ..facts import WOMAN, ObjectAt, PutThenWent, PutTogether
from ..world import KNOWN, NONE, PARTIAL
from .context import NO_IDEA, Turn

SUBTOPIC = "object_location"

_FORMS = (
    (163, "where are {}"),
    (154, "where can I find {}"),
    (153, "did you see {}"),
    (129, "where can I get {}"),
)


def _question(c, obj):
    d = c.d
    frame = c.followup(SUBTOPIC, 0.3)
    if frame is not None and frame[3] is not None and frame[3] != obj:
        q = f"{c.choice(('what about', 'how about'))} the {obj}"
    elif obj == d.last_obj:
        pron = d.obj_subj(obj)
        forms = [
            f"where {'is' if pron == 'it' else 'are'} {pron}",
            f"where can I find {d.obj(obj)}",
            f"where can I get {d.obj(obj)}",
        ]
        if pron == "they":  # the release never asks "where did you see it"
            forms.append("where did you see them")
        q = c.choice(forms)
    else:
        form = c.weighted(_FORMS)
        q = form.format(f"the {obj}")
        if form.startswith("where are") and c.lex.is_singular(obj):
            q = f"where is the {obj}"
    d.mention(obj=obj)
    return q


def _objects(c, level):
    w = c.w
    return [o for o in w.objects if w.level["obj_loc"][o] == level]


def _pick(c, objs):
    # a new object mostly: the release seldom asks twice where the same thing is
    return c.pick(objs, c.d.last_obj, 0.1)


def _topic(obj):
    return ("object", obj)


def _they(c, obj):
    return "it is" if c.lex.is_singular(obj) else "they are"


def ol_explicit(c):
    """ "where are the limes" / "they are in the den" (or "I have no idea": I don't know where)."""
    w, d = c.w, c.d
    if c.rng.random() < 0.2:
        obj = _pick(c, _objects(c, NONE))
        if obj is not None:
            q = _question(c, obj)
            return Turn(q, c.choice(NO_IDEA), DontKnow(WhereObj(obj)), "ol_where", _topic(obj))
    obj = _pick(c, _objects(c, KNOWN))
    if obj is None:
        return None
    loc = w.obj_loc[obj]
    q = _question(c, obj)
    d.mention(loc=loc)
    return Turn(q, f"{_they(c, obj)} in the {loc}", ObjectAt(obj, loc), "ol_where", _topic(obj))


def ol_relevance(c):
    """ "where are the limes" / "there is a red box in the den": they are in the den."""
    w, d = c.w, c.d
    obj = _pick(c, _objects(c, KNOWN))
    if obj is None:
        return None
    loc = w.obj_loc[obj]
    colour, kind = w.container[loc]
    q = _question(c, obj)
    ans = f"there is a {colour} {kind} in the {loc}"
    if c.rng.random() < 0.5:
        teller = c.choice(w.others)
        ans = f"{teller} said {ans}"
        d.mention(agent=teller)
    d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, loc), "ol_where", _topic(obj))


def ol_strengthening(c):
    """ "where are the limes" / "Mia said she left them in the den and went to the hall" (and then),
    or "Mia and I left them in the den" (together)."""
    w, d = c.w, c.d
    objs = [o for o in _objects(c, KNOWN) if w.knows_var("putter", o)]
    joint = [o for o in objs if w.partner[o] is not None]
    if joint and c.rng.random() < 0.22:
        obj = _pick(c, joint)
        mate, loc, verb = w.partner[obj], w.obj_loc[obj], c.put_verb()
        q = _question(c, obj)
        ans = f"{mate} and I {verb} {d.it(obj)} in the {loc}"
        d.mention(agent=mate, loc=loc)
        return Turn(q, ans, PutTogether(mate, obj, loc, verb), "ol_where", _topic(obj))
    objs = [o for o in objs if w.knows_var("prev", w.putter[o]) and w.knows_var("cur", w.putter[o])]
    obj = _pick(c, objs)
    if obj is None:
        return None
    a, loc = w.putter[obj], w.obj_loc[obj]
    verb, gverb = c.put_verb(), c.go_verb()
    q = _question(c, obj)
    body = f"{verb} {d.it(obj)} in the {loc} and {gverb} to the {w.cur[a]}"
    if a == WOMAN:
        ans = f"I {body}"
    elif c.rng.random() < 0.55:
        ans = f"{a} said {c.lex.pronoun.get(a, a)} {body}"
    else:
        ans = f"{a} {body}"
    d.mention(agent=a, loc=w.cur[a])
    return Turn(
        q, ans, PutThenWent(a, obj, loc, w.cur[a], verb, gverb), "ol_where", _topic(obj), alt_loc=w.cur[a]
    )


def ol_ignorance(c):
    """ "where are the limes" / "they are in the den or the hall": I am not sure where they are."""
    w, d = c.w, c.d
    obj = _pick(c, _objects(c, PARTIAL))
    if obj is None:
        return None
    c1, c2 = w.candidates("obj_loc", obj)
    q = _question(c, obj)
    d.mention(loc=c2)
    return Turn(
        q,
        f"{_they(c, obj)} in the {c1} or the {c2}",
        NotSure(WhereObj(obj)),
        "ol_where",
        _topic(obj),
        alt_loc=c1,
    )


TEMPLATES = {
    "explicit": ((1.0, ol_explicit),),
    "relevance": ((1.0, ol_relevance),),
    "strengthening": ((1.0, ol_strengthening),),
    "limiting": (),
    "ignorance": ((1.0, ol_ignorance),),
    "close_but": (),
}
