"""Reasoning is cut by its markers even when the tokenizer registers them as special tokens: decoding with
`skip_special_tokens=True` would drop `<think>` and `</think>`, and the reasoning would be read as the
answer."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest
import torch

from pragexp.generation.backends.base import GenerationParams, Prompt
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.reasoning.special_tokens import decode_reply, special_markers, strip_special
from pragexp.generation.reasoning.thinking import ThinkingSettings, answer_after_reasoning
from pragexp.pretrained.causal import tiny_causal_lm
from pragexp.prompting import read_answer

LETTERS, OPTIONS = ["A", "B"], ["he is lying", "he is joking"]
REASONING, ANSWER = "My first answer: A, the literal one. But he hints.", "B"


def special_thinking_tokenizer():
    """The tiny model's tokenizer with `<think>` and `</think>` added as special tokens."""
    tokenizer = tiny_causal_lm()[1]
    tokenizer.add_special_tokens({"additional_special_tokens": ["<think>", "</think>"]})
    tokenizer.padding_side = "left"
    return tokenizer


def reply_ids(tokenizer) -> list[int]:
    """A thinking reply as a model writes it, then end of text and padding (a batch's shorter row)."""
    words = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    think, end = tokenizer.convert_tokens_to_ids(["<think>", "</think>"])
    return [think, *words(REASONING), end, *words(ANSWER), tokenizer.eos_token_id, tokenizer.pad_token_id]


def test_the_markers_are_special_tokens_that_skipping_would_drop():
    tokenizer = special_thinking_tokenizer()
    assert set(special_markers(tokenizer)) == {"<think>", "</think>"}
    skipped = tokenizer.decode(reply_ids(tokenizer), skip_special_tokens=True)
    assert "<think>" not in skipped and skipped.startswith(
        REASONING
    )  # the reasoning would read as the answer
    assert read_answer(skipped, LETTERS, OPTIONS) == 0  # its declaration is read: wrong


def test_decoding_keeps_the_markers_and_drops_the_other_special_tokens():
    tokenizer = special_thinking_tokenizer()
    text = decode_reply(tokenizer, reply_ids(tokenizer))
    assert text == f"<think>{REASONING}</think>{ANSWER}"
    assert "</s>" not in text and "<pad>" not in text
    plain = tiny_causal_lm()[1]  # markers as ordinary text: decoded exactly as before
    ids = plain(f"<think>{REASONING}</think>{ANSWER}", add_special_tokens=False)["input_ids"]
    ids += [plain.eos_token_id, plain.pad_token_id]
    assert special_markers(plain) == {}
    assert decode_reply(plain, ids) == plain.decode(ids, skip_special_tokens=True)
    custom = special_thinking_tokenizer()  # other markers: the think tokens are dropped as any special token
    assert decode_reply(custom, reply_ids(custom), ("[R]", "[/R]")) == REASONING + ANSWER


class ScriptedDecoder:
    """`row_decoding.RowDecoder` with a fixed reply (the tokenizer's ids) after any prompt."""

    reply: list[int] = []

    def __init__(self, model, rows, stop_ids, filler_id):
        pass

    def run(self, prompts, params, seeds, on_reply):
        for i in range(len(prompts)):
            on_reply(i, list(self.reply))


def test_the_hf_backend_s_reply_is_cut_at_its_special_markers_before_the_answer_is_read(monkeypatch):
    from pragexp.generation.backends import row_decoding

    backend = HFBackend(model="tiny", batch_size=2)
    backend._tokenizer = tokenizer = special_thinking_tokenizer()
    backend._model = torch.nn.Linear(1, 1)  # never called: the decoder is scripted
    monkeypatch.setattr(ScriptedDecoder, "reply", reply_ids(tokenizer))
    monkeypatch.setattr(row_decoding, "RowDecoder", ScriptedDecoder)
    monkeypatch.setattr(row_decoding, "stop_ids", lambda model, tokenizer: {tokenizer.eos_token_id})
    prompts = [Prompt("Is he lying?", templated=True)]
    (thought,) = answer_after_reasoning(backend, prompts, ThinkingSettings(max_new_tokens=64))
    assert thought.reasoning == REASONING and thought.answer == ANSWER
    assert read_answer(thought.answer, LETTERS, OPTIONS) == 1
    other = HFBackend(model="tiny", batch_size=2, reasoning_markers=("[R]", "[/R]"))
    default = HFBackend(model="tiny", batch_size=2).identity()["reasoning_markers"]
    assert other.identity()["reasoning_markers"] == ["[R]", "[/R]"] != default  # other markers, other replies


def test_vllm_keeps_the_markers_and_strips_the_other_special_tokens(monkeypatch):
    """vLLM is not installable here: a stand-in whose generate() returns what vLLM decodes with
    `skip_special_tokens=False`, recording the sampling parameters it was given."""
    from pragexp.generation.backends.vllm import VLLMBackend

    tokenizer, given = special_thinking_tokenizer(), []

    class LLM:
        def __init__(self, **engine):
            pass

        def get_tokenizer(self):
            return tokenizer

        def generate(self, prompts, sampling, use_tqdm=False):
            given.extend(sampling)
            text = tokenizer.decode(reply_ids(tokenizer), skip_special_tokens=False)
            return [SimpleNamespace(outputs=[SimpleNamespace(text=text)]) for _ in prompts]

    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=LLM, SamplingParams=SimpleNamespace))
    backend = VLLMBackend(model="m")
    (reply,) = backend.generate_samples([Prompt("Q?", templated=True)], GenerationParams(), 0)
    assert reply == f"<think>{REASONING}</think>{ANSWER}"
    assert given[0].skip_special_tokens is False and backend.identity()["reasoning_markers"] == [
        "<think>",
        "</think>",
    ]
    assert strip_special("x</s><pad>", tokenizer) == "x"


@pytest.mark.parametrize("markers", [("<think>",), ("<think>", "<think>")])
def test_the_backend_refuses_markers_that_are_not_a_pair(markers):
    with pytest.raises(ValueError, match="two different markers"):
        HFBackend(model="tiny", reasoning_markers=markers)
