"""Reasoning models without a thinking model: reasoning cut before the answer is read, answers read as the
field reads them, a reasoning budget forced closed, chat-template arguments reaching every backend and the
cache key."""

import pytest
from conftest import predictions

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import OpenAIBackend
from pragexp.generation.backends.scripted_thinker import ScriptedThinker
from pragexp.generation.cache.cached_backend import cached
from pragexp.generation.reasoning.thinking import ThinkingSettings, answer_after_reasoning
from pragexp.prompting import read_answer
from pragexp.prompting.extraction import extraction_prompt, read_extraction
from pragexp.prompting.reasoning import opens_reasoning, split_reasoning
from pragexp.run import run
from tests.openai_server import Script, openai_server

LETTERS, YES_NO = ["A", "B", "C"], [" yes", " no"]
OPTIONS = ["the coffee is cold", "the coffee is hot", "she wants tea"]


# -- reading answers: a table of real reply shapes -----------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "continuations", "texts", "expected"),
    [
        ("B", LETTERS, OPTIONS, 1),  # the form asked for, alone
        ("Answer: C", LETTERS, OPTIONS, 2),
        ("**Final Answer:** (B) the coffee is hot", LETTERS, OPTIONS, 1),
        (
            "Sure! Let me look at each option.\nA seems unlikely here.\nSo the answer is A.",
            LETTERS,
            OPTIONS,
            0,
        ),
        (
            "I think the answer is A. Wait, no: she is hinting. The answer is C.",
            LETTERS,
            OPTIONS,
            2,
        ),  # retraction
        ("Answer: A\nAnswer: B", LETTERS, OPTIONS, 1),  # two answers: the last
        ('The answer to the story is A. "Fine, then."', LETTERS, OPTIONS, 0),  # SmolLM2's own shape
        ("The answer is \\boxed{\\text{yes}}.", YES_NO, ["yes", "no"], 0),
        ("\\boxed{no}", YES_NO, ["yes", "no"], 1),
        (
            "She means that she wants tea, so I choose: she wants tea",
            LETTERS,
            OPTIONS,
            2,
        ),  # the option's words
        ("the answer is 2", ["1", "2"], ["literal", "true"], 1),  # a number
        (
            "Clearly he does not, so no.",
            YES_NO,
            ["yes", "no"],
            None,
        ),  # an option named mid-sentence: no guess
        ("It could be yes or no.", YES_NO, ["yes", "no"], None),  # both named, none declared
        ("Let me think about what the speaker", LETTERS, OPTIONS, None),  # truncated before any answer
        ("Answer: A. Hmm, the answer is", LETTERS, OPTIONS, None),  # cut while declaring again: no answer
        ("I have no idea.", YES_NO, ["yes", "no"], None),  # the four non-answers
        ("No comment.", YES_NO, ["yes", "no"], None),
        ("The answer is not yes.", YES_NO, ["yes", "no"], None),
        ("Yes and no.", YES_NO, ["yes", "no"], None),
        ("\\boxed{A} then \\boxed{C}", LETTERS, OPTIONS, 2),  # several boxes: the last
        ("Answer: D", LETTERS, OPTIONS, None),  # not an option
        ("", LETTERS, OPTIONS, None),
    ],
)
def test_answers_are_read_as_the_field_reads_them(reply, continuations, texts, expected):
    assert read_answer(reply, continuations, texts) == expected


def test_options_quoted_in_the_reasoning_are_not_the_answer():
    reply = "<think>Option A says the coffee is cold. Answer: A? No.</think>\nAnswer: B"
    split = split_reasoning(reply)
    assert "Answer: A" in split.reasoning and split.answer == "Answer: B"
    assert read_answer(split.answer, LETTERS, OPTIONS) == 1


@pytest.mark.parametrize(
    ("reply", "opened", "reasoning", "answer"),
    [
        ("Answer: B", False, None, "Answer: B"),  # no reasoning at all
        ("<think>hm</think>\n\nB", False, "hm", "B"),
        ("hm, B or C</think> C", True, "hm, B or C", "C"),  # the template opened the block
        ("hm</think>B", False, "hm", "B"),  # an end without a start (R1's distillations)
        ("<think>a</think>x<think>b</think> y", False, "axb", "y"),  # closed twice: after the last
        ("<think>B, surely B, so", False, "B, surely B, so", None),  # never closed: no answer
        ("still thinking", True, "still thinking", None),
    ],
)
def test_reasoning_is_cut_before_the_answer(reply, opened, reasoning, answer):
    split = split_reasoning(reply, opened=opened)
    assert split.reasoning == reasoning
    assert split.answer == answer and split.closed == (answer is not None)


def test_markers_are_configurable_and_a_prompt_may_open_them():
    markers = ("[REASON]", "[/REASON]")
    assert split_reasoning("[REASON]x[/REASON] A", markers).answer == "A"
    assert opens_reasoning("<|assistant|>\n<think>\n") and not opens_reasoning("<think>\n\n</think>\n\n")
    with pytest.raises(ValueError, match="two different markers"):
        ThinkingSettings(markers=("<think>",))


# -- the budget ----------------------------------------------------------------------------------------------
def prompts_of(backend: ScriptedThinker, shape: str, n: int = 1) -> list[Prompt]:
    """Prompts the scripted backend answers in `shape`."""
    found = [Prompt(f"item {i}", templated=True) for i in range(400)]
    return [p for p in found if backend.shape(p)[0] == shape][:n]


def test_a_budget_closes_long_and_unclosed_reasoning_and_asks_for_the_answer():
    backend = ScriptedThinker(answers=("no",), long_words=50)
    settings = ThinkingSettings(max_new_tokens=8, budget=10)
    for shape in ("long", "unclosed"):
        (prompt,) = prompts_of(backend, shape)
        (thought,) = answer_after_reasoning(backend, [prompt], settings)
        assert thought.forced and thought.reasoning_tokens == 10
        assert (
            thought.reply.startswith("<think>step0 step1")
            and "step9</think>\n\nFinal answer: no" in thought.reply
        )
        assert read_answer(thought.answer, YES_NO, ["yes", "no"]) == 1
    (brief,) = answer_after_reasoning(backend, prompts_of(backend, "brief"), settings)
    assert not brief.forced and brief.reasoning_tokens == 5 and brief.answer.endswith("\\boxed{no}.")
    (direct,) = answer_after_reasoning(backend, prompts_of(backend, "direct"), settings)
    assert direct.reasoning is None and direct.reasoning_tokens == 0 and direct.answer == "Answer: no"


def test_without_a_budget_an_unclosed_block_is_no_answer():
    backend = ScriptedThinker(long_words=50)
    settings = ThinkingSettings(max_new_tokens=30)
    (long,), (unclosed,) = (
        answer_after_reasoning(backend, prompts_of(backend, s), settings) for s in ("long", "unclosed")
    )
    assert long.answer is None and unclosed.answer is None  # cut at 30 tokens inside the reasoning
    assert not long.forced and long.reasoning_tokens == 30


class Recording(LLMBackend):
    """Replies by a rule and keeps each prompt it was asked (to count model calls behind the cache)."""

    name = "recording"

    def __init__(self):
        super().__init__()
        self.asked: list[Prompt] = []

    def generate_samples(self, prompts, params, sample):
        self.asked += prompts
        return ["<think>" + " w" * 50 if not p.prefill else " B" for p in prompts]


def test_each_phase_is_cached_with_its_budget_markers_and_prefill(tmp_path):
    inner = Recording()
    backend = cached(inner, tmp_path)
    prompt = Prompt("Q?", templated=True)
    first = answer_after_reasoning(backend, [prompt], ThinkingSettings(max_new_tokens=4, budget=5))
    assert [p.prefill for p in inner.asked] == ["", "<think>w w w w w</think>\n\nFinal answer:"]
    again = answer_after_reasoning(backend, [prompt], ThinkingSettings(max_new_tokens=4, budget=5))
    assert again == first and len(inner.asked) == 2  # both phases from the cache
    answer_after_reasoning(backend, [prompt], ThinkingSettings(max_new_tokens=4, budget=6))
    answer_after_reasoning(
        backend, [prompt], ThinkingSettings(max_new_tokens=4, budget=5, markers=("<think>", "</THINK>"))
    )
    assert len(inner.asked) == 2 + 2 + 1  # another budget: both phases; other markers: another forced close


# -- chat-template arguments ---------------------------------------------------------------------------------
THINKING_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n"
    "{% if enable_thinking is defined and enable_thinking %}<think>\n"
    "{% else %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)


def thinking_tiny(**kwargs) -> HFBackend:
    backend = HFBackend(model="tiny", batch_size=2, **kwargs)
    backend.tokenizer().chat_template = THINKING_TEMPLATE
    return backend


def test_chat_template_kwargs_reach_the_tiny_model_s_template_and_the_cache_key(tmp_path):
    thinking, plain = thinking_tiny(chat_template_kwargs={"enable_thinking": True}), thinking_tiny()
    turns = [{"role": "user", "content": "Is it cold?"}]
    assert thinking.chat_text(turns).endswith("<|assistant|>\n<think>\n")
    assert plain.chat_text(turns).endswith("<think>\n\n</think>\n\n")
    assert thinking.identity()["chat_template_kwargs"] == {"enable_thinking": True}
    assert plain.identity()["chat_template_kwargs"] == {}


@pytest.mark.slow
def test_the_tiny_model_thinking_is_no_answer_until_its_budget_forces_one(tmp_path):
    backend = thinking_tiny(chat_template_kwargs={"enable_thinking": True})
    prompt = Prompt(backend.chat_text([{"role": "user", "content": "Is it cold?"}]), templated=True)
    (open_,) = answer_after_reasoning(backend, [prompt], ThinkingSettings(max_new_tokens=4))
    assert open_.answer is None and open_.reasoning_tokens > 0  # a random model never writes </think>
    (forced,) = answer_after_reasoning(backend, [prompt], ThinkingSettings(max_new_tokens=4, budget=3))
    assert forced.forced and forced.reasoning_tokens <= 3 and forced.answer.startswith("Final answer:")
    assert "</think>\n\nFinal answer:" in forced.reply


def test_vllm_s_chat_call_and_template_get_the_kwargs_and_a_prefill_goes_on(monkeypatch):
    """vLLM is not installable here (no GPU): a stand-in with the two pieces VLLMBackend uses, `LLM.chat` (its
    keyword arguments recorded) and `get_tokenizer()` (the tiny model's, with the thinking template)."""
    import sys
    from types import SimpleNamespace

    from pragexp.generation.backends.vllm import VLLMBackend

    tokenizer, calls = thinking_tiny().tokenizer(), []

    class LLM:
        def __init__(self, **engine):
            pass

        def get_tokenizer(self):
            return tokenizer

        def chat(self, conversations, sampling, **kwargs):
            calls.append((conversations, kwargs))
            return [SimpleNamespace(outputs=[SimpleNamespace(text="yes")]) for _ in conversations]

    fake = SimpleNamespace(LLM=LLM, SamplingParams=lambda **kw: SimpleNamespace(**kw))
    monkeypatch.setitem(sys.modules, "vllm", fake)
    backend = VLLMBackend(model="m", chat_template_kwargs={"enable_thinking": True})
    turns = [{"role": "user", "content": "Is it cold?"}]
    assert backend.chat_text(turns).endswith("<|assistant|>\n<think>\n")
    assert backend.identity()["chat_template_kwargs"] == {"enable_thinking": True}
    params = GenerationParams(max_new_tokens=4)
    backend.generate_samples([Prompt("Is it cold?"), Prompt("Is it cold?", prefill="<think>I")], params, 0)
    (plain, first), (going_on, second) = calls
    assert first["chat_template_kwargs"] == second["chat_template_kwargs"] == {"enable_thinking": True}
    assert first["add_generation_prompt"] and not first["continue_final_message"]
    assert second["continue_final_message"] and going_on[0][-1] == {
        "role": "assistant",
        "content": "<think>I",
    }


def test_an_openai_server_s_reasoning_content_template_kwargs_and_prefill():
    def reply(body):
        return "B" if body["messages"][-1]["role"] == "assistant" else "Answer: B"

    script = Script(reply)
    script.message_extra = {"reasoning_content": "Option A is literal; B is meant."}
    with openai_server(script) as url:
        backend = OpenAIBackend(
            model="m", base_url=url, api_key_env=None, chat_template_kwargs={"enable_thinking": True}
        )
        (thought,) = answer_after_reasoning(backend, [Prompt("Q?")], ThinkingSettings(max_new_tokens=8))
        assert thought.reasoning == "Option A is literal; B is meant." and thought.answer == "Answer: B"
        assert script.requests[-1][2]["chat_template_kwargs"] == {"enable_thinking": True}
        backend.generate([Prompt("Q?", prefill="<think>x</think>Final answer:")], GenerationParams())
        body = script.requests[-1][2]
        assert body["continue_final_message"] and not body["add_generation_prompt"]
        assert body["messages"][-1] == {"role": "assistant", "content": "<think>x</think>Final answer:"}
        assert backend.identity()["chat_template_kwargs"] == {"enable_thinking": True}


def test_a_server_stopped_inside_its_reasoning_gives_no_answer():
    script = Script(lambda body: "")
    script.message_extra, script.finish_reason = {"reasoning_content": "Hmm, A or"}, "length"
    with openai_server(script) as url:
        backend = OpenAIBackend(model="m", base_url=url, api_key_env=None)
        (thought,) = answer_after_reasoning(backend, [Prompt("Q?")], ThinkingSettings(max_new_tokens=8))
    assert thought.reasoning == "Hmm, A or" and thought.answer is None


# -- the extractor -------------------------------------------------------------------------------------------
def test_the_extractor_s_prompt_lists_the_options_and_its_letter_is_read():
    prompt = extraction_prompt("I'd go with the hot one.", OPTIONS)
    assert "A. the coffee is cold\nB. the coffee is hot" in prompt and "I'd go with the hot one." in prompt
    assert read_extraction("B", OPTIONS) == 1 and read_extraction("none", OPTIONS) is None


# -- whole runs ----------------------------------------------------------------------------------------------
def test_a_budgeted_run_counts_forced_unparsed_and_reasoning_tokens(make_config):
    overrides = ["task=ludwig", "model=llm", "llm=scripted_thinker", "prompt.template=declared"]
    overrides += ["prompt.scoring=generate", "prompt.reasoning_budget=20", "prompt.max_new_tokens=8"]
    cfg = make_config(overrides, name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    forced = [r for r in records if r["forced"]]
    assert forced and metrics["test/forced"] == pytest.approx(len(forced) / len(records))
    assert all(r["reasoning_tokens"] == 20 and "</think>\n\nFinal answer:" in r["reply"] for r in forced)
    mean = sum(r.get("reasoning_tokens", 0) for r in records) / len(records)
    assert metrics["test/reasoning_tokens"] == pytest.approx(mean)
    assert metrics["test/unparsed"] == pytest.approx(sum(r["unparsed"] for r in records) / len(records))
    assert all(r["choice"] is not None for r in records)  # every shape answers once forced


def test_without_a_budget_the_unclosed_replies_are_unparsed_and_wrong(make_config):
    overrides = ["task=ludwig", "model=llm", "llm=scripted_thinker", "prompt.template=declared"]
    cfg = make_config([*overrides, "prompt.scoring=generate", "prompt.max_new_tokens=40"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    unparsed = [r for r in records if r["unparsed"]]
    assert unparsed and all(r["answer"] is None and not r["correct"] for r in unparsed)
    assert metrics["test/unparsed"] == pytest.approx(len(unparsed) / len(records))
    assert "test/forced" not in metrics
