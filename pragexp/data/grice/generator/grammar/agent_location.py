"""Speech templates of the agent location subtopic, one or more per implicature type (see grammar/__init__.py)."""

from __future__ import annotations

from ..facts import WOMAN, AgentAt, AgentPath, AgentWent, NotSure, WhereAgent, Whether
from ..rand import choice
from .context import UNSURE_PHRASES, Turn, hearsay


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
        return Turn(q, f"{hearsay(c, a)} {verb} there", AgentAt(a, cur), "al_yesno")
    form = c.choice(("where did {} go", "how can I find {}", "where did you see {}"))
    q = form.format(d.agent_q(a) if form.endswith("go") else d.agent_obj(a))
    d.mention(agent=a)
    ans = f"{hearsay(c, a)} {verb} {d.to_loc(cur)}"
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


TEMPLATES = {
    "explicit": (al_explicit_yesno, al_explicit_where),
    "relevance": (al_relevance,),
    "strengthening": (al_strengthening,),
    "limiting": (al_limiting,),
    "ignorance": (al_ignorance,),
    "close_but": (al_close_but,),
}
