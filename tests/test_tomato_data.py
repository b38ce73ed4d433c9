"""ToMATO: its question files read as released, bad records named by file, record and field, runs on the one
route (the authors' user turn, the options' text) with accuracy per mental state, order, false belief and
trait, and training refused for its licence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, SAMPLES, needs_samples, predictions

from pragexp.data.tomato.io import read_questions
from pragexp.run import run
from pragexp.utils.errors import DataFormatError

FOLDER = FIXTURES / "tomato"


def test_the_four_files_read_with_their_keys():
    every = read_questions(FOLDER / "tomato.json")
    assert (
        len(every) == 12
        and {q.order for q in every} == {1, 2}
        and {q.false_belief for q in every} == {True, False}
    )
    first, second = (
        read_questions(FOLDER / "tomato_first.json"),
        read_questions(FOLDER / "tomato_second.json"),
    )
    assert (
        {q.order for q in first} == {1}
        and {q.order for q in second} == {2}
        and len(first) + len(second) == 12
    )
    assert all(q.false_belief for q in read_questions(FOLDER / "tomato_fb.json"))
    records = json.loads((FOLDER / "tomato.json").read_text(encoding="utf-8"))
    for record, q in zip(records, every, strict=True):
        assert q.options[q.true_index] == record["a_str"] and q.conversation == record["conversation"]
    assert "Zoë" in every[1].conversation  # non-ASCII as the release writes it (\u escapes)


def broken(tmp_path, change) -> Path:
    records = json.loads((FOLDER / "tomato_fb.json").read_text(encoding="utf-8"))
    change(records[2])
    path = tmp_path / "tomato_fb.json"
    path.write_text(json.dumps(records, indent=4), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.pop("conversation"), "conversation", "missing"),
        (lambda r: r.pop("a2"), "a2", "missing"),
        (lambda r: r.update(a_idx=4), "a_idx", "index 0-3"),
        (lambda r: r.update(a_idx=-1), "a_idx", "index 0-3"),
        (lambda r: r.update(a_str="something else"), "a_str", "not option"),
        (lambda r: r.update(mental_state="hope"), "mental_state", "one of belief"),
        (lambda r: r.update(big_five="Openness to Experience - High"), "big_five", "five"),
    ],
)
def test_a_bad_record_names_the_file_the_record_and_the_field(tmp_path, change, field, message):
    path = broken(tmp_path, change)
    with pytest.raises(DataFormatError, match=message) as err:
        read_questions(path)
    text = str(err.value)
    assert str(path) in text and "record 2 (q_id '" in text and repr(field) in text


def test_the_authors_turn_scored_per_state_order_belief_and_trait(make_config):
    cfg = make_config(["task=tomato"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) == 12
    first = records[0]
    assert (
        "# Transcript \n" in first["prompt"]
        and "# Question \n" in first["prompt"]
        and "\n[D] They thinks" in first["prompt"]
        and "You are an expert at understanding human communication." in first["prompt"]
    )
    assert first["continuations"] == ["[A]", "[B]", "[C]", "[D]"]
    for group in (
        "belief",
        "first_order",
        "second_order",
        "false_belief",
        "no_false_belief",
        "extraversion:low",
        "belief:first_order",
    ):
        rows = [r["correct"] for r in records if group in r["groups"]]
        assert metrics[f"test/acc/{group}"] == pytest.approx(sum(rows) / len(rows))
    # clustered by conversation: four transcripts in the fixture (two speaker pairs, two topics)
    assert metrics["test/acc_n"] == 4 and metrics["test/acc_rows"] == 12
    assert sum(metrics[f"test/chosen/{x}"] for x in "ABCD") == pytest.approx(1.0)


def test_the_options_text_and_a_generated_reply(make_config):
    cfg = make_config(["task=tomato", "data.file=fb", "prompt.template=option_text"], name="eval", out="text")
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == 4 and records[0]["continuations"][0].startswith(
        "They thinks that option 0"
    )
    cfg = make_config(["task=tomato", "data.file=second", "prompt.scoring=generate"], name="eval", out="gen")
    metrics = run(cfg)
    assert metrics["test/count"] == 6 and all("reply" in r for r in predictions(cfg))


@pytest.mark.parametrize(
    ("name", "overrides", "refused"),
    [("train", [], "pragexp.train"), ("eval", ["llm.finetune=lora"], "llm.finetune=lora")],
)
def test_training_on_tomato_is_refused_with_its_licence(make_config, name, overrides, refused):
    cfg = make_config(["task=tomato", *overrides], name=name)
    with pytest.raises(ValueError, match="evaluation only") as err:
        run(cfg)
    assert "Meta Llama 3 Community License" in str(err.value) and refused in str(err.value)


@needs_samples
def test_the_shared_sample_reads_whole():
    questions = read_questions(SAMPLES / "tomato" / "tomato_fb_sample.json")
    assert len(questions) == 186 and all(q.order == 2 and q.false_belief for q in questions)
    states = {s: sum(q.mental_state == s for q in questions) for s in ("belief", "desire", "emotion")}
    assert states == {"belief": 40, "desire": 40, "emotion": 33}


def authors_turns(record: dict) -> list[dict]:
    """The chat that the authors' run_local_llm.py builds for a multiple-choice question with its options
    shown, written out here from their code's text (the facts of their protocol, not pragexp's template)."""
    system = (
        "You are an expert at understanding human communication. Please leverage the information provided "
        "and choose the most probable answer to the question from the options. Output your final answer by "
        "strictly following this format: [A], [B], [C], or [D]"
    )
    user = "# Transcript \n" + record["conversation"] + "\n\n" + "# Question \n" + record["q"]
    user += "\n\n" + "# Options \n" + "".join(f"[{x}] {record[f'a{i}']}\n" for i, x in enumerate("ABCD"))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def test_the_authors_template_is_their_chat_string_for_string():
    from omegaconf import OmegaConf

    from pragexp.prompting.items import PromptItem
    from pragexp.prompting.templates import load_templates, select_template

    group = OmegaConf.to_container(OmegaConf.load(Path("conf/prompt/tomato.yaml")))
    templates = load_templates(group["templates"])
    record = json.loads((FOLDER / "tomato_fb.json").read_text(encoding="utf-8"))[0]
    question = read_questions(FOLDER / "tomato_fb.json")[0]
    item = PromptItem(
        0, {"conversation": question.conversation, "question": question.question}, question.options
    )
    turns = authors_turns(record)
    assert list(select_template(templates, "authors").render(item).messages) == turns
    # a model without a system turn (their Mistral and Gemma runs): the system prompt opens the user turn
    folded = select_template(templates, "authors_folded").render(item).messages
    assert list(folded) == [{"role": "user", "content": turns[0]["content"] + "\n\n" + turns[1]["content"]}]


def test_a_system_prompt_beside_the_protocols_system_turn_is_refused():
    from pragexp.generation.backends.base import with_system

    user = [{"role": "user", "content": "hi"}]
    assert with_system("Be brief.", user)[0] == {"role": "system", "content": "Be brief."}
    assert with_system(None, [{"role": "system", "content": "theirs"}, *user])[0]["content"] == "theirs"
    with pytest.raises(ValueError, match="leave llm.system_prompt unset"):
        with_system("Be brief.", [{"role": "system", "content": "theirs"}, *user])
