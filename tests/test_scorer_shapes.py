"""Scoring's guarantee (pragexp/generation/scoring/passes.py, issue 27 and 40): a request's scores are a
function of the request and the model only, bit for bit: the same alone, beside other requests, shuffled, cold
or from a half-filled response cache; the request's head (the part its prompt shares with the prompt's other
items) runs once and gives the numbers of a plain forward pass."""

from __future__ import annotations

import random

import pytest
import torch

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.cache.cached_backend import CachedBackend, open_cache
from pragexp.generation.scoring import causal_lm, passes
from pragexp.generation.scoring.requests import ChoiceRequest, encode_request
from pragexp.generation.scoring.scorer import score_choices
from pragexp.pretrained.causal import tiny_causal_lm

# as templates.py cuts it: up to the input's opening words, their trailing space left to the item's own text
HEAD = "Does the following response to the question imply yes or no?\n\nquestion:"
PAIRS = [
    ("Is Marci grumpy?", "he's as gentle as a lamb"),
    ("Are you coming tonight?", "I wouldn't miss it."),
    ("Did you finish the report that was due on Monday morning?", "Almost, one page to go."),
    ("Shall we eat out?", "Sure."),
    ("Is the dress too long?", "It could sweep the floor, and it is the colour of a lemon."),
    ("Do you like it?", "It has its good and bad points."),
]
OPTIONS = ("yes", "no", "in the middle, neither yes nor no", "yes, subject to some conditions")


def ludwig_like(head: bool = True, options=OPTIONS) -> list[ChoiceRequest]:
    texts = [f"{HEAD} {q}\nresponse: {a}\nimplicature:" for q, a in PAIRS]
    return [ChoiceRequest(t, options, head=len(HEAD) if head else 0) for t in texts]


def plain(model, tokenizer, request: ChoiceRequest) -> list[float]:
    """One whole forward pass per (context, option), no cache, no head."""
    e = encode_request(tokenizer, request)
    out = []
    for cont in e.continuations:
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([[*e.context, *cont]])).logits[0].float(), -1)
        out.append(sum(float(logp[len(e.context) + j - 1, t]) for j, t in enumerate(cont)))
    return out


def logliks(rows) -> list[list[float]]:
    return [[s.loglik for s in row] for row in rows]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_an_item_scores_the_same_alone_beside_others_and_shuffled(dtype):
    model, tokenizer = tiny_causal_lm()
    scores_independent_of_the_call(model.to(dtype), tokenizer, varied_requests())


def varied_requests() -> list[ChoiceRequest]:
    """Requests with and without a head, one- and several-token options."""
    return ludwig_like() + ludwig_like(head=False)[:2] + [ChoiceRequest("Label: ", ("no", "yes, it is"))]


def scores_independent_of_the_call(
    model, tokenizer, reqs: list[ChoiceRequest], shapes: passes.PassShapes = passes.SHAPES_CPU
) -> list[list[float]]:
    """Asserts each request's scores are the same bits alone, all together, shuffled, in calls of two and of
    three, and beside more items than a pass holds (other options of the same contexts among them), under the
    shape table `shapes`; returns the scores alone."""

    def scored(some: list[ChoiceRequest]) -> list[list[float]]:
        return logliks(score_choices(model, tokenizer, some, shapes=shapes))

    alone = [scored([r])[0] for r in reqs]
    assert scored(reqs) == alone
    order = list(range(len(reqs)))
    random.Random(1).shuffle(order)
    shuffled = scored([reqs[i] for i in order])
    assert [shuffled[order.index(i)] for i in range(len(reqs))] == alone
    for size in (2, 3):
        assert [row for at in range(0, len(reqs), size) for row in scored(reqs[at : at + size])] == alone
    many = [*reqs, *ludwig_like(options=("no", "maybe so")), *ludwig_like(head=False)]
    assert scored(many)[: len(reqs)] == alone
    return alone


def test_the_plan_depends_on_the_set_of_contexts_and_each_pass_on_its_width():
    rng = random.Random(0)
    head = tuple(range(100, 110))
    contexts = [(head + tuple(rng.randrange(50) for _ in range(n)), len(head)) for n in range(1, 40)]
    contexts += [(tuple(rng.randrange(50) for _ in range(n)), 0) for n in (1, 7, 8, 9, 16)]
    for shapes in (passes.SHAPES_V4, passes.PassShapes(512, 16, 5), passes.PassShapes(4096, 8, 512)):
        planned = passes.plan(contexts, shapes)
        assert passes.plan(rng.sample(contexts, len(contexts)), shapes) == planned
        seen = []
        for shared, head_passes in planned:
            for p in head_passes:
                assert len(p.rows) == shapes.rows_for(p.width) <= shapes.max_rows and 1 <= p.real <= len(
                    p.rows
                )
                assert all(row == p.rows[0] for row in p.rows[p.real :])  # dummies repeat the first row
                for ids, h in p.rows[: p.real]:
                    own = len(ids) - h
                    assert ids[:h] == shared and p.width % shapes.bucket == 0
                    assert p.width - shapes.bucket < own + (h == 0) <= p.width  # headless: one pad at least
                    seen.append((ids, h))
        assert sorted(seen) == sorted(contexts)


def test_the_head_runs_once_and_gives_a_plain_forward_pass_numbers(monkeypatch):
    model, tokenizer = tiny_causal_lm()
    reqs = ludwig_like()
    shapes = []
    real = causal_lm.CausalLM.forward

    def recorded(self, ids, *args, **kwargs):
        shapes.append(tuple(ids.shape))
        return real(self, ids, *args, **kwargs)

    monkeypatch.setattr(causal_lm.CausalLM, "forward", recorded)
    got = logliks(score_choices(model, tokenizer, reqs))
    head = encode_request(tokenizer, reqs[0]).head
    assert head > 5 and shapes.count((1, head)) == 1  # the head once, as a row of its own
    assert all(rows == passes.rows_for(width) for rows, width in shapes[1:])  # then fixed-shape passes
    for request, row in zip(reqs, got, strict=True):
        assert row == pytest.approx(plain(model, tokenizer, request), abs=1e-4)


def test_a_head_is_the_token_prefix_that_head_and_context_share():
    _, tokenizer = tiny_causal_lm()
    encode = lambda t: tokenizer(t, add_special_tokens=False)["input_ids"]  # noqa: E731
    [request] = ludwig_like()[:1]
    e = encode_request(tokenizer, request)
    head_ids = encode(HEAD)
    assert e.head == len(head_ids) and e.context[: e.head] == tuple(head_ids)
    # a head that ends inside a token: the shared tokens stop before it
    assert encode("Answ")[0] != encode("Answer")[0]
    inside = ChoiceRequest("Answer the question: yes", ("no",), head=len("Answ"))
    assert encode_request(tokenizer, inside).head == 0
    inside = ChoiceRequest("Say it. Answer the question: yes", ("no",), head=len("Say it. Answ"))
    e, head_ids = encode_request(tokenizer, inside), encode("Say it. Answ")
    assert len(encode("Say it.")) <= e.head < len(head_ids) and e.context[: e.head] == tuple(
        head_ids[: e.head]
    )
    # the whole context as head: its last token stays the item's own
    whole = ChoiceRequest("Answer the question:", ("no",), head=len("Answer the question:"))
    assert encode_request(tokenizer, whole).head == len(encode("Answer the question:")) - 1
    assert encode_request(tokenizer, ChoiceRequest("Answer:", ("no",))).head == 0
    with pytest.raises(ValueError, match="head of 99"):
        ChoiceRequest("Answer:", ("no",), head=99)


def test_a_head_that_is_no_token_prefix_falls_back_to_the_plain_numbers():
    """A head that ends inside a word, or text that the context does not start with: the split moves to where
    the tokens agree (nothing at all for the latter), and the numbers stay those of a plain pass."""
    model, tokenizer = tiny_causal_lm()
    context = "Answer the question: is it raining?\nLabel:"
    reqs = [
        ChoiceRequest(context, OPTIONS, head=len("Answer the question: is it rai")),
        ChoiceRequest(context, OPTIONS, head=3),
        ChoiceRequest(context, OPTIONS),
    ]
    got = logliks(score_choices(model, tokenizer, reqs))
    for request, row in zip(reqs, got, strict=True):
        assert row == pytest.approx(plain(model, tokenizer, request), abs=1e-4)


def test_the_same_numbers_cold_and_half_cached_and_keys_differ_by_head(tmp_path):
    backend = HFBackend(model="tiny", device="cpu", batch_size=4)
    model, _ = backend.load()
    backend._model = model.to(torch.bfloat16)
    reqs = [*ludwig_like(), *ludwig_like(head=False)[:3]]
    cold = CachedBackend(backend, tmp_path / "cold").loglikelihood_many(reqs)
    warm = CachedBackend(backend, tmp_path / "warm")
    warm.loglikelihood_many(reqs[1::2])
    assert logliks(warm.loglikelihood_many(reqs)) == logliks(cold)
    # the head is part of the request: the same context with another head is another key
    misses = open_cache(tmp_path / "warm").misses
    warm.loglikelihood_many([ChoiceRequest(reqs[0].context, reqs[0].options, head=3)])
    assert open_cache(tmp_path / "warm").misses - misses == len(OPTIONS)


def test_a_head_is_kept_for_the_next_call_until_the_weights_change():
    """A run's batches share their head: the backend runs it once and keeps its cache (`head_cache`), which
    gives the numbers of a fresh pass bit for bit; a weight updated in place (an optimizer step) or training
    mode runs it again."""
    backend = HFBackend(model="tiny", device="cpu", batch_size=4)
    reqs = ludwig_like()
    first = logliks(backend.loglikelihood_many(reqs[:3]))
    calls = backend.calls
    second = logliks(backend.loglikelihood_many(reqs[3:]))
    assert backend._heads.hits == 1
    fresh = HFBackend(model="tiny", device="cpu", batch_size=4)
    fresh._model, fresh._tokenizer = backend.load()
    assert logliks(fresh.loglikelihood_many(reqs[3:])) == second and fresh.calls == backend.calls - calls + 1
    assert first + second == logliks(fresh.loglikelihood_many(reqs))

    model, tokenizer = backend.load()
    with torch.no_grad():
        next(model.parameters()).mul_(1.5)  # what an optimizer step does: in place
    changed = logliks(backend.loglikelihood_many(reqs[:3]))
    assert backend._heads.hits == 1 and changed != first  # not served from the kept head
    assert changed == logliks(score_choices(model, tokenizer, reqs[:3]))
    model.train()
    backend.loglikelihood_many(reqs[:3])
    backend.loglikelihood_many(reqs[:3])
    assert backend._heads.hits == 1  # dropout on: nothing kept
