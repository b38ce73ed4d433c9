"""The And-Or graph of one round: subtopic -> utterance (implicature) type -> speech template.

``TEMPLATES[subtopic][implicature]`` lists the speech templates (OR nodes). A template is an AND node:
it binds its entity slots from the world (level 5), checks that the world makes the implicature work
(e.g. the woman must not know something for an ignorance answer), then renders the question, the
woman's answer and returns the gold fact, i.e. the meaning of the explicit answer. It returns None
when the world offers no binding, and the caller tries another OR branch.

Every non-ignorance gold fact is true AND known to the woman; every ignorance gold is a true
epistemic fact (``NotSure``); ``build_turn`` checks this and rejects the binding otherwise.
"""

from __future__ import annotations

from itertools import permutations
from typing import NamedTuple

from pragexp.data.grice_schema import SUBTOPICS  # shared with the readers

from .facts import (
    WOMAN,
    AgentAt,
    AgentPath,
    AgentWent,
    HowMany,
    NotSure,
    ObjectAt,
    ObjectQuant,
    Put,
    PutThenWent,
    WhereAgent,
    WhereObj,
    Whether,
    WhoPut,
)
from .rand import choice

UNSURE_PHRASES = ("I am not sure", "I don't know")


class Turn(NamedTuple):
    question: str
    answer: str
    gold: tuple  # fact
    kind: str  # template kind, for follow-ups and the frame


class Ctx:
    """What a template may read: the RNG, the world, the lexicon and the discourse so far."""

    __slots__ = ("rng", "w", "lex", "d")

    def __init__(self, rng, world, lex, discourse):
        self.rng, self.w, self.lex, self.d = rng, world, lex, discourse

    def pick(self, items, prefer=None):
        """Choose among items, favouring the entity in focus so that coreference happens."""
        if not items:
            return None
        if prefer is not None and prefer in items and self.rng.random() < 0.5:
            return prefer
        return self.choice(items)

    def choice(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    def put_verb(self):
        return self.choice(self.lex.put_verbs)

    def go_verb(self):
        return self.choice(self.lex.go_verbs)

    def known_agents(self):
        return self.w.known_agents

    def unvisited(self, agent):
        w = self.w
        return [x for x in w.locations if x != w.prev[agent] and x != w.cur[agent]]

    def followup(self, kind):
        """The previous round's frame when it was of the same kind (a follow-up may reuse it)."""
        f = self.d.frame
        return f if f is not None and f[0] == kind and self.rng.random() < 0.4 else None


def _said(c, agent):
    """ "she said she" / "Avery said Avery": hearsay prefix for an agent just mentioned."""
    return f"{c.d.agent_a(agent)} said {c.lex.pronoun.get(agent, agent)}"


# ================================ agent_location ================================================


def _al_yesno_pick(c, want_visited):
    w = c.w
    agents = c.known_agents()
    frame = c.followup("al_yesno")
    if frame is not None:
        # "what about X": same location, another agent
        loc = frame[3]
        cands = [a for a in agents if a != frame[1] and w.visited(a, loc) == want_visited]
        if cands:
            return c.choice(cands), loc, True
    a = c.pick(agents, c.d.last_agent)
    locs = [w.prev[a], w.cur[a]] if want_visited else c.unvisited(a)
    return a, c.choice(locs), False


def _al_yesno_question(c, a, loc, follow):
    d = c.d
    did = False
    if follow:
        q = "what about you" if a == WOMAN else f"what about {a}"
    elif a != WOMAN and c.rng.random() < 0.3:
        q, did = f"did {d.agent_q(a)} go {d.to_loc(loc)}", True
    else:
        q = f"{d.be_q(a)} {d.agent_q(a)} {d.in_loc(loc)}"
    d.mention(agent=a, loc=loc)
    return q, did


def al_explicit_yesno(c):
    visited = c.rng.random() < 0.5
    a, loc, follow = _al_yesno_pick(c, visited)
    q, did = _al_yesno_question(c, a, loc, follow)
    s = c.d.agent_a(a)
    yes, no = (f"{s} did", f"{s} didn't") if did else (f"{s} was", f"{s} wasn't")
    ans = c.choice(("yes", yes)) if visited else c.choice(("no", no))
    return Turn(q, ans, AgentAt(a, loc, not visited), "al_yesno")


def al_explicit_where(c):
    a = c.pick(c.known_agents(), c.d.last_agent)
    d, verb = c.d, c.go_verb()
    q = f"where did {d.agent_q(a)} go"
    d.mention(agent=a)
    cur = c.w.cur[a]
    ans = f"{d.agent_a(a)} {verb} {d.to_loc(cur)}"
    d.mention(loc=cur)
    return Turn(q, ans, AgentWent(a, cur, verb), "al_where")


def al_relevance(c):
    w, d = c.w, c.d
    a = c.pick([a for a in w.others if w.knows_var("cur", a)], d.last_agent)
    if a is None:
        return None
    verb, cur = c.go_verb(), w.cur[a]
    if c.rng.random() < 0.3:
        q = f"{d.be_q(a)} {d.agent_q(a)} {d.in_loc(cur)}"
        d.mention(agent=a, loc=cur)
        return Turn(q, f"{_said(c, a)} {verb} there", AgentAt(a, cur), "al_yesno")
    form = c.choice(("where did {} go", "how can I find {}", "where did you see {}"))
    q = form.format(d.agent_q(a) if form.endswith("go") else d.agent_obj(a))
    d.mention(agent=a)
    ans = f"{_said(c, a)} {verb} {d.to_loc(cur)}"
    d.mention(loc=cur)
    return Turn(q, ans, AgentWent(a, cur, verb), "al_where")


def al_strengthening(c):
    w, d = c.w, c.d
    a = c.pick(c.known_agents(), d.last_agent)
    verb = c.go_verb()
    if a == WOMAN:
        q = c.choice(("where were you", "where did you go"))
    else:
        q = c.choice(("where did {} go", "where has {} been")).format(d.agent_q(a))
    d.mention(agent=a)
    ans = f"{d.agent_a(a)} {verb} to the {w.prev[a]} and the {w.cur[a]}"
    d.mention(loc=w.cur[a])
    return Turn(q, ans, AgentPath(a, w.prev[a], w.cur[a], verb), "al_where")


def al_limiting(c):
    w, d = c.w, c.d
    a = c.pick(c.known_agents(), d.last_agent)
    seen = c.choice((w.prev[a], w.cur[a]))
    unseen = c.choice(c.unvisited(a))
    pair = (seen, unseen) if c.rng.random() < 0.5 else (unseen, seen)
    q = f"{d.be_q(a)} {d.agent_q(a)} in the {pair[0]} and the {pair[1]}"
    d.mention(agent=a)
    ans = f"{d.agent_a(a)} was in the {seen}"
    d.mention(loc=seen)
    return Turn(q, ans, AgentAt(a, unseen, True), "al_limiting")


def al_ignorance(c):
    w, d, rng = c.w, c.d, c.rng
    unsure = [a for a in w.others if not (w.knows_var("cur", a) and w.knows_var("prev", a))]
    a = c.pick(unsure, d.last_agent)
    if a is None:
        return None
    phrase = choice(rng, UNSURE_PHRASES)
    if not w.knows_var("cur", a) and rng.random() < 0.4:
        c1, c2 = w.candidates("cur", a)
        q = f"where did {d.agent_q(a)} go"
        d.mention(agent=a)
        ans = f"{d.agent_a(a)} went to the {c1} or the {c2}"
        return Turn(q, ans, NotSure(WhereAgent(a), phrase), "al_where")
    cands = w.candidates("cur", a) if not w.knows_var("cur", a) else w.candidates("prev", a)
    loc = choice(rng, cands)
    other = cands[1] if cands[0] == loc else cands[0]
    q, _ = _al_yesno_question(c, a, loc, False)
    s = d.agent_a(a)
    ans = choice(rng, (f"{s} was there or in the {other}", f"{s} was there if not in the {other}"))
    return Turn(q, ans, NotSure(Whether(AgentAt(a, loc)), phrase), "al_yesno")


def al_close_but(c):
    w, d = c.w, c.d
    a, loc, follow = _al_yesno_pick(c, False)
    q, _ = _al_yesno_question(c, a, loc, follow)
    s = d.agent_a(a)
    if c.rng.random() < 0.6:
        ans = f"{s} {c.go_verb()} to the {w.cur[a]}"
    else:
        ans = f"{s} was in the {w.prev[a]}"
    return Turn(q, ans, AgentAt(a, loc, True), "al_yesno")


# ================================ agent_action ==================================================


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


# ================================ object_location ===============================================

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


def _known_loc_objects(c):
    return c.w.known_loc_objects


def ol_explicit(c):
    w, d, rng = c.w, c.d, c.rng
    obj = c.pick(_known_loc_objects(c), d.last_obj)
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
    obj = c.pick(_known_loc_objects(c), d.last_obj)
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
    objs = [o for o in _known_loc_objects(c) if w.putter[o] in c.known_agents() and w.knows_var("putter", o)]
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
    obj = c.pick(_known_loc_objects(c), d.last_obj)
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
    obj = c.pick(_known_loc_objects(c), d.last_obj)
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


# ================================ object_scale ==================================================


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
    obj = c.pick(_known_loc_objects(c), c.d.last_obj)
    loc = w.obj_loc[obj]
    asked = choice(rng, [x for x in w.locations if x != loc])
    q = _quant_question(c, obj, asked, "some")
    all_there = w.obj_count[obj] == w.obj_total[obj] and w.knows_var("obj_count", obj)
    ans = f"they are all in the {loc}" if all_there else f"they are in the {loc}"
    c.d.mention(loc=loc)
    return Turn(q, ans, ObjectAt(obj, asked, True), "os_quant")


TEMPLATES = {
    "agent_location": {
        "explicit": (al_explicit_yesno, al_explicit_where),
        "relevance": (al_relevance,),
        "strengthening": (al_strengthening,),
        "limiting": (al_limiting,),
        "ignorance": (al_ignorance,),
        "close_but": (al_close_but,),
    },
    "agent_action": {
        "explicit": (aa_explicit,),
        "relevance": (aa_relevance,),
        "strengthening": (aa_strengthening,),
        "limiting": (aa_limiting,),
        "ignorance": (aa_ignorance,),
        "close_but": (aa_close_but,),
    },
    "object_location": {
        "explicit": (ol_explicit,),
        "relevance": (ol_relevance,),
        "strengthening": (ol_strengthening,),
        "limiting": (ol_limiting,),
        "ignorance": (ol_ignorance,),
        "close_but": (ol_close_but,),
    },
    "object_scale": {
        "explicit": (os_explicit,),
        "relevance": (os_relevance,),
        "strengthening": (os_strengthening,),
        "limiting": (os_limiting,),
        "ignorance": (os_ignorance,),
        "close_but": (os_close_but,),
    },
}


_SUBTOPIC_ORDERS = tuple(permutations(SUBTOPICS))


def build_turn(c: Ctx, implicature: str) -> tuple | None:
    """OR over subtopics (random order) and their templates; returns (subtopic, Turn) or None.

    Templates bind slots before they mention anything, but a template may still fail after a
    partial mention; the discourse is restored from a snapshot in that case.
    """
    order = _SUBTOPIC_ORDERS[int(c.rng.random() * len(_SUBTOPIC_ORDERS))]
    d = c.d
    for subtopic in order:
        for template in TEMPLATES[subtopic][implicature]:
            snap = (d.last_agent, d.last_obj, d.last_loc, len(d.agents), len(d.objects), len(d.locations))
            turn = template(c)
            if turn is not None:
                gold = turn.gold
                ok = c.w.holds(gold) and (isinstance(gold, NotSure) or c.w.knows(gold))
                if ok:
                    return subtopic, turn
            d.last_agent, d.last_obj, d.last_loc = snap[0], snap[1], snap[2]
            del d.agents[snap[3] :], d.objects[snap[4] :], d.locations[snap[5] :]
    return None
