"""The one scorer (pragexp/generation/scoring/scorer.py): the shared-prefix KV-cache scorer equals a plain
forward pass per (context, option), whatever the batch size, order and option pass (packed on one row per
item, or one row per option); the cache. Ranking and calibration: test_ranking."""

from __future__ import annotations

import random

import pytest
import torch

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.cache.cached_backend import CachedBackend, open_cache
from pragexp.generation.ranking import choose
from pragexp.generation.scoring import causal_lm, scorer
from pragexp.generation.scoring.causal_lm import CausalLM
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore
from pragexp.generation.scoring.scorer import option_logliks, score_choices
from pragexp.pretrained.causal import tiny_causal_lm

SHOTS = "Answer with yes or no.\nQ: Is it raining? A: I took an umbrella.\nLabel: yes\n"
OPTIONS = ("the", "no", "in the middle", "yes, subject to some conditions")


def naive(model, tokenizer, context: str, option: str) -> float:
    """lm-evaluation-harness's pair, written out: one full forward pass over context + continuation."""
    encode = lambda t: tokenizer(t, add_special_tokens=False)["input_ids"]  # noqa: E731
    stripped = context.rstrip()
    cont = context[len(stripped) :] + option
    ctx_ids = encode(stripped) if stripped else [tokenizer.eos_token_id]
    cont_ids = encode(stripped + cont)[len(ctx_ids) :] if stripped else encode(cont)
    ids = torch.tensor([ctx_ids + cont_ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0].float(), -1)
    return sum(float(logp[len(ctx_ids) + j - 1, t]) for j, t in enumerate(cont_ids))


def requests() -> list[ChoiceRequest]:
    items = [
        "Q: Do you like your new car?\nA: It has its good and bad points.\nLabel: ",
        "Q: Are you coming tonight?\nA: I wouldn't miss it.\nLabel:",
        "Q: Is the dress too long?\nA: It could sweep the floor.\nLabel: ",
        "Q: Shall we eat out?\nA: Sure.\nLabel: ",
        "Q: Did you finish?\nA: Almost done, give me a minute, please; I am on the last page now.\nLabel: ",
    ]
    out = [ChoiceRequest(SHOTS + q, OPTIONS) for q in items]
    out.append(ChoiceRequest(SHOTS + "N/A\nLabel: ", OPTIONS))  # content-free input, same template
    out.append(ChoiceRequest(SHOTS + items[0], ("no", "maybe")))  # same context, other options
    return out


@pytest.fixture(scope="module")
def tiny():
    return HFBackend(model="tiny", device="cpu", batch_size=4)


def test_scores_equal_a_plain_forward_pass_per_option(tiny):
    model, tokenizer = tiny.load()
    reqs = requests()
    got = score_choices(model, tokenizer, reqs)
    assert any(s.tokens > 1 for row in got for s in row) and any(s.tokens == 1 for row in got for s in row)
    for request, scores in zip(reqs, got, strict=True):
        for option, score in zip(request.options, scores, strict=True):
            assert isinstance(score.loglik, float) and isinstance(score.tokens, int)
            assert score.loglik == pytest.approx(naive(model, tokenizer, request.context, option), abs=1e-4)


@pytest.mark.parametrize("checkpointing", [False, True])
def test_option_logliks_carry_gradients_and_equal_the_inference_scores(tiny, checkpointing):
    """Fine-tuning scores options as evaluation does: the KV-cache path, or whole sequences when gradient
    checkpointing (which keeps no cache) is on."""
    model, tokenizer = tiny_causal_lm()
    reqs = requests()
    expected = score_choices(model, tokenizer, reqs)
    if checkpointing:
        model.gradient_checkpointing_enable()
    model.train()
    model.config.attention_dropout = 0.0  # the tiny Llama has no dropout to make training differ
    got = option_logliks(model, tokenizer, reqs, batch_size=3)
    for (values, counts), want in zip(got, expected, strict=True):
        assert values.requires_grad and values.shape == (len(want),)
        assert [c.tokens for c in counts] == [w.tokens for w in want]
        assert values.detach().tolist() == pytest.approx([w.loglik for w in want], abs=1e-4)
    loss = -torch.stack([v.log_softmax(0)[0] for v, _ in got]).sum()
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)


def test_without_a_shared_prefix_and_with_an_empty_context(tiny):
    model, tokenizer = tiny.load()
    reqs = [
        ChoiceRequest("", ("Sure, I will help", "no")),
        ChoiceRequest("What did he want to convey? Answer: ", ("1", "the speaker is being ironic")),
        ChoiceRequest("Options: 1) 2)", (" 1", " 2")),
    ]
    got = score_choices(model, tokenizer, reqs)
    for request, scores in zip(reqs, got, strict=True):
        for option, score in zip(request.options, scores, strict=True):
            assert score.loglik == pytest.approx(naive(model, tokenizer, request.context, option), abs=1e-4)


def test_token_and_byte_counts(tiny):
    model, tokenizer = tiny.load()
    [[a, b]] = score_choices(model, tokenizer, [ChoiceRequest("Label: ", ("no", "café"))])
    # the context's trailing space moves into the continuation: " no" and " café" are scored
    assert (a.bytes, b.bytes) == (3, 6)
    assert a.tokens == len(tokenizer("Label: no", add_special_tokens=False)["input_ids"]) - len(
        tokenizer("Label:", add_special_tokens=False)["input_ids"]
    )


def test_scoring_and_fine_tuning_batches_agree_whatever_the_order(tiny):
    model, tokenizer = tiny.load()
    reqs = requests()
    one = score_choices(model, tokenizer, reqs)
    order = list(range(len(reqs)))
    random.Random(0).shuffle(order)
    eight = batched(model, tokenizer, [reqs[i] for i in order], batch_size=8)
    for position, i in enumerate(order):
        for a, b in zip(one[i], eight[position], strict=True):
            assert (a.tokens, a.bytes) == (b.tokens, b.bytes)
            assert a.loglik == pytest.approx(b.loglik, abs=1e-4)  # two recipes: float rounding apart


def test_the_option_rows_of_a_model_that_does_not_honour_4d_masks_give_the_same_results(tiny, monkeypatch):
    """One row per option on a copy of its item's cache, at most OPTION_CACHE_BYTES of copies at once (here
    one row per pass), scores as the packed pass does."""
    model, tokenizer = tiny.load()
    reqs = requests()
    calls = {"packed": [], "rows": []}
    packed = batched(model, tokenizer, reqs, 8, on_call=lambda: calls["packed"].append(1))
    monkeypatch.setitem(scorer._PACKING, CausalLM(model, tokenizer, None).packing_key, False)
    monkeypatch.setattr(scorer, "OPTION_CACHE_BYTES", 1)
    rows = batched(model, tokenizer, reqs, 8, on_call=lambda: calls["rows"].append(1))
    assert len(calls["rows"]) > len(calls["packed"]) + 10  # the options went in many small passes
    for a_row, b_row in zip(packed, rows, strict=True):
        for a, b in zip(a_row, b_row, strict=True):
            assert a.loglik == pytest.approx(b.loglik, abs=1e-5)


def batched(model, tokenizer, reqs, batch_size, on_call=None) -> list[list[OptionScore]]:
    """The scorer with batches of contexts on a shared prefix (fine-tuning's way), without gradients."""
    with torch.no_grad():
        return [s for _, s in option_logliks(model, tokenizer, reqs, batch_size, on_call, on_device=False)]


def test_the_packed_pass_reads_each_item_cache_once_not_once_per_option(tiny, monkeypatch):
    model, tokenizer = tiny.load()
    reqs = requests()[:5]  # 5 items x 4 options
    batches = []
    real = causal_lm.dynamic_cache
    monkeypatch.setattr(
        causal_lm,
        "dynamic_cache",
        lambda layers, config: batches.append(layers[0][0].shape[0]) or real(layers, config),
    )
    batched(model, tokenizer, reqs, batch_size=8)
    # the items' own parts (5 rows on the shared prefix) and then their options: 5 rows, not 20
    assert max(batches) == 5


def test_a_model_that_ignores_the_packed_mask_is_found_out_and_scored_row_by_row(tiny, monkeypatch, caplog):
    model, tokenizer = tiny.load()
    reqs = requests()
    key = CausalLM(model, tokenizer, None).packing_key
    monkeypatch.delitem(scorer._PACKING, key, raising=False)
    # A model that treats the 4D mask as if there were none: every option token would see the other options.
    monkeypatch.setattr(
        CausalLM, "additive_mask", lambda self, allowed: torch.zeros(allowed.shape).unsqueeze(1)
    )
    with caplog.at_level("WARNING"):
        got = batched(model, tokenizer, reqs, 8)
    assert scorer._PACKING[key] is False and "does not honour a 4D attention mask" in caplog.text
    for request, scores in zip(reqs, got, strict=True):
        for option, score in zip(request.options, scores, strict=True):
            assert score.loglik == pytest.approx(naive(model, tokenizer, request.context, option), abs=1e-4)


def test_an_option_that_encodes_to_nothing_is_an_error(tiny):
    model, tokenizer = tiny.load()
    with pytest.raises(ValueError, match="encodes to no token"):
        score_choices(model, tokenizer, [ChoiceRequest("Answer:", ("",))])


def test_cached_scoring_asks_the_model_only_for_missing_options(tiny, tmp_path):
    path = tmp_path / "responses"
    cached = CachedBackend(tiny, path)
    reqs = requests()[:3]
    first = cached.loglikelihood_many(reqs)
    calls = tiny.calls
    assert cached.loglikelihood_many(reqs) == first and tiny.calls == calls  # all from the cache
    assert all(isinstance(s, OptionScore) for row in first for s in row)
    more = [ChoiceRequest(reqs[0].context, (*reqs[0].options, "not sure"))]
    [row] = cached.loglikelihood_many(more)
    assert row[:4] == first[0] and tiny.calls > calls
    model, tokenizer = tiny.load()
    assert row[4].loglik == pytest.approx(naive(model, tokenizer, reqs[0].context, "not sure"), abs=1e-4)
    # the key is the backend's identity as a score reads it: another batch size is the same key (the scorer's
    # numbers do not depend on the batch), another dtype another key
    misses = open_cache(path).misses
    CachedBackend(HFBackend(model="tiny", device="cpu", batch_size=2), path).loglikelihood_many(reqs[:1])
    assert open_cache(path).misses == misses
    CachedBackend(HFBackend(model="tiny", device="cpu", dtype="bfloat16"), path).loglikelihood_many(reqs[:1])
    assert open_cache(path).misses - misses == len(reqs[0].options)


@pytest.mark.slow
def test_smollm2_scores_equal_a_plain_forward_pass():
    pytest.importorskip("gguf")
    backend = HFBackend(model="smollm2", device="cpu", dtype="float32", batch_size=4)
    try:
        model, tokenizer = backend.load()
    except (ImportError, FileNotFoundError) as err:
        pytest.skip(str(err))
    labels = ("Yes", "No", "Yes, subject to some conditions", "In the middle, neither yes nor no")
    pairs = [
        ("Do you like your new car?", "It has its good and bad points."),
        ("Are you coming tonight?", "I wouldn't miss it."),
        ("Is the dress too long?", "It could sweep the floor."),
    ]
    reqs = [
        ChoiceRequest(
            backend.render(f"X asks: {q}\nY answers: {a}\nDoes Y mean yes or no?") + "Answer: ", labels
        )
        for q, a in pairs
    ]
    got = backend.loglikelihood_many(reqs)
    for request, scores in zip(reqs, got, strict=True):
        for option, score in zip(request.options, scores, strict=True):
            assert score.loglik == pytest.approx(naive(model, tokenizer, request.context, option), abs=1e-4)


@pytest.mark.slow
def test_the_benchmark_runs_the_command_and_both_scorers_on_the_recorded_requests(tmp_path):
    """bench/bench_llm_scoring.py end to end on the tiny model and the Circa fixture (needs lm-eval:
    `pip install 'pragexp[bench]'`; skipped without it)."""
    pytest.importorskip("lm_eval")
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    bench = [
        sys.executable,
        str(root / "bench" / "bench_llm_scoring.py"),
        "--model",
        "tiny",
        "--items",
        "8",
        "--bf16",
    ]
    out = subprocess.run(bench, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    for name in (
        "whole command (cold process)",
        "scorer alone (loglikelihood_many)",
        "lm-eval HFLM.loglikelihood",
    ):
        assert any(line.startswith(name) and "items/s" in line for line in out.stdout.splitlines()), name
    assert "s in the scorer (1 calls)" in out.stdout  # the probe inside the command: 8 items, one batch
    for line in (x for x in out.stdout.splitlines() if " vs " in x and "max |d loglik|" in x):
        assert float(line.split("max |d loglik| ")[1].split(",")[0]) <= 1e-4 or "bfloat16" in line
        assert "choices agree" in line


def test_a_small_cache_budget_packs_fewer_items_per_pass_with_the_same_results(tiny, monkeypatch):
    """The packed option pass takes consecutive items as views of the batch's cache; OPTION_CACHE_BYTES bounds
    the copy the model makes of them (here one item per pass)."""
    model, tokenizer = tiny.load()
    reqs = requests()
    calls = {"one pass": [], "budget": []}
    whole = batched(model, tokenizer, reqs, batch_size=8, on_call=lambda: calls["one pass"].append(1))
    monkeypatch.setattr(scorer, "OPTION_CACHE_BYTES", 1)
    small = batched(model, tokenizer, reqs, batch_size=8, on_call=lambda: calls["budget"].append(1))
    assert len(calls["budget"]) > len(calls["one pass"])
    for a_row, b_row in zip(whole, small, strict=True):
        for a, b in zip(a_row, b_row, strict=True):
            assert a.loglik == pytest.approx(b.loglik, abs=1e-5)


def test_the_packing_check_copies_a_few_option_rows_not_one_per_option(tiny, monkeypatch):
    """The once-per-model check compares the packed pass with plain rows on a few options of one item: with 30
    options (GRICE QA has 52, each row a copy of a long prompt's cache) it must not copy the cache 30
    times."""
    model, tokenizer = tiny.load()
    options = tuple(f"option number {n}" for n in range(30))
    reqs = [ChoiceRequest(SHOTS + "Q: Which one?\nA:", options)]
    monkeypatch.delitem(scorer._PACKING, CausalLM(model, tokenizer, None).packing_key, raising=False)
    rows = []
    real = causal_lm.dynamic_cache
    monkeypatch.setattr(
        causal_lm,
        "dynamic_cache",
        lambda layers, config: rows.append(layers[0][0].shape[0]) or real(layers, config),
    )
    got = batched(model, tokenizer, reqs, 8)
    assert max(rows) <= scorer.OPTION_ROWS
    for option, score in zip(options, got[0], strict=True):
        assert score.loglik == pytest.approx(naive(model, tokenizer, reqs[0].context, option), abs=1e-4)


def test_the_same_numbers_whatever_the_cache_holds_in_bfloat16(tmp_path):
    """A set scored cold, then (another cache) half of it first and the whole set after: bit-identical
    log-likelihoods and choices, in bfloat16 where a batch's shape changes the rounding."""
    backend = HFBackend(model="tiny", device="cpu", batch_size=4)
    model, _ = backend.load()
    backend._model = model.to(torch.bfloat16)
    reqs = [*requests(), *(ChoiceRequest(r.context + " ", r.options[::-1]) for r in requests()[:4])]
    cold = CachedBackend(backend, tmp_path / "cold").loglikelihood_many(reqs)
    warm_cache = CachedBackend(backend, tmp_path / "warm")
    warm_cache.loglikelihood_many(reqs[1::2])  # half of the set, in other batches
    warm = warm_cache.loglikelihood_many(reqs)
    assert [[s.loglik for s in row] for row in warm] == [[s.loglik for s in row] for row in cold]
    assert [choose([s.loglik for s in row]) for row in warm] == [
        choose([s.loglik for s in row]) for row in cold
    ]


def sentencepiece_tokenizer(add_bos_token: bool):
    """A tiny tokenizer laid out as Llama's SentencePiece one (a "▁" prepended, spaces as "▁", byte-pair
    merges within words), trained on a few lines: " yes" alone is "▁" + "▁yes", inside a text "▁yes"."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    raw.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True)
    lines = ["Answer: yes or no? The answer is yes. No, it is not yes."] * 3
    raw.train_from_iterator(
        lines, trainers.BpeTrainer(vocab_size=120, special_tokens=["<unk>", "<s>", "</s>"])
    )
    raw.pre_tokenizer = None  # Llama's: words are split by the merges alone
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    tokenizer.add_bos_token = add_bos_token
    return tokenizer


def test_a_sentencepiece_tokenizer_pairs_as_lm_evaluation_harness_and_gets_its_bos():
    from transformers import LlamaConfig, LlamaForCausalLM

    from pragexp.generation.scoring.requests import encode_request

    tokenizer = sentencepiece_tokenizer(add_bos_token=False)
    pieces = lambda ids: tokenizer.convert_ids_to_tokens(list(ids))  # noqa: E731
    assert pieces(tokenizer(" yes", add_special_tokens=False)["input_ids"]) == ["▁", "▁yes"]  # apart
    encoded = encode_request(tokenizer, ChoiceRequest("Answer: ", ("yes", "no")))
    assert pieces(encoded.context) == ["▁Answer:"] and [pieces(c) for c in encoded.continuations] == [
        ["▁yes"],
        ["▁no"],
    ]
    # a model that reads a BOS first (Gemma's add_bos_token): once, in front of the context
    with_bos = sentencepiece_tokenizer(add_bos_token=True)
    bos = with_bos.bos_token_id
    encoded_bos = encode_request(with_bos, ChoiceRequest("Answer: ", ("yes", "no")))
    assert (
        encoded_bos.context == (bos, *encoded.context) and encoded_bos.continuations == encoded.continuations
    )
    assert encode_request(with_bos, ChoiceRequest("<s>Answer: ", ("yes",))).context == encoded_bos.context
    assert encode_request(with_bos, ChoiceRequest("", ("yes",))).context == (bos,)
    # scored: one plain forward pass over BOS + "▁Answer:" + the option's tokens
    config = LlamaConfig(
        vocab_size=len(with_bos),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    got = score_choices(model, with_bos, [ChoiceRequest("Answer: ", ("yes", "no"))])[0]
    for score, cont in zip(got, encoded_bos.continuations, strict=True):
        ids = torch.tensor([[*encoded_bos.context, *cont]])
        with torch.no_grad():
            logp = torch.log_softmax(model(ids).logits[0].float(), -1)
        plain = sum(float(logp[len(encoded_bos.context) + j - 1, t]) for j, t in enumerate(cont))
        assert score.loglik == pytest.approx(plain, abs=1e-4)
