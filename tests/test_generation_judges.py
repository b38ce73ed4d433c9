"""Judges: the reference replies score 100% / 0% (the sanity check), shuffled options map back, answers
are parsed leniently and counted when they name no option; the prompts."""

import sys
from types import SimpleNamespace

import pytest
import torch
from conftest import INTENTIONS_FIXTURE

from pragexp.data.intentions.io import read_intentions_csv
from pragexp.generation import prompts as P
from pragexp.generation.backend import LLMBackend
from pragexp.generation.encoder import EncoderBackend, LLM2VecBackend
from pragexp.generation.judges import INVALID, LITERAL, NEITHER, TRUE, EmbeddingJudge, JudgeRequest, LLMJudge


@pytest.fixture(scope="module")
def items():
    return read_intentions_csv(INTENTIONS_FIXTURE)[0]


class OptionPicker(LLMBackend):
    """A judge model that answers with the option whose text is the generated reply (an ideal judge)."""

    name = "picker"

    def __init__(self, answer_style="{}"):
        super().__init__()
        self.style, self.prompts = answer_style, []

    def generate_samples(self, prompts, params, sample):
        self.prompts += [p.text for p in prompts]
        out = []
        for p in prompts:
            reply = p.text.split("Generated Response:\n", 1)[1].split("\n", 1)[0].split("replies, ", 1)[1]
            first = p.text.split("\n1. ", 1)[1].split("\n", 1)[0]
            out.append(self.style.format("1" if first == reply else "2"))
        return out


@pytest.mark.parametrize("judge_kind", ["embedding", "llm"])
def test_reference_replies_score_100_and_0_percent(items, judge_kind):
    judge = (
        EmbeddingJudge(EncoderBackend("minilm"))
        if judge_kind == "embedding"
        else LLMJudge(OptionPicker(), seed=3)
    )
    true = judge([JudgeRequest(i, i.reply_true, (k, 0.3, 0)) for k, i in enumerate(items)])
    literal = judge([JudgeRequest(i, i.reply_literal, (k, 0.3, 0)) for k, i in enumerate(items)])
    assert [v.choice for v in true] == [TRUE] * len(items)
    assert [v.choice for v in literal] == [LITERAL] * len(items)


def test_llm_judge_shuffles_options_by_a_seeded_rng(items):
    picker = OptionPicker("Option {}")
    judge = LLMJudge(picker, seed=0)
    requests = [JudgeRequest(items[0], items[0].reply_true, (k, 0.5, 0)) for k in range(40)]
    verdicts = judge(requests)
    firsts = [v.detail["option_1"] for v in verdicts]
    assert 5 < firsts.count(TRUE) < 35  # both orders occur
    assert [v.detail["option_1"] for v in LLMJudge(OptionPicker(), seed=0)(requests)] == firsts  # seeded
    assert all(v.choice == TRUE for v in verdicts)
    prompt = picker.prompts[0]
    assert "Scenario: Tom is carrying" in prompt and f"Intention: {items[0].true_intention}" in prompt
    assert prompt.endswith("Answer (option number 1 or 2):")


@pytest.mark.parametrize(
    ("answer", "choice"),
    [("Neither of them.", NEITHER), ("I cannot tell", INVALID), ("", INVALID), ("1 or 2", INVALID)],
)
def test_unreadable_judge_answers_are_counted_not_fatal(items, answer, choice):
    class Fixed(LLMBackend):
        def generate_samples(self, prompts, params, sample):
            return [answer] * len(prompts)

    (verdict,) = LLMJudge(Fixed())([JudgeRequest(items[0], "ok", (0, 0.3, 0))])
    assert verdict.choice == choice and verdict.detail["answer"] == answer


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("1", "1"),
        (" 2.", "2"),
        ("Option 2", "2"),
        ("The answer is option 1 because", "1"),
        ("Answer: 2", "2"),
        ("(1)", "1"),
        ("neither", "neither"),
        ("None of the options", "neither"),
        ("I pick 2", "2"),
        ("12", None),
        ("1 or 2", None),
        ("", None),
    ],
)
def test_parse_choice(text, parsed):
    assert P.parse_choice(text) == parsed


def test_cot_levels_add_what_they_promise(items):
    item = next(i for i in items if i.phenomenon == "irony")
    plain = P.generation_prompt(item)
    assert plain.startswith(P.INSTRUCTION) and plain.endswith("Maya replies, ")
    levels = {c: P.generation_prompt(item, c) for c in P.COT_LEVELS}
    assert len(set(levels.values())) == 7 and plain not in levels.values()
    for level, text in levels.items():
        assert (item.true_intention in text) == (level in (5, 6))
        assert ("is being ironic" in text) == (level in (4, 6))
        assert text.endswith("Thought:") == (level <= 4)
    assert "Is Her brother being ironic?" in levels[2] and "non-literal language" in levels[3]
    assert "literally" in levels[1]
    # which levels make the model infer the intention: all reasoning levels but 1 (counterfactual only)
    for level in P.REASONING_LEVELS:
        assert ("intends to convey" in levels[level]) == (level != 1), level
        assert ("intention" in levels[level]) == (level != 1), level
    with pytest.raises(ValueError, match="prompt.cot"):
        P.parse_cot("7")
    assert P.parse_cot("none") is None and P.parse_cot(3) == 3


def test_extract_reply():
    assert (
        P.extract_reply('Thought: he is ironic.\nResponse: "Sorry, new toast."\n\nMore.', "Maya", 0)
        == "Sorry, new toast."
    )
    assert P.extract_reply('Maya replies, "Fine."\n\nAnd then', "Maya") == "Fine."
    assert P.extract_reply("No marker here.", "Maya") == "No marker here."
    # a reasoning level without "Response:": only a thought, no reply to judge
    for level in P.REASONING_LEVELS:
        assert P.extract_reply("He is being ironic, so she wants help.", "Maya", level) == ""
    assert P.extract_reply("Thought: ironic.\nResponse:  ", "Maya", 0) == ""  # nothing after the marker
    assert P.extract_reply("No marker here.", "Maya", 5) == "No marker here."  # no marker asked for


def test_mc_prompt_is_hu_et_al_with_two_options(items):
    item = next(i for i in items if i.phenomenon == "maxims")
    text = P.mc_prompt(item, [item.true_intention, item.literal_intention])
    assert (
        text.startswith("Task:") and "why the character" in text and "The answer options are 1 or 2." in text
    )
    assert f"1) {item.true_intention}\n2) {item.literal_intention}\nAnswer: " in text
    assert "Why has Raj responded like this?" in text


def test_llm2vec_judge_says_how_to_install_where_llm2vec_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "llm2vec", None)  # `import llm2vec` raises ImportError
    with pytest.raises(ImportError, match=r"llm2vec package.*transformers.*pip install llm2vec"):
        LLM2VecBackend(model="McGill-NLP/LLM2Vec-Mistral-7B-Instruct-v2-mntp")


def test_llm2vec_judge_embeds_through_the_package(items, monkeypatch):
    """The llm2vec package's API (LLM2Vec.from_pretrained, encode) as its README shows it, faked."""
    loaded = {}

    class FakeLLM2Vec:
        @classmethod
        def from_pretrained(cls, base, peft_model_name_or_path=None, **kwargs):
            loaded.update(base=base, peft=peft_model_name_or_path, **kwargs)
            return cls()

        def encode(
            self, sentences, batch_size=32, show_progress_bar=True, convert_to_tensor=False, device=None
        ):
            return torch.tensor([[float(len(s)), 10.0] for s in sentences])  # the text's length

    monkeypatch.setitem(sys.modules, "llm2vec", SimpleNamespace(LLM2Vec=FakeLLM2Vec))
    backend = LLM2VecBackend(model="base", peft_model="supervised", dtype="float32", device="cpu")
    vectors = backend.embed(["help me", "no"])
    assert torch.allclose(vectors.norm(dim=-1), torch.ones(2))
    assert loaded["base"] == "base" and loaded["peft"] == "supervised" and loaded["device_map"] == "cpu"
    identity = backend.identity()
    assert (identity["backend"], identity["peft_model"], identity["max_length"]) == (
        "llm2vec",
        "supervised",
        512,
    )
    true, literal = EmbeddingJudge(backend)(
        [JudgeRequest(items[0], items[0].reply_true), JudgeRequest(items[0], items[0].reply_literal)]
    )
    assert (true.choice, literal.choice) == (TRUE, LITERAL) and true.detail["sim_true"] == pytest.approx(1.0)
