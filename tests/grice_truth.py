"""Truth re-checked independently of the GRICE generator's own ``holds``: facts are evaluated on plain dicts,
and the woman's knowledge by enumerating every world she holds possible for the variables a fact reads (listed
here, not taken from the generator)."""

from __future__ import annotations

import itertools

from grice_cases import LEX, WOMAN


def valuation(w):
    return {
        "prev": dict(w.prev),
        "cur": dict(w.cur),
        "putter": dict(w.putter),
        "partner": dict(w.partner),
        "obj_loc": dict(w.obj_loc),
        "obj_count": dict(w.obj_count),
        "obj_total": dict(w.obj_total),
    }


def reads(f):
    """The world variables a fact or query depends on."""
    name = type(f).__name__
    if name == "Whether":
        return reads(f.fact)
    if name in ("NotSure", "DontKnow"):
        return reads(f.query)
    if name in ("AgentAt", "AgentPath"):
        return [("prev", f.agent), ("cur", f.agent)]
    if name in ("AgentWent", "WhereAgent"):
        return [("cur", f.agent)]
    if name in ("Put", "PutTogether"):
        return [("putter", f.obj), ("obj_loc", f.obj)]
    if name == "PutBoth":
        return [("putter", f.obj), ("obj_loc", f.obj), ("putter", f.other), ("obj_loc", f.other)]
    if name == "PutThenWent":
        return [("putter", f.obj), ("obj_loc", f.obj), ("prev", f.agent), ("cur", f.agent)]
    if name == "WasThenPut":
        return [("prev", f.agent), ("putter", f.obj), ("obj_loc", f.obj)]
    if name in ("ObjectAt", "WhereObj"):
        return [("obj_loc", f.obj)]
    if name in ("ObjectQuant", "HowMany"):
        return [("obj_loc", f.obj), ("obj_count", f.obj)]
    assert name == "InContainer", name
    return []


def possible_valuations(w, f):
    """Every world the woman holds possible, varying the variables f reads."""
    slots = sorted(set(reads(f)))
    for values in itertools.product(*(w.possible[t][k] for t, k in slots)):
        v = valuation(w)
        for (t, k), value in zip(slots, values, strict=True):
            v[t][k] = value
        yield v


def count_in(v, obj, loc):
    return v["obj_count"][obj] if v["obj_loc"][obj] == loc else 0


def did_put(v, a, o, loc):
    return a in (v["putter"][o], v["partner"][o]) and v["obj_loc"][o] == loc


def query_value(v, q, w):
    name = type(q).__name__
    if name == "WhereAgent":
        return v["cur"][q.agent]
    if name == "WhereObj":
        return v["obj_loc"][q.obj]
    if name == "HowMany":
        return count_in(v, q.obj, q.loc)
    assert name == "Whether"
    return truth(q.fact, v, w)


def knowledge(w, q):
    """known / partial / none, recomputed: none when she has no knowledge of a variable that matters."""
    if len({query_value(v, q, w) for v in possible_valuations(w, q)}) == 1:
        return "known"
    varying = [(t, k) for t, k in set(reads(q)) if len(w.possible[t][k]) > 1]
    return "none" if any(w.level[t][k] == "none" for t, k in varying) else "partial"


def truth(f, v, w):
    name = type(f).__name__
    if name == "AgentAt":
        return (f.loc in (v["prev"][f.agent], v["cur"][f.agent])) != f.neg
    if name == "AgentWent":
        return v["cur"][f.agent] == f.loc
    if name == "AgentPath":
        return (v["prev"][f.agent], v["cur"][f.agent]) == (f.first, f.second)
    if name == "Put":
        return did_put(v, f.agent, f.obj, f.loc) != f.neg
    if name == "PutTogether":
        return {v["putter"][f.obj], v["partner"][f.obj]} == {f.agent, WOMAN} and v["obj_loc"][f.obj] == f.loc
    if name == "PutBoth":
        return did_put(v, f.agent, f.obj, f.loc) and did_put(v, f.agent, f.other, f.loc)
    if name == "WasThenPut":
        return v["prev"][f.agent] == f.loc and did_put(v, f.agent, f.obj, f.loc)
    if name == "PutThenWent":
        return (
            did_put(v, f.agent, f.obj, f.loc) and v["prev"][f.agent] == f.loc and v["cur"][f.agent] == f.dest
        )
    if name == "ObjectAt":
        return (v["obj_loc"][f.obj] == f.loc) != f.neg
    if name == "InContainer":
        return False
    if name == "ObjectQuant":
        n, total = count_in(v, f.obj, f.loc), v["obj_total"][f.obj]
        return {"all": n == total, "some": 0 < n < total, "not_all": n < total}.get(f.quant, n == f.quant)
    if name == "NotSure":
        return knowledge(w, f.query) == "partial"
    assert name == "DontKnow", name
    return knowledge(w, f.query) == "none"


def true_in_world(w, f):
    return truth(f, valuation(w), w)


def woman_knows(w, f):
    return len({truth(f, v, w) for v in possible_valuations(w, f)}) == 1


def qa_expected(w, q):
    """One-word answer of a query, recomputed from the raw world tables and the woman's knowledge."""
    from pragexp.data.grice.generator import epistemic as E
    from pragexp.data.grice.generator import facts as F

    v, kind = valuation(w), q[0]
    yn = {True: "yes", False: "no"}
    if kind == "knows_where":
        return yn[knowledge(w, E.WhereObj(q[1])) == "known"]
    if kind in ("where_obj", "believe_where"):
        assert len(w.possible["obj_loc"][q[1]]) == 1
        return w.obj_loc[q[1]]
    if kind == "obj_at":
        return yn[w.obj_loc[q[1]] == q[2]]
    if kind in ("any_at", "some_at"):
        return yn[count_in(v, q[1], q[2]) > 0]
    if kind == "all_at":
        return yn[count_in(v, q[1], q[2]) == w.obj_total[q[1]]]
    if kind == "knows_count":
        return yn[knowledge(w, E.HowMany(q[1], w.obj_loc[q[1]])) == "known"]
    if kind == "count_word":
        n = count_in(v, q[1], q[2])
        if q[3] == "number":
            return LEX.numbers[n - 1]
        return "all" if n == w.obj_total[q[1]] else "some"
    if kind == "believe_count":
        return LEX.numbers[count_in(v, q[1], q[2]) - 1]
    if kind == "agent_believe_count":
        n = count_in(v, q[2], q[3])
        return "all" if n == w.obj_total[q[2]] else LEX.numbers[n - 1]
    if kind == "knows_who_put":
        return yn[len(w.possible["putter"][q[1]]) == 1]
    if kind == "who_put":
        return "woman" if w.putter[q[1]] == WOMAN else w.putter[q[1]]
    if kind in ("did_put", "knows_if_put"):
        f = F.Put(q[1], q[2], q[3])
        known = woman_knows(w, f)
        if kind == "knows_if_put":
            return yn[known]
        return yn[did_put(v, q[1], q[2], q[3])] if known else "unknown"
    if kind == "visited":
        f = F.AgentAt(q[1], q[2])
        return yn[true_in_world(w, f)] if woman_knows(w, f) else "unknown"
    if kind == "visited_final":
        return yn[w.cur[q[1]] == q[2]]
    if kind in ("final", "believe_final"):
        assert len(w.possible["cur"][q[1]]) == 1
        return w.cur[q[1]]
    if kind == "where_unknown":
        assert len(w.possible["cur"][q[1]]) > 1
        return "unknown"
    if kind == "knows_final":
        return yn[len(w.possible["cur"][q[1]]) == 1]
    raise AssertionError(kind)
