"""Hi-ToM: its release file read as it is (each question once, its two prompting styles paired, the gold the
CoTP record's), bad records named by file, record and field, the authors' prompt and first-line reading, runs
on the one route with accuracy per order, deception and length and the joint accuracy, and its report
section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import CONF, FIXTURES, SAMPLES, needs_samples, predictions
from omegaconf import OmegaConf
from test_benchmarks_report import PNG, row, rows_of

from pragexp.data.hitom import report_section as section
from pragexp.data.hitom.io import read_questions, read_records
from pragexp.generation.backends.base import LLMBackend
from pragexp.metrics.uncertainty import metrics_cell
from pragexp.models.llm import PromptedLLM
from pragexp.prompting import PromptItem
from pragexp.prompting.readers import read_first_line_exact
from pragexp.prompting.templates import load_templates, select_template
from pragexp.report import find_runs, main
from pragexp.reporting.groups import run_label
from pragexp.run import run
from pragexp.utils.errors import DataFormatError

FILE = FIXTURES / "hitom" / "Hi-ToM_data.json"
VP = (
    "Read the following story and answer the multiple-choice question. Please provide answer without "
    "explanations."
)
COTP = (
    "Read the following story and answer the multiple-choice question. Think step-by-step. Provide the "
    "answer first, and then explain it."
)
NOTE = (
    "Note: You should assume the following. (1) An agent witnesses everything and every movements before "
    "exiting a location. (2) An agent A can infer another agent B's mental state only if A and B have been "
    "in the same location, or have private or public interactions. (3) Note that every agent tend to lie. "
    "What a character tells others doesn't affect his actual belief. An agent tend to trust a agent that "
    "exited the room later than himself. The exit order is known to all agents. (4) Agents in private "
    "communications know that others won't hear them, but they know that anyone can hear any public claims."
)


def test_each_question_once_with_both_styles_paired_and_the_cotp_gold():
    records = read_records(FILE)
    questions = read_questions(FILE)
    assert len(records) == 40 and len(questions) == 20
    assert len({q.story_id for q in questions}) == 4 and {q.order for q in questions} == {0, 1, 2, 3, 4}
    assert all(len(q.sample_ids) == 2 and len(q.options) == 15 for q in questions)
    # the prompt's text undone from the stories: the VP instruction line, the blank line, a stray "***"
    assert all(not q.story.startswith("Read the") and not q.story.endswith(("\n", "***")) for q in questions)
    assert {r.story for r in records if r.order == 0 and not r.deception and r.length == 1} == {
        questions[0].story
    }
    (differ,) = [q for q in questions if q.vp_answer != q.answer]
    raw = json.loads(FILE.read_text(encoding="utf-8"))["data"]
    cotp = next(r for r in raw if r["sample_id"] == differ.sample_ids[0])
    assert cotp["prompting_type"] == "CoTP" and differ.answer == cotp["answer"]
    assert differ.options[differ.true_index] == differ.answer


def broken(tmp_path, change, position: int = 3) -> Path:
    document = json.loads(FILE.read_text(encoding="utf-8"))
    change(document["data"][position])
    path = tmp_path / "Hi-ToM_data.json"
    path.write_text(json.dumps(document, indent=4), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.update(answer="purple_bag"), "answer", "none of its choices"),
        (lambda r: r.pop("story"), "story", "missing"),
        (lambda r: r.update(question_order=5), "question_order", "order 0-4"),
        (lambda r: r.update(question_order="2"), "question_order", "expected int"),
        (lambda r: r.update(deception="yes"), "deception", "expected bool"),
        (lambda r: r.update(prompting_type="CoT"), "prompting_type", "one of CoTP, VP"),
        (lambda r: r.update(choices="A. red_box, C. blue_box"), "choices", "lettered in order"),
    ],
)
def test_a_bad_record_names_the_file_the_record_and_the_field(tmp_path, change, field, message):
    path = broken(tmp_path, change)
    with pytest.raises(DataFormatError, match=message) as err:
        read_questions(path)
    assert str(path) in str(err.value) and "record 3 (sample_id 3)" in str(err.value)
    assert repr(field) in str(err.value)


def test_a_question_twice_in_one_style_or_with_other_choices_is_refused(tmp_path):
    document = json.loads(FILE.read_text(encoding="utf-8"))
    document["data"].append(dict(document["data"][0], sample_id=99))
    path = tmp_path / "Hi-ToM_data.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(DataFormatError, match="a second CoTP record") as err:
        read_questions(path)
    assert "record 40 (sample_id 99), field 'prompting_type'" in str(err.value)
    vp = next(n for n, r in enumerate(document["data"]) if r["prompting_type"] == "VP")
    swapped = ", ".join(reversed(document["data"][vp]["choices"].split(", ")))
    relettered = ", ".join(f"{chr(65 + i)}.{p.split('.', 1)[1]}" for i, p in enumerate(swapped.split(", ")))
    path = broken(tmp_path, lambda r: r.update(choices=relettered), position=vp)
    with pytest.raises(DataFormatError, match="differs from the CoTP record") as err:
        read_questions(path)
    assert f"record {vp} (sample_id {vp}), field 'choices'" in str(err.value)


def templates():
    group = OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / "hitom.yaml"))
    return load_templates(group["templates"])


@pytest.mark.parametrize(("template", "instruction"), [("authors_vp", VP), ("authors_cotp", COTP)])
def test_the_authors_turns_are_their_prompt_files_as_test_azure_sends_them(template, instruction):
    """A prompt file (instruction line, "Story:", the story's lines, "Question: ", "Choices: ", a blank line,
    the note), its lines stripped and joined by line breaks (test_azure.py), after its system turn."""
    question = read_questions(FILE)[7]
    item = PromptItem(
        0,
        {"story": question.story, "question": question.question, "choices": question.choices},
        question.options,
    )
    lines = [instruction, "Story:", *question.story.split("\n"), f"Question: {question.question}"]
    lines += [f"Choices: {question.choices}", "", NOTE]
    system = {"role": "system", "content": "You are an AI assistant that helps people find information."}
    rendered = select_template(templates(), template).render(item)
    assert list(rendered.messages) == [system, {"role": "user", "content": "\n".join(lines)}]
    assert (
        rendered.continuations[question.true_index] == f"{chr(65 + question.true_index)}. {question.answer}"
    )


def test_the_authors_first_line_reading():
    names = ["red_box", "green_bucket", "blue_crate"]
    read = lambda reply: read_first_line_exact(reply, [], names)  # noqa: E731
    assert read("B. green_bucket") == 1
    assert read("Answer: B. green_bucket\nBecause ...") == 1  # "Answer:" aside
    assert read("A. green_bucket") == 1  # the letter is not read: the name is scored
    assert read("green_bucket") is None  # one token: dropped by the authors, unparsed here
    assert read("B. green_bucket.") is None  # not a name character for character
    assert read("The answer is B. green_bucket") is None  # five tokens
    assert read("Thinking first.\nB. green_bucket") is None  # the first line only


class OneReply(LLMBackend):
    name = "one_reply"

    def __init__(self, reply: str):
        super().__init__()
        self.reply = reply

    def generate_samples(self, prompts, params, sample):
        return [self.reply] * len(prompts)


def test_a_cotp_reply_is_read_by_its_first_line_whatever_follows():
    prompt = OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / "hitom.yaml"))
    prompt.update(template="authors_cotp", scoring="generate", chat=False)
    model = PromptedLLM(OneReply("C. blue_crate\nStep by step: ... so the answer is A. red_box"), prompt)
    fields = {"story": "1 Ada entered the hall.", "question": "Where is the apple really?", "choices": "A. x"}
    scores = model([PromptItem(0, fields, ("red_box", "green_bucket", "blue_crate"), 0)])
    assert scores[0].argmax().item() == 2 and torch.isfinite(scores[0]).sum() == 1


@pytest.fixture
def hitom_run(make_config):
    cfg = make_config(["task=hitom"], name="eval", out="hitom")
    return cfg, run(cfg)


@pytest.mark.slow
def test_accuracy_per_order_deception_and_length_and_the_joint_accuracy(hitom_run):
    cfg, metrics = hitom_run
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) == 20
    assert records[0]["continuations"][0] == "A. red_crate" and records[0]["template"] == "authors_vp"
    for group in ("order_0", "order_4", "deception", "no_deception", "length_3", "deception:order_2"):
        rows = [r["correct"] for r in records if group in r["groups"]]
        assert metrics[f"test/acc/{group}"] == pytest.approx(sum(rows) / len(rows))
    assert metrics["test/acc_n"] == 4 and metrics["test/acc_rows"] == 20  # clustered by story
    by_story: dict[int, dict[int, bool]] = {}
    for r in records:
        order = int(next(g for g in r["groups"] if g.startswith("order_"))[-1])
        by_story.setdefault(r["cluster"], {})[order] = r["correct"]
    for k in range(5):
        joint = [all(orders[j] for j in range(k + 1)) for orders in by_story.values()]
        assert metrics[f"test/joint_acc/order_{k}"] == pytest.approx(sum(joint) / len(joint))
        assert metrics[f"test/joint_acc_n/order_{k}"] == 4
    assert metrics["test/joint_acc_n/deception:order_4"] == 2
    assert sum(metrics[f"test/chosen/{chr(65 + i)}"] for i in range(15)) == pytest.approx(1.0)
    report = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())
    assert report["stories"] == 4 and report["styles_disagree"]["questions"] == 1


def test_the_report_section_its_published_rows_scorecard_and_figure(hitom_run, tmp_path):
    cfg, metrics = hitom_run
    runs = find_runs([Path(cfg.paths.output_dir)])
    text = "\n".join(section.sections(runs))
    per = rows_of(text, "Accuracy per order, without and with deception")
    ours = row(per, **{"model, template": run_label(runs[0]), "stories": "deception"})
    assert ours["order 2"] == metrics_cell(metrics, "test/acc", "deception:order_2", units="stories")
    assert ours["all orders"] == metrics_cell(metrics, "test/acc", "deception", units="stories")
    gpt4 = row(per, **{"model, template": "GPT-4 (prompt.template=authors_cotp) (paper)", "stories": "both"})
    assert gpt4["order 0"] == "0.983" and gpt4["order 4"] == "0.385"  # GPT-4_data.txt's cells, averaged
    lengths = rows_of(text, "Accuracy per order and story length (chapters)")
    assert row(lengths, **{"model, template": run_label(runs[0]), "stories": "length 2"})["order 0"] == (
        metrics_cell(metrics, "test/acc", "length_2:order_0", units="stories")
    )
    joint = row(rows_of(text, "Joint accuracy per order (orders 0..k all right)"), stories="both")
    assert joint["order 3"] == metrics_cell(metrics, "test/joint_acc", "order_3", units="stories")
    card, figures = tmp_path / "scorecard.md", tmp_path / "figures"
    assert main([cfg.paths.output_dir, "--scorecard", str(card), "--figures", str(figures)]) == 0
    header = next(line for line in card.read_text().splitlines() if line.startswith("| model"))
    assert "Hi-ToM acc" in header and "Hi-ToM joint acc (orders 0-4)" in header
    assert (figures / "hitom_orders.png").read_bytes()[:8] == PNG
    assert section.sections([]) == [] and section.figures([], tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("template", "answers"), [("authors_vp", ["A. red_crate"]), ("declared", ["A", "B"])]
)
def test_the_generative_rows_beside_the_log_likelihood_row(make_config, template, answers):
    generate = ["task=hitom", "llm=scripted_thinker", f"llm.answers={json.dumps(answers)}"]
    generate += ["prompt.scoring=generate", f"prompt.template={template}", "prompt.reasoning_budget=20"]
    cfg = make_config(generate, name="eval", out=template)
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == 20 and "test/unparsed" in metrics and "test/joint_acc/order_4" in metrics
    assert metrics["test/unparsed"] == pytest.approx(sum(r["unparsed"] for r in records) / 20)
    if template == "authors_vp":
        for r in records:
            expected = None if r["answer"] is None else read_first_line_exact(r["answer"], [], r["options"])
            assert r["choice"] == expected


@needs_samples
def test_the_shared_sample_reads_whole():
    questions = read_questions(SAMPLES / "hitom" / "sample.json")
    assert len(questions) == 90 and len({q.story_id for q in questions}) == 18
    assert all(sum(q.order == k for q in questions) == 18 for k in range(5))
    assert sum(q.vp_answer != q.answer for q in questions) == 23  # the sample's README: 23 of its questions
    assert all(q.story.startswith("1 ") and len(q.options) == 15 for q in questions)
