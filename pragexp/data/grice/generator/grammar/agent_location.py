"""Speech templates of the agent location subtopic: where the woman and the others were.

Questions are wh-questions ("where did Mia go", "where were you") or yes/no ones ("was Mia in the
den", "did you go there"); follow-ups reuse the previous round's agent ("what about the hall", "or
the hall", "then where").
"""

from __future__ import annotations

from ..epistemic import DontKnow, NotSure, WhereAgent, Whether
from ..facts import WOMAN, AgentAt, AgentPath, AgentWent, WasThenPut
from ..world import KNOWN, NONE, PARTIAL
from .context import NO_IDEA, Turn

SUBTOPIC = "agent_location"


def _wh_question(c, a):
    """A wh-question about where agent a was; mentions a."""
    d = c.d
    if a == WOMAN:
        frame = c.followup(SUBTOPIC, 0.5)
        if frame is not None and frame[1] == "al_not_there" and frame[2] == WOMAN:
            q = "then where"
        else:
            q = c.choice(("where did you go", "where were you"))
    elif a == d.last_agent and c.rng.random() < 0.5:
        q = f"where was {d.agent_q(a)}"
    else:
        q = c.choice(("where did {} go", "where did you see {}", "how can I find {}", "where was {}")).format(
            a
        )
    d.mention(agent=a)
    return q


def _yn_question(c, a, loc, follow_ok=True):
    """A yes/no question whether agent a was in loc; mentions a and loc."""
    d, rng = c.d, c.rng
    frame = c.followup(SUBTOPIC) if follow_ok else None
    if frame is not None and frame[2] == a and a != WOMAN and loc != frame[4]:
        # "what about hall" (sic) is how the release words it most often
        q = c.weighted(((7, f"what about {loc}"), (7, f"or the {loc}"), (1, f"what about the {loc}")))
    elif a == WOMAN:
        q = c.choice((f"were you {d.in_loc(loc)}", f"did you go {d.to_loc(loc)}"))
    else:
        verb = "did {} go {}" if rng.random() < 0.55 else "was {} {}"
        q = verb.format(d.agent_q(a), d.to_loc(loc) if verb.startswith("did") else d.in_loc(loc))
    d.mention(agent=a, loc=loc)
    return q


def _agent(c, pool):
    return c.pick(pool, c.d.last_agent)


# --- explicit ----------------------------------------------------------------------------------


def al_explicit_self(c):
    """ "where were you" / "I was in the den"; "were you there" / "I was not there"."""
    w, d = c.w, c.d
    if c.rng.random() < 0.5:
        q = _wh_question(c, WOMAN)
        if c.rng.random() < 0.5:
            verb = c.go_verb()
            d.mention(loc=w.cur[WOMAN])
            return Turn(
                q,
                f"I {verb} to the {w.cur[WOMAN]}",
                AgentWent(WOMAN, w.cur[WOMAN], verb),
                "al_where",
                ("agent", WOMAN),
            )
        loc = c.choice((w.prev[WOMAN], w.cur[WOMAN]))
        d.mention(loc=loc)
        return Turn(q, f"I was in the {loc}", AgentAt(WOMAN, loc), "al_where", ("agent", WOMAN))
    there = c.rng.random() < 0.35
    loc = c.pick([w.prev[WOMAN], w.cur[WOMAN]] if there else c.unvisited(WOMAN), d.last_loc)
    q = _yn_question(c, WOMAN, loc)
    ans, kind = ("I was there", "al_yesno") if there else ("I was not there", "al_not_there")
    return Turn(q, ans, AgentAt(WOMAN, loc, not there), kind, ("agent", WOMAN, loc))


def al_explicit_other(c):
    """ "was Mia in the den" / "she was not there"."""
    w, d = c.w, c.d
    a = _agent(c, w.routes_known[1:])  # the woman (always first) knows her own route
    if a is None:
        return None
    there = c.rng.random() < 0.15
    loc = c.pick([w.prev[a], w.cur[a]] if there else c.unvisited(a), d.last_loc)
    q = _yn_question(c, a, loc)
    s = d.subj(a)
    ans = f"{s} was there" if there else f"{s} was not there"
    return Turn(q, ans, AgentAt(a, loc, not there), "al_yesno", ("agent", a, loc))


# --- close but ---------------------------------------------------------------------------------


def al_close_but(c):
    """ "were you in the hall" / "I went to the den": I was not in the hall."""
    w, d = c.w, c.d
    pool = w.routes_known
    a = c.pick(pool, c.d.last_agent if c.rng.random() < 0.7 else WOMAN)
    loc = c.pick(c.unvisited(a), d.last_loc)
    q = _yn_question(c, a, loc)
    s = d.subj(a)
    if c.rng.random() < 0.55:
        where = w.cur[a]
        ans = f"{s} {c.go_verb()} to the {where}"
    else:
        where = c.choice((w.prev[a], w.cur[a]))
        ans = f"{s} was in the {where}"
    d.mention(loc=where)
    return Turn(q, ans, AgentAt(a, loc, True), "al_yesno", ("agent", a, loc), alt_loc=where)


# --- relevance ---------------------------------------------------------------------------------


def al_relevance(c):
    """ "where did Mia go" / "she said she went to the den": Mia was in the den."""
    w, d = c.w, c.d
    a = _agent(c, [x for x in w.others if w.level["cur"][x] == KNOWN])
    if a is None:
        return None
    q = _wh_question(c, a)
    cur = w.cur[a]
    if c.rng.random() < 0.6:
        ans = f"{c.said(a)} {c.go_verb()} to the {cur}"
    else:
        ans = f"{c.said(a)} was in the {cur}"
    d.mention(loc=cur)
    return Turn(q, ans, AgentAt(a, cur), "al_where", ("agent", a))


# --- strengthening -----------------------------------------------------------------------------


def al_strengthening(c):
    """ "where did you go" / "I went to the hall and the den": first the hall, then the den."""
    w, d = c.w, c.d
    pool = w.routes_known
    a = c.pick(pool, c.d.last_agent if c.rng.random() < 0.6 else WOMAN)
    q = _wh_question(c, a)
    verb = c.go_verb()
    body = f"{verb} to the {w.prev[a]} and the {w.cur[a]}"
    if a == WOMAN:
        ans = f"I {body}"
    elif c.rng.random() < 0.5:
        ans = f"{c.said(a)} {body}"
    else:
        ans = f"{d.subj(a)} {body}"
    d.mention(loc=w.cur[a])
    return Turn(q, ans, AgentPath(a, w.prev[a], w.cur[a], verb), "al_where", ("agent", a), alt_loc=w.prev[a])


def al_strengthening_put(c):
    """ "were you in the den" / "I was in the den and left the limes": and then left them there."""
    w, d = c.w, c.d
    mine = w.puts_of(WOMAN)
    if not mine:
        return None
    obj = c.pick(mine, d.last_obj)
    loc = w.prev[WOMAN]
    q = _yn_question(c, WOMAN, loc, follow_ok=False)
    verb = c.put_verb()
    ans = f"I was in the {loc} and {verb} the {obj}"
    d.mention(obj=obj)
    return Turn(q, ans, WasThenPut(WOMAN, loc, obj, verb), "al_yesno", ("agent", WOMAN, loc))


# --- ignorance ---------------------------------------------------------------------------------


def _unsure_agents(c, level, prev_known=True):
    w = c.w
    return [
        x for x in w.others if w.level["cur"][x] == level and (w.level["prev"][x] == KNOWN or not prev_known)
    ]


def al_ignorance_where(c):
    """ "where did Mia go" / "I know she didn't go to the den" or "she went to the hall or the den"."""
    w, d = c.w, c.d
    a = _agent(c, _unsure_agents(c, PARTIAL, prev_known=False))
    if a is None:
        return None
    q = _wh_question(c, a)
    s = d.subj(a)
    c1, c2 = w.candidates("cur", a)
    r = c.rng.random()
    if r < 0.6:
        ruled_out = c.choice([x for x in w.locations if x not in (c1, c2)])
        # the release writes "didn't went" here, every time; kept as it is (see README)
        ans = f"I know {s} didn't went to the {ruled_out}"
        d.mention(loc=ruled_out)
        alt = ruled_out
    else:
        ans = f"{s} {c.go_verb()} to the {c1} or the {c2}" if r < 0.82 else f"{s} was in the {c1} or the {c2}"
        d.mention(loc=c2)
        alt = c1
    return Turn(q, ans, NotSure(WhereAgent(a)), "al_where_unsure", ("agent", a), alt_loc=alt)


def al_ignorance_whether(c):
    """ "was Mia in the den" / "it is likely" or "she was there if not in the hall"."""
    w, d = c.w, c.d
    frame = d.frame
    prefer = frame[2] if frame is not None and frame[0] == SUBTOPIC else d.last_agent
    a = c.pick(_unsure_agents(c, PARTIAL), prefer, 0.8)
    if a is None:
        return None
    cands = w.candidates("cur", a)
    loc = c.pick(list(cands), d.last_loc)
    other = cands[1] if cands[0] == loc else cands[0]
    q = _yn_question(c, a, loc)
    s = d.subj(a)
    ans = c.weighted(
        (
            (0.25, "it is likely"),
            (0.27, f"{s} {c.go_verb()} there or to the {other}"),
            (0.26, f"{s} was there if not in the {other}"),
            (0.22, f"{s} was there or in the {other}"),
        )
    )
    if not ans.startswith("it"):
        d.mention(loc=other)
    return Turn(q, ans, NotSure(Whether(AgentAt(a, loc))), "al_yesno", ("agent", a, loc), alt_loc=other)


def al_ignorance_none(c):
    """ "was Mia in the den" / "I have no idea": I don't know if Mia was in the den."""
    w = c.w
    a = _agent(c, _unsure_agents(c, NONE))
    if a is None:
        return None
    loc = c.choice([x for x in w.candidates("cur", a) if x != w.prev[a]])
    q = _yn_question(c, a, loc)
    return Turn(q, c.choice(NO_IDEA), DontKnow(Whether(AgentAt(a, loc))), "al_yesno", ("agent", a, loc))


TEMPLATES = {
    "explicit": ((0.85, al_explicit_self), (0.15, al_explicit_other)),
    "relevance": ((1.0, al_relevance),),
    "strengthening": ((0.88, al_strengthening), (0.12, al_strengthening_put)),
    "limiting": (),
    "ignorance": ((0.45, al_ignorance_where), (0.52, al_ignorance_whether), (0.03, al_ignorance_none)),
    "close_but": ((1.0, al_close_but),),
}
