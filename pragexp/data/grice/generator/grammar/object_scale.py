"""Speech templates of the object scale subtopic: how many of the objects are somewhere ("are some
of the limes in the den", "are all the limes there", "how many limes are in the den")."""

from __future__ import annotations

from ..epistemic import DontKnow, HowMany, NotSure, Whether
from ..facts import WOMAN, ObjectQuant
from ..world import KNOWN, NONE, PARTIAL
from .context import NO_IDEA, Turn

SUBTOPIC = "object_scale"


def _counted(c, level, pred=lambda n, total: True):
    """Plural objects whose place the woman knows and whose number she knows at `level`."""
    w = c.w
    return [
        o
        for o in w.objects
        if w.obj_total[o] > 1
        and w.level["obj_loc"][o] == KNOWN
        and w.level["obj_count"][o] == level
        and pred(w.obj_count[o], w.obj_total[o])
    ]


def _pick(c, objs):
    return c.pick(objs, c.d.last_obj, 0.5)


def _quant_question(c, obj, loc, quant):
    d = c.d
    if obj == d.last_obj:
        head = "some of them" if quant == "some" else "all of them"
    else:
        head = f"{quant} {'of ' if quant == 'some' else ''}the {obj}"
    q = f"are {head} {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    return q


def _how_many_question(c, obj, loc):
    d = c.d
    same_obj, same_loc = obj == d.last_obj, loc == d.last_loc
    if same_obj and same_loc:
        q = "how many"
    elif same_obj:
        q = f"how many are in the {loc}"
    else:
        q = f"how many {obj} are {d.in_loc(loc)}"
    d.mention(obj=obj, loc=loc)
    return q


def _topic(obj, loc):
    return ("count", obj, loc)


def os_strengthening(c):
    """ "are some of the limes in the den" / "three are there": three of the limes are there."""
    w, rng = c.w, c.rng
    obj = _pick(c, _counted(c, KNOWN, lambda n, total: n < total))
    if obj is None:
        return None
    loc, n = w.obj_loc[obj], w.obj_count[obj]
    q = _quant_question(c, obj, loc, "some")
    num = c.lex.number(n)
    a = w.putter[obj]
    r = rng.random()
    if r < 0.6 or not w.knows_var("putter", obj):
        ans = f"{num} are there"
    else:
        of = " of them" if rng.random() < 0.4 else ""
        if a == WOMAN:
            ans = f"I {c.put_verb()} {num}{of} there"
        else:
            ans = f"{a} said {c.lex.pronoun.get(a, a)} {c.put_verb()} {num}{of} there"
            c.d.mention(agent=a)
            return Turn(q, ans, ObjectQuant(obj, loc, n, "of"), "os_quant", _topic(obj, loc), alt_agent=a)
    return Turn(q, ans, ObjectQuant(obj, loc, n, "of"), "os_quant", _topic(obj, loc))


def os_limiting(c):
    """ "are all the limes in the den" / "some are there": not all; "are some of them there" / "they
    are all there": all."""
    w, rng = c.w, c.rng
    some = _counted(c, KNOWN, lambda n, total: n < total)
    every = _counted(c, KNOWN, lambda n, total: n == total)
    if not (some or every):
        return None
    if not every or (some and rng.random() < 0.43):
        obj = _pick(c, some)
        loc = w.obj_loc[obj]
        q = _quant_question(c, obj, loc, "all")
        r = rng.random()
        if r < 0.68:
            ans = "some are there"
        elif r < 0.88:
            a = c.choice(w.others)
            ans = f"{a} said {c.lex.pronoun.get(a, a)} saw some there"
            c.d.mention(agent=a)
        else:
            ans = "I saw some there"
        return Turn(q, ans, ObjectQuant(obj, loc, "not_all"), "os_quant", _topic(obj, loc))
    obj = _pick(c, every)
    loc = w.obj_loc[obj]
    q = _quant_question(c, obj, loc, "some")
    a = w.putter[obj]
    teller = None
    r = rng.random()
    if r < 0.32:
        ans = "they are all there"
    elif r < 0.62:
        ans = "all of them are there"
    elif r < 0.76 and a == WOMAN:
        ans = f"I {c.put_verb()} all of them there"
    elif r < 0.88 and a != WOMAN and w.knows_var("putter", obj):
        ans = f"{a} said {c.lex.pronoun.get(a, a)} {c.put_verb()} all of them there"
        c.d.mention(agent=a)
        teller = a
    else:
        teller = c.choice(w.others)
        # "saw they all there" (sic): the release's wording, every time
        ans = f"{teller} said {c.lex.pronoun.get(teller, teller)} saw they all there"
        c.d.mention(agent=teller)
    return Turn(q, ans, ObjectQuant(obj, loc, "all"), "os_quant", _topic(obj, loc), alt_agent=teller)


def os_explicit(c):
    """ "are some of the limes in the den" / "some of them are there"; "are all ..." / "they are all
    there"; "how many limes are in the den" / "three"."""
    w, rng = c.w, c.rng
    some = _counted(c, KNOWN, lambda n, total: n < total)
    every = _counted(c, KNOWN, lambda n, total: n == total)
    if not (some or every):
        return None
    r = rng.random()
    if some and (r < 0.35 or not every and r < 0.63):
        obj = _pick(c, some)
        loc = w.obj_loc[obj]
        q = _quant_question(c, obj, loc, "some")
        ans = "some of them are there" if rng.random() < 0.6 else "there are some"
        return Turn(q, ans, ObjectQuant(obj, loc, "some"), "os_quant", _topic(obj, loc))
    if every and r < 0.63:
        obj = _pick(c, every)
        loc = w.obj_loc[obj]
        q = _quant_question(c, obj, loc, "all")
        ans = "they are all there" if rng.random() < 0.66 else "all of them are there"
        return Turn(q, ans, ObjectQuant(obj, loc, "all", "of"), "os_quant", _topic(obj, loc))
    obj = _pick(c, some + every)
    loc, n = w.obj_loc[obj], w.obj_count[obj]
    q = _how_many_question(c, obj, loc)
    num = c.lex.number(n)
    ans = num if rng.random() < 0.66 else f"there are {num}"
    return Turn(q, ans, ObjectQuant(obj, loc, n, "bare"), "os_how_many", _topic(obj, loc))


def os_ignorance(c):
    """ "how many limes are in the den" / "three or four" (or "there are at least two there"): I am not
    sure how many; "I have no idea": I don't know."""
    w, rng = c.w, c.rng
    if rng.random() < 0.08:
        obj = _pick(c, _counted(c, NONE))
        if obj is not None:
            loc = w.obj_loc[obj]
            r = rng.random()
            if r < 0.3:
                q, gold = _how_many_question(c, obj, loc), DontKnow(HowMany(obj, loc))
            elif r < 0.85:
                q = _quant_question(c, obj, loc, "all")
                gold = DontKnow(Whether(ObjectQuant(obj, loc, "all")))
            else:
                q = _quant_question(c, obj, loc, "some")
                gold = DontKnow(Whether(ObjectQuant(obj, loc, "some")))
            return Turn(q, c.choice(NO_IDEA), gold, "os_quant", _topic(obj, loc))
    obj = _pick(c, _counted(c, PARTIAL))
    if obj is None:
        return None
    loc = w.obj_loc[obj]
    values = w.candidates("obj_count", obj)
    q = _how_many_question(c, obj, loc)
    lo, hi = values[0], values[-1]
    low = c.lex.number(lo) if lo else None
    if len(values) == 2 and lo and hi <= len(c.lex.numbers) and (hi < w.obj_total[obj] or rng.random() < 0.6):
        pair = f"{low} or {c.lex.number(hi)}"
        ans = pair if rng.random() < 0.55 else f"there are {pair}"
    elif lo and hi == w.obj_total[obj]:
        ans = f"there are at least {low} there"
    else:
        return None
    return Turn(q, ans, NotSure(HowMany(obj, loc)), "os_how_many", _topic(obj, loc))


TEMPLATES = {
    "explicit": ((1.0, os_explicit),),
    "relevance": (),
    "strengthening": ((1.0, os_strengthening),),
    "limiting": ((1.0, os_limiting),),
    "ignorance": ((1.0, os_ignorance),),
    "close_but": (),
}
