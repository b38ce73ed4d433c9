"""The intentions' judges and prompts: the reference replies score 100% / 0% (the sanity check), shuffled
options map back, answers are parsed leniently and counted when they name no option; the prompt templates
(reply, CoT levels, multiple choice) say what they promise."""

import sys
from types import SimpleNamespace

import pytest
import torch
from conftest import CONF, INTENTIONS_FIXTURE
from omegaconf import OmegaConf

from pragexp.data.intentions.io import read_intentions_csv
from pragexp.data.intentions.judges import EmbeddingJudge, LLMJudge
from pragexp.data.intentions.prompt_items import prompt_item
from pragexp.generation.backends.base import LLMBackend
from pragexp.generation.backends.encoder import EncoderBackend, LLM2VecBackend
from pragexp.prompting import extract_reply, load_templates, parse_choice, select_template
from pragexp.prompting.items import JudgeRequest
from pragexp.prompting.parsing import INVALID, LITERAL, NEITHER, TRUE

LEVELS = ("none", "0", "1", "2", "3", "4", "5", "6")


def templates(path: str) -> list:
    return load_templates(OmegaConf.to_container(OmegaConf.load(CONF / path).templates))


JUDGE_TEMPLATES = OmegaConf.to_container(
    OmegaConf.load(CONF / "judge" / "_contextual_similarity.yaml").templates
)


@pytest.fixture(scope="module")
def items():
    return [prompt_item(item, k) for k, item in enumerate(read_intentions_csv(INTENTIONS_FIXTURE)[0])]


def true_reply(item) -> str:
    return item.references["reply_true"]


def literal_reply(item) -> str:
    return item.references["reply_literal"]


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
        else LLMJudge(OptionPicker(), JUDGE_TEMPLATES, seed=3)
    )
    true = judge([JudgeRequest(i, true_reply(i), (k, 0.3, 0)) for k, i in enumerate(items)])
    literal = judge([JudgeRequest(i, literal_reply(i), (k, 0.3, 0)) for k, i in enumerate(items)])
    assert [v.choice for v in true] == [TRUE] * len(items)
    assert [v.choice for v in literal] == [LITERAL] * len(items)


def test_llm_judge_shuffles_options_by_a_seeded_rng(items):
    picker = OptionPicker("Option {}")
    judge = LLMJudge(picker, JUDGE_TEMPLATES, seed=0)
    requests = [JudgeRequest(items[0], true_reply(items[0]), (k, 0.5, 0)) for k in range(40)]
    verdicts = judge(requests)
    firsts = [v.detail["option_1"] for v in verdicts]
    assert 5 < firsts.count(TRUE) < 35  # both orders occur
    again = LLMJudge(OptionPicker(), JUDGE_TEMPLATES, seed=0)(requests)
    assert [v.detail["option_1"] for v in again] == firsts  # seeded
    assert all(v.choice == TRUE for v in verdicts)
    prompt = picker.prompts[0]
    intention = items[0].fields["true_intention"]
    assert "Scenario: Tom is carrying" in prompt and f"Intention: {intention}" in prompt
    assert prompt.endswith("Answer (option number 1 or 2):")
    # the paper's non-contextual variant shows neither the story nor the intention
    plain = OptionPicker()
    LLMJudge(plain, JUDGE_TEMPLATES, contextual=False)(requests[:1])
    assert "Scenario:" not in plain.prompts[0] and "Intention:" not in plain.prompts[0]
    assert plain.prompts[0].startswith("Task: Your task is to decide")


@pytest.mark.parametrize(
    ("answer", "choice"),
    [("Neither of them.", NEITHER), ("I cannot tell", INVALID), ("", INVALID), ("1 or 2", INVALID)],
)
def test_unreadable_judge_answers_are_counted_not_fatal(items, answer, choice):
    class Fixed(LLMBackend):
        def generate_samples(self, prompts, params, sample):
            return [answer] * len(prompts)

    (verdict,) = LLMJudge(Fixed(), JUDGE_TEMPLATES)([JudgeRequest(items[0], "ok", (0, 0.3, 0))])
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
    assert parse_choice(text) == parsed


def test_cot_levels_add_what_they_promise(items):
    item = next(i for i in items if i.fields["phenomenon_named"].endswith("is being ironic"))
    reply = templates("prompt/intentions_reply.yaml")
    levels = {c: select_template(reply, f"cot_{c}") for c in LEVELS}
    texts = {c: t.render(item, generate=True).plain for c, t in levels.items()}
    plain = texts["none"]
    assert plain.startswith("Generate a short, concise single sentence response.") and plain.endswith(
        "Maya replies, "
    )
    assert len(set(texts.values())) == 8
    for level, text in texts.items():
        assert (item.fields["true_intention"] in text) == (level in ("5", "6"))
        assert ("is being ironic" in text) == (level in ("4", "6"))
        reasons = level in ("0", "1", "2", "3", "4")
        assert text.endswith("Thought:") == reasons and (levels[level].reply_marker == "Response:") == reasons
    assert "Is Her brother being ironic?" in texts["2"] and "non-literal language" in texts["3"]
    assert "literally" in texts["1"]
    # which levels make the model infer the intention: all reasoning levels but 1 (counterfactual only)
    for level in ("0", "1", "2", "3", "4"):
        assert ("intends to convey" in texts[level]) == (level != "1"), level
        assert ("intention" in texts[level]) == (level != "1"), level
    with pytest.raises(ValueError, match="cot_7"):
        select_template(reply, "cot_7")


def test_extract_reply():
    assert (
        extract_reply('Thought: he is ironic.\nResponse: "Sorry, new toast."\n\nMore.', "Response:", "Maya")
        == "Sorry, new toast."
    )
    assert extract_reply("Thought: x\nRESPONSE :  Fine then.", "Response:") == "Fine then."  # case, spacing
    assert extract_reply('Maya replies, "Fine."\n\nAnd then', None, "Maya") == "Fine."
    assert extract_reply("No marker here.", None, "Maya") == "No marker here."
    # a reasoning template without its marker in the output: only a thought, no reply to judge
    assert extract_reply("He is being ironic, so she wants help.", "Response:", "Maya") == ""
    assert (
        extract_reply("Thought: ironic.\nResponse:  ", "Response:", "Maya") == ""
    )  # nothing after the marker


def test_mc_prompt_is_hu_et_al_with_two_options(items):
    item = next(i for i in items if i.fields["phenomenon_named"].endswith("conversational maxim"))
    template = next(t for t in templates("prompt/intentions_mc.yaml") if t.name != "declared")  # Hu et al.'s
    rendered = template.render(item)
    text = rendered.plain
    assert (
        text.startswith("Task:") and "why the character" in text and "The answer options are 1 or 2." in text
    )
    true, literal = item.options
    assert text.endswith(f"1) {true}\n2) {literal}\nAnswer: ") and rendered.continuations == ("1", "2")
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
        [JudgeRequest(items[0], true_reply(items[0])), JudgeRequest(items[0], literal_reply(items[0]))]
    )
    assert (true.choice, literal.choice) == (TRUE, LITERAL) and true.detail["sim_true"] == pytest.approx(1.0)
