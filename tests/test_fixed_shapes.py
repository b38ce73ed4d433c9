"""Issue 55: passes sized for the device with scores still independent of the call (the shape table,
`scoring/passes.PassShapes`), and generation in continuous batches whose shapes each prompt fixes
(`backends/row_decoding`): a reply is the same alone and in any batch. The CPU tests run always; the `gpu`
ones where torch sees a CUDA device."""

from __future__ import annotations

import pytest
import torch
from test_scorer_shapes import ludwig_like, scores_independent_of_the_call, varied_requests

from pragexp.generation.backends import row_decoding
from pragexp.generation.backends.base import GenerationParams, Prompt
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.scoring import passes
from pragexp.generation.scoring.requests import ChoiceRequest, encode_request
from pragexp.generation.scoring.scorer import SCORING
from pragexp.pretrained.causal import tiny_causal_lm

# the CPU's table runs in test_scorer_shapes; v4's, a GPU-like one (many rows, a cap), an odd one and one of
# few option rows padded to powers of two here
TABLES = [
    passes.SHAPES_V4,
    passes.PassShapes(1024, 8, 64),
    passes.PassShapes(512, 16, 6),
    passes.PassShapes(256, 8, 64, option_rows=3, option_widths="pow2"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shapes", TABLES, ids=lambda s: s.name().replace("/", "-"))
def test_scores_are_the_same_bits_in_any_call_under_any_shape_table(shapes, dtype):
    model, tokenizer = tiny_causal_lm()
    scores_independent_of_the_call(model.to(dtype), tokenizer, varied_requests(), shapes)


def test_the_shape_table_is_chosen_per_device_and_dtype_and_named_in_a_score_key():
    cpu_default = passes.default_shapes("cpu", "float32")
    assert cpu_default == passes.default_shapes("cpu", "auto") == passes.SHAPES_CPU
    assert passes.default_shapes("cpu", "bfloat16") == passes.SHAPES_CPU != passes.SHAPES_V4
    assert passes.default_shapes("cuda", "float32").tokens < passes.default_shapes("cuda", "bfloat16").tokens
    assert passes.default_shapes("cuda", "auto") == passes.default_shapes("cuda", "bfloat16")
    cpu = HFBackend(model="tiny", device="cpu")
    assert cpu.identity()["pass_shapes"] == "128t/8b/4096r/16o/8l/pow2"
    assert cpu.identity()["scoring"] == SCORING
    # the table every score ran with before issue 55 leaves the key as it was: its answers still answer
    v4 = HFBackend(model="tiny", device="cpu", pass_shapes={"tokens": 128, "bucket": 8})
    assert "pass_shapes" not in v4.identity()
    # another table (a GPU's default, a setting) is named: its scores differ in their last bits (measured
    # on this CPU: float32 by up to 9.5e-07, bfloat16 with bucket 16 by up to 1e-3); a reply's key ignores it
    gpu = HFBackend(model="tiny", device="cuda", dtype="bfloat16")
    tuned = HFBackend(model="tiny", device="cpu", pass_shapes={"tokens": 512, "bucket": 16, "max_rows": 6})
    assert gpu.key_identity("loglikelihood_many")["pass_shapes"] == "4096t/8b/512r/8l"
    assert tuned.key_identity("loglikelihood_many")["pass_shapes"] == "512t/16b/6r"
    assert v4.key_identity("loglikelihood_many") != cpu.key_identity("loglikelihood_many")
    for call in ("generate", "embed"):
        assert tuned.key_identity(call) == cpu.key_identity(call) == v4.key_identity(call)
    # the generation recipe is in a reply's key, not in a score's
    assert "generation" not in cpu.key_identity("loglikelihood_many") and "generation" in cpu.identity()
    with pytest.raises(ValueError, match="must be >= 1"):
        HFBackend(model="tiny", device="cpu", pass_shapes={"tokens": 0})
    with pytest.raises(ValueError, match="'bucket' or 'pow2'"):
        HFBackend(model="tiny", device="cpu", pass_shapes={"option_widths": "exact"})


def test_a_table_names_its_option_passes_and_reads_back_from_its_name():
    cpu = passes.SHAPES_CPU
    assert [cpu.option_width(fed) for fed in (1, 2, 3, 4, 5, 6, 8, 9, 17)] == [2, 2, 4, 4, 8, 8, 8, 16, 32]
    assert [passes.SHAPES_V4.option_width(fed) for fed in (1, 5, 8, 9)] == [8, 8, 8, 16]
    # never one query a row: such a pass, with no pad in it, would get another attention kernel
    assert passes.PassShapes(64, 1, 64).option_width(1) == 2
    assert [cpu.option_rows_for(w) for w in (2, 8, 32, 64)] == [16, 16, 4, 2]
    assert [cpu.logit_positions(rows) for rows in (1, 6, 7, 8, 9, 12, 64)] == [8, 4, 8, 1, 8, 2, 1]
    assert passes.SHAPES_V4.logit_positions(9) == 1
    assert passes.SHAPES_V4.option_rows_for(8) == 16 and passes.SHAPES_V4.option_rows_for(2) == 64
    for shapes in (*TABLES, cpu):
        assert passes.PassShapes.parse(shapes.name()) == shapes
    assert passes.PassShapes.parse("512/8/16") == passes.PassShapes(512, 8, 16)
    assert passes.PassShapes.parse("512/8/16/8l") == passes.PassShapes(512, 8, 16, logit_multiple=8)
    for bad in ("512/8", "512/8/16/4/2", "512/eight/16", "512/8/16/exact", "512t/8t/16r"):
        with pytest.raises(ValueError, match="tokens/bucket/max_rows"):
            passes.PassShapes.parse(bad)


def test_an_option_of_one_fed_token_has_its_bits_beside_rows_with_and_without_pads():
    """Own parts that fill their width exactly leave no pad in their rows, and a two-token option feeds one
    token: its rows are padded to two tokens, so an option pass's mask is never all ones, which transformers
    drops for SDPA's unmasked kernel (on a GPU, flash attention) whatever else shares the pass. On this CPU
    the two kernels happen to round alike (checked by hand with rows of one token); the bits must hold
    either way."""
    model, tokenizer = tiny_causal_lm()
    head, words = "Answer yes or no.\n\n", "do birds sing at dawn in the green hills".split()
    texts = [head + " ".join(words[:k]) for k in (3, 5, 8)]
    reqs = [ChoiceRequest(t, ("yes, it is", "no"), head=len(head)) for t in texts]
    encoded = [encode_request(tokenizer, r) for r in reqs]
    assert [len(e.context) - e.head for e in encoded] == [10, 16, 24]  # widths 16, 16 (no pad) and 24 (none)
    assert [len(c) for c in encoded[0].continuations] == [7, 2]  # "no" feeds one token
    scores_independent_of_the_call(model, tokenizer, reqs, passes.SHAPES_CPU)


def test_the_padding_share_counts_pads_and_fillers_of_the_plan():
    _, tokenizer = tiny_causal_lm()
    encoded = [encode_request(tokenizer, r) for r in ludwig_like() + ludwig_like(head=False)]
    wanted: dict = {}
    for e in encoded:
        wanted.setdefault((e.context, e.head), set()).update(e.continuations)
    for shapes in TABLES:
        share = passes.padding_share(wanted, shapes)
        own = sum(len(ids) - h for ids, h in wanted)
        fed = sum(len(c) - 1 for conts in wanted.values() for c in conts if len(c) > 1)
        assert share["real"] == own + fed and share["pad"] > 0 and share["filler"] >= 0
    alone = passes.padding_share(dict([next(iter(wanted.items()))]), passes.SHAPES_V4)
    assert alone["filler"] > 0  # one context alone: its pass is filled with repeats


def test_an_item_pass_of_nine_rows_gives_each_row_its_bits_wherever_it_sits():
    """This CPU's float32 matrix product rounds a row by its place in a product of 5-7 or 9-11 rows, so an
    item pass of 9 rows after a head, whose logits are kept at one position a row, gave an item other bits
    beside other items (found on SmolLM2 under the first 512-token table: 1 of 96 Circa items moved by
    9.5e-07). With `logit_multiple` 8 each row keeps 8 positions (72 rows in the product) and the bits hold;
    with 1 this test fails here (checked by hand)."""
    model, tokenizer = tiny_causal_lm()
    head, words = "Answer yes or no.\n\n", "do birds sing at dawn in the green hills of the far north".split()
    texts = [head + " ".join(words[i : i + 2]) for i in range(11) if i != 7]
    reqs = [ChoiceRequest(t, ("yes", "no"), head=len(head)) for t in texts]
    shapes = passes.PassShapes(72, 8, 4096, logit_multiple=8)
    encoded = [encode_request(tokenizer, r) for r in reqs]
    assert {passes.bucket(len(e.context) - e.head, shapes=shapes) for e in encoded} == {8}
    assert len(reqs) == 10 and shapes.rows_for(8) == 9 and shapes.logit_positions(9) == 8
    scores_independent_of_the_call(model, tokenizer, reqs, shapes)


# -- generation --------------------------------------------------------------------------------------------


PROMPTS = [
    "Is Tom being ironic?",
    "Hi",
    "The boxes weigh a ton, he says, and he carries them up the stairs one at a time.",
    "Where will Emma look for the celery?",
    "Yes.",
]


def _backend(dtype: torch.dtype, rows: int = 3) -> HFBackend:
    backend = HFBackend(model="tiny", device="cpu", batch_size=rows)
    model, _ = backend.load()
    backend._model = model.to(dtype)
    return backend


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_reply_is_the_same_alone_and_in_batches_of_any_size_and_order(dtype, temperature):
    backend = _backend(dtype)
    params = GenerationParams(temperature=temperature, max_new_tokens=12, seed=3)
    prompts = [Prompt(t) for t in PROMPTS]
    alone = [backend.generate_samples([p], params, 0)[0] for p in prompts]
    assert backend.generate_samples(prompts, params, 0) == alone
    assert backend.generate_samples(prompts[::-1], params, 0) == alone[::-1]
    for size in (2, 4):
        calls = [backend.generate_samples(prompts[at : at + size], params, 0) for at in range(0, 5, size)]
        assert [r for call in calls for r in call] == alone
    assert len(set(alone)) > 1


def test_generation_prefills_each_prompt_alone_and_decodes_rows_rows_at_once(monkeypatch):
    backend = _backend(torch.float32)
    model, tokenizer = backend.load()
    passes_seen = []
    real = type(model).forward

    def recorded(self, input_ids=None, **kwargs):
        passes_seen.append((tuple(input_ids.shape), kwargs.get("row_spans")))
        return real(self, input_ids=input_ids, **kwargs)

    monkeypatch.setattr(type(model), "forward", recorded)
    params = GenerationParams(max_new_tokens=6, ignore_eos=True)
    backend.generate_samples([Prompt(t) for t in PROMPTS], params, 0)
    lengths = [len(tokenizer(backend.render(t), add_special_tokens=False)["input_ids"]) for t in PROMPTS]
    prefills = [shape for shape, spans in passes_seen if spans is None]
    steps = [(shape, spans) for shape, spans in passes_seen if spans is not None]
    assert prefills == [(1, n) for n in lengths]  # alone, unpadded, in the call's order
    assert all(shape == (3, 1) for shape, _ in steps)  # always `batch_size` rows
    # 5 replies of 6 tokens (the first from the prefill) on 3 rows: a row takes the next prompt when its reply
    # ends, so the steps are those of two rounds, not one round a prompt
    assert len(steps) == 2 * 5 and max(max(spans) for _, spans in steps) <= max(lengths) + 6
    assert model.config._attn_implementation != row_decoding.ATTENTION  # scoring's attention is back
    passes_seen.clear()
    assert backend.generate_samples([Prompt("Hi")], GenerationParams(max_new_tokens=0), 0) == [""]
    assert passes_seen == []  # no budget: no pass


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_a_reply_is_what_transformers_generates_for_the_prompt_alone(temperature):
    """The row decoder against transformers' own loop on one unpadded prompt (greedy; sampled: the same
    stream drawn by RowSampler through `generate`)."""
    from transformers import LogitsProcessorList

    from pragexp.generation.backends.base import stream_seed
    from pragexp.generation.backends.sampling import RowSampler

    backend = _backend(torch.float32)
    model, tokenizer = backend.load()
    params = GenerationParams(temperature=temperature, max_new_tokens=10, seed=5, ignore_eos=True)
    for text in PROMPTS[:3]:
        ids = tokenizer(backend.render(text), add_special_tokens=False, return_tensors="pt")["input_ids"]
        extra = {}
        if temperature:
            seed = stream_seed(params, 0, Prompt(text).seed_key)
            extra["logits_processor"] = LogitsProcessorList([RowSampler([seed], temperature)])
        out = model.generate(ids, max_new_tokens=10, min_new_tokens=10, do_sample=False, **extra)
        theirs = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        assert backend.generate_samples([Prompt(text)], params, 0) == [theirs]


# -- on a GPU ----------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_on_the_gpu_scores_are_the_same_bits_in_any_call(dtype):
    model, tokenizer = tiny_causal_lm()
    shapes = passes.default_shapes("cuda", str(dtype).removeprefix("torch."))
    scores_independent_of_the_call(model.to("cuda", dtype), tokenizer, varied_requests(), shapes)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_on_the_gpu_a_reply_is_the_same_alone_and_in_any_batch(dtype):
    backend = HFBackend(model="tiny", device="cuda", batch_size=3)
    model, _ = backend.load()
    backend._model = model.to(dtype)
    for temperature in (0.0, 1.0):
        params = GenerationParams(temperature=temperature, max_new_tokens=12, seed=3)
        prompts = [Prompt(t) for t in PROMPTS]
        alone = [backend.generate_samples([p], params, 0)[0] for p in prompts]
        assert backend.generate_samples(prompts[::-1], params, 0) == alone[::-1]
        assert backend.generate_samples(prompts[:2], params, 0) == alone[:2]
