"""PragReST's reasoning protocol (Park et al. 2026, github.com/jihyung803/PragReST) as presets: their readers
on their reply shapes, their early stop (the budget caps the first reply; one without an answer is stopped and
made to answer), the presets' composed settings against their code's, a run through each preset on the
scripted thinker, and the hub model refused offline with the setting that replaces it."""

import pytest
from conftest import HU_FIXTURE, LUDWIG_FIXTURE, compose_config, predictions

from pragexp.data.hu_pragmatics.datamodule import prompt_body
from pragexp.generation.backends.base import LLMBackend, Prompt
from pragexp.generation.backends.scripted_thinker import ScriptedThinker
from pragexp.generation.reasoning.thinking import ThinkingSettings, answer_after_reasoning
from pragexp.pretrained.hub import HubModelUnavailable, check_hub_models
from pragexp.prompting import PromptItem, load_templates, select_template
from pragexp.prompting.pragrest_readers import (
    WHOLE_REPLY_READERS,
    first_closed_box,
    read_first_boxed_number,
    read_first_yes_no,
)
from pragexp.run import run

# Their code's texts, copied from it (src/eval/vllm_boxed_mcqa.py, scripts/eval_common.py,
# scripts/eval_ludwig.py).
EARLY_STOPPING_TEXT = (
    "\n\nConsidering the limited time by the user, I have to give the "
    "solution based on the thinking directly now.\n</think>\n\n\\boxed{"
)
SYSTEM_PROMPT = (
    "Choose the best answer option based on the given context.\n"
    "Final answer of the question must be enclosed in \\boxed{...}."
)
TEMPLATE_1 = (
    "Does the following response to the question imply yes or no?\n\nquestion: {utterance}\nresponse: "
    "{response}\nimplicature:"
)
GENERATION_INSTRUCTION = (
    "Use exactly one word inside the box: yes or no.\n"
    "Final answer of the question must be enclosed in \\boxed{...}.\n"
)
NUMBERS, YES_NO = ["1", "2", "3", "4"], ["yes", "no"]


# -- their readers -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<think>so 3?</think>\n\nThe answer is \\boxed{2}.", 1),
        ("\\boxed{2) The dress is too long}", 1),  # digits, then ")" and text before the brace closes
        ("$\\boxed{ 4 }$", 3),
        (
            "<think>maybe \\boxed{3} ... no</think>\n\n\\boxed{2}",
            2,
        ),  # the first wins, the reasoning's included
        ("Answer: 1\n\n\\boxed{2}", 1),  # a box anywhere before any "Answer: N"
        ("\\boxed{A} then Final Answer: 4", 3),  # no box holds a number: the first "Answer: N"
        ("answer:2", 1),
        ("The answer is 3.", None),  # their patterns want "Answer:" with its colon
        ("\\boxed{5}", None),  # names no option of four (theirs: a wrong answer)
        ("\\boxed{\\text{2}}", None),
    ],
)
def test_the_number_reader_reads_the_whole_reply_and_the_first_match_wins(reply, expected):
    assert read_first_boxed_number(reply, NUMBERS) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<think>It hints at no.</think>\n\\boxed{yes}", 0),  # a closed box first
        (
            "<think>Is it yes or no? Not sure.</think>\nThe reply declines.",
            0,
        ),  # else the first yes/no anywhere
        ("\\boxed{\\text{No}}", 1),  # nested braces counted
        ("\\boxed{maybe} so no", 1),  # the first closed box has neither: the whole reply's first
        ("\\boxed{yes and no}", 0),
        ("\\boxed{no", 1),  # a box that never closes is no box; its word is still the reply's first
        ("I know nothing of it", None),  # whole words only
    ],
)
def test_the_yes_no_reader_takes_the_first_box_else_the_first_word_anywhere(reply, expected):
    assert read_first_yes_no(reply, YES_NO) == expected
    assert read_first_yes_no(reply, list(reversed(YES_NO))) == (None if expected is None else 1 - expected)


def test_the_first_closed_box_counts_nested_braces():
    assert first_closed_box("x \\boxed{a{b}c} \\boxed{d}") == "a{b}c"
    assert first_closed_box("\\boxed{a \\boxed{b}") == "b" and first_closed_box("none") == ""


# -- their early stop ----------------------------------------------------------------------------------------
class Scripted(LLMBackend):
    """Replies by the prompt's text (a first reply) or "2}" after a prefill; keeps each call's prompts and
    limit."""

    name = "scripted_replies"

    def __init__(self, replies: dict[str, str]):
        super().__init__()
        self.replies, self.asked = replies, []

    def generate_samples(self, prompts, params, sample):
        self.asked.append(([p.prefill for p in prompts], params.max_new_tokens))
        return [
            self.first_tokens(self.replies[p.text], params.max_new_tokens) if not p.prefill else "2}"
            for p in prompts
        ]


PRAGREST = ThinkingSettings(
    max_new_tokens=456,
    budget=12,
    caps="reply",
    early_stop=EARLY_STOPPING_TEXT.split("</think>")[0],
    answer_cue="\n\n\\boxed{",
)


def answered_by_number(i, thought):
    return read_first_boxed_number(thought.reply, NUMBERS) is not None


def test_a_first_reply_with_an_answer_is_kept_whole_in_one_call_of_the_budget():
    backend = Scripted({"Q": "<think>a b c</think>\n\\boxed{3}"})
    (thought,) = answer_after_reasoning(backend, [Prompt("Q", templated=True)], PRAGREST, answered_by_number)
    assert backend.asked == [([""], 12)]  # the budget caps the reply: reasoning and answer together
    assert not thought.forced and thought.reasoning_tokens == 3 and thought.reply.endswith("\\boxed{3}")


def test_reasoning_past_the_budget_is_stopped_with_their_message_and_an_opened_box():
    words = " ".join(f"w{i}" for i in range(40))
    backend = Scripted({"Q": f"<think>{words}</think>\n\\boxed{{3}}"})
    (thought,) = answer_after_reasoning(backend, [Prompt("Q", templated=True)], PRAGREST, answered_by_number)
    first = "<think>" + " ".join(f"w{i}" for i in range(12))  # 12 tokens: the marker glued to w0 is one
    assert backend.asked == [([""], 12), ([first + EARLY_STOPPING_TEXT], 456)]
    assert thought.forced and thought.reply == first + EARLY_STOPPING_TEXT + "2}"
    assert thought.answer == "\\boxed{2}" and read_first_boxed_number(thought.reply, NUMBERS) == 1
    assert thought.reasoning == first.removeprefix("<think>") and thought.reasoning_tokens == 12


def test_a_closed_reply_without_a_readable_answer_goes_back_without_it_and_is_kept_whole():
    backend = Scripted({"Q": "<think>a b</think>\n\nIt is the second."})
    (thought,) = answer_after_reasoning(backend, [Prompt("Q", templated=True)], PRAGREST, answered_by_number)
    assert backend.asked[1] == (["<think>a b</think>" + EARLY_STOPPING_TEXT], 456)  # their thinking_only
    assert thought.reply == "<think>a b</think>\n\nIt is the second." + EARLY_STOPPING_TEXT + "2}"
    assert thought.forced and thought.reasoning == "a b" and thought.reasoning_tokens == 2


def test_the_s1_budget_says_the_early_stop_before_its_end_marker_and_counts_only_the_model_s_reasoning():
    backend = ScriptedThinker(answers=("no",), long_words=50)
    prompts = (Prompt(f"item {i}", templated=True) for i in range(99))
    prompt = next(p for p in prompts if backend.shape(p)[0] == "long")
    settings = ThinkingSettings(max_new_tokens=8, budget=10, early_stop=" Enough.", answer_cue=" So:")
    (thought,) = answer_after_reasoning(backend, [prompt], settings)
    assert (
        thought.forced and thought.reasoning_tokens == 10 and "step9 Enough.</think> So: no" in thought.reply
    )


def test_the_settings_read_the_prompt_group_and_refuse_an_unknown_cap():
    settings = ThinkingSettings.from_prompt(
        {"reasoning_budget": 7, "budget_caps": "reply", "early_stop": "!", "max_new_tokens": 3}
    )
    assert (settings.budget, settings.caps, settings.max_new_tokens) == (7, "reply", 3)
    assert settings.forced_close == "!</think>\n\nFinal answer:"
    with pytest.raises(ValueError, match="prompt.budget_caps=tokens: choose one of reasoning, reply"):
        ThinkingSettings(caps="tokens")


# -- the presets ---------------------------------------------------------------------------------------------
PRESETS = ["hu", "ludwig", "hu_scripted", "ludwig_scripted"]


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_composes_to_their_protocol(preset, tmp_path):
    cfg = compose_config([f"experiment=pragrest/{preset}"], tmp_path, "eval")
    prompt = cfg.prompt
    assert (prompt.shots, prompt.scoring, prompt.extractor) == (0, "generate", False)  # zero-shot, greedy
    settings = ThinkingSettings.from_prompt(prompt)
    assert (settings.budget, settings.max_new_tokens, settings.caps) == (2048, 456, "reply")
    assert settings.forced_close == EARLY_STOPPING_TEXT
    template = select_template(load_templates(prompt.templates), prompt.template)
    assert template.name == "pragrest" and template.reader in WHOLE_REPLY_READERS
    if preset.startswith("hu"):
        assert (
            cfg.task_name == "hu_pragmatics" and list(cfg.data.seeds) == [0] and cfg.data.variant == "story"
        )
        assert prompt.chat and template.system == SYSTEM_PROMPT and template.reader == "first_boxed_number"
    else:
        assert cfg.task_name == "ludwig" and cfg.data.as_authors_read and not prompt.chat
        assert template.reader == "first_yes_no"
    if preset.endswith("scripted"):
        assert cfg.llm._target_.endswith("ScriptedThinker")
    else:
        assert cfg.llm.model == "Qwen/Qwen3-8B" and cfg.llm._target_.endswith("HFBackend")
        assert bool((cfg.llm.chat_template_kwargs or {}).get("enable_thinking")) == (preset == "hu")


def test_their_prompts_are_rendered_as_their_code_writes_them(tmp_path):
    ludwig = compose_config(["experiment=pragrest/ludwig"], tmp_path, "eval").prompt
    template = select_template(load_templates(ludwig.templates), "pragrest")
    pair = {"utterance": "Is Marci grumpy?", "response": "he's as gentle as a lamb"}
    rendered = template.render(PromptItem(0, pair, ("no", "yes"), 0), generate=True)
    assert rendered.plain == TEMPLATE_1.format(**pair) + GENERATION_INSTRUCTION
    hu = compose_config(["experiment=pragrest/hu"], tmp_path, "eval").prompt
    template = select_template(load_templates(hu.templates), "pragrest")
    authors = "Task: read.\n\nScenario: ...\nOptions:\n1) a\n2) b\nAnswer: "
    assert prompt_body(authors) == "Task: read.\n\nScenario: ...\nOptions:\n1) a\n2) b"
    item = PromptItem(0, {"prompt_body": prompt_body(authors)}, ("a", "b"), 1)
    system, user = template.render(item, generate=True).messages
    assert system == {"role": "system", "content": SYSTEM_PROMPT} and user["content"] == prompt_body(authors)
    assert template.continuations(item) == ("1", "2")


def test_the_hub_model_is_refused_offline_naming_the_setting_that_replaces_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for preset in ("hu", "ludwig"):
        cfg = compose_config([f"experiment=pragrest/{preset}"], tmp_path, "eval")
        with pytest.raises(HubModelUnavailable, match=r"llm\.model=Qwen/Qwen3-8B: use llm\.model=smollm2"):
            check_hub_models(cfg)
    released = compose_config(
        ["experiment=pragrest/hu", "llm.model=minchaoh2002/Qwen3-8B-PragReST"], tmp_path, "eval"
    )
    with pytest.raises(HubModelUnavailable, match="minchaoh2002/Qwen3-8B-PragReST: use llm.model=smollm2"):
        check_hub_models(released)
    check_hub_models(compose_config(["experiment=pragrest/hu", "llm.model=smollm2"], tmp_path, "eval"))


@pytest.mark.parametrize(
    ("preset", "data"), [("ludwig_scripted", LUDWIG_FIXTURE), ("hu_scripted", HU_FIXTURE)]
)
def test_a_run_through_the_preset_on_the_scripted_thinker(preset, data, make_config):
    cfg = make_config([f"experiment=pragrest/{preset}", f"data.path={data}"], name="eval", tiny_model=False)
    metrics = run(cfg)
    records = predictions(cfg)
    forced = [r for r in records if r["forced"]]
    assert forced and metrics["test/forced"] == pytest.approx(len(forced) / len(records))
    assert all(EARLY_STOPPING_TEXT in r["reply"] and r["answer"].startswith("\\boxed{") for r in forced)
    # kept whole: a first reply that answers ("Answer: no" after its reasoning, read as their code reads it)
    assert any(not r["forced"] and "</think>" in r["reply"] and r["choice"] is not None for r in records)
    assert metrics["test/unparsed"] == pytest.approx(sum(r["unparsed"] for r in records) / len(records))
    mean = sum(r.get("reasoning_tokens", 0) for r in records) / len(records)
    assert metrics["test/reasoning_tokens"] == pytest.approx(mean)
    for r in records:  # what was read: the first box or declared number, the reasoning included
        read = read_first_boxed_number if preset == "hu_scripted" else read_first_yes_no
        assert r["choice"] == read(r["reply"], r["continuations"])
