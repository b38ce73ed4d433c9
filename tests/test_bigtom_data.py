"""BigToM: the story file read as released, each story's 25 items built by the authors' rules (derived here by
hand for an invented story, and checked item by item against the authors' own generated files where they are
at hand), their answers in the authors' seeded order, bad lines named by file, line and field, and runs on the
one route with accuracy per condition and the true-and-false-belief joint figure, clustered by story."""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path

import pytest
from conftest import CONF, FIXTURES, SAMPLES, needs_samples, predictions
from omegaconf import OmegaConf
from test_generative_rows import OneReply

from pragexp.data.bigtom import report_section
from pragexp.data.bigtom.conditions import CONDITION_FILES, generate, story_items
from pragexp.data.bigtom.datamodule import authors_orders
from pragexp.data.bigtom.io import read_stories
from pragexp.metrics.uncertainty import metrics_cell
from pragexp.models.llm import PromptedLLM
from pragexp.prompting import PromptItem
from pragexp.report import find_runs
from pragexp.run import run
from pragexp.training.benchmarks import benchmark_choices
from pragexp.utils.errors import DataFormatError

FOLDER = FIXTURES / "bigtom"
FILE = FOLDER / "bigtom.csv"
INSTRUCTION = (
    "Answer the questions based on the context. Keep your answer concise, few words are enough, maximum one "
    "sentence. Answer as 'Answer:<option>)<answer>'."
)


def test_the_story_file_reads_as_released():
    stories = read_stories(FILE)
    assert [s.line for s in stories] == [1, 2, 3] and [s.index for s in stories] == [0, 1, 2]
    assert all(len(s.fields) == 19 and s.fields[-2:] == ("auto", "0") for s in stories)
    assert not any("\r" in f or "\n" in f for s in stories for f in s.fields)  # CRLF ends lines only
    assert stories[1]["Story"].startswith("Zoé runs a café in Lyon.")
    assert stories[0]["Not aware of random event"] == "Ada does not see the cat sleeping."
    assert [s.extra_text for s in stories] == [False, False, True]  # Omar's sixth sentence


# Ada's story as its items tell it, derived by hand from the rules (generate_conditions.py): the parts between
# full stops, the setup p0-p2, the initial belief p3, the causal event p4.
SETUP = "Ada bakes bread. She wants soft loaves. She sets the oven to low."
SHOWN = SETUP + " Ada believes the oven is at low heat. Her cat turns the dial to high."  # "p0.p1.p2.p3.p4."
HIDDEN = SETUP + " Her cat turns the dial to high."  # "p0.p1.p2.p4."
CONTROL_SHOWN = (
    SETUP + " Ada believes the oven is at low heat. Her cat sleeps on the mat."
)  # random event for p4
CONTROL_HIDDEN = SETUP + " Her cat sleeps on the mat."
BELIEF_Q, ACTION_Q = "Does Ada believe the oven is at low or high heat?", "What will Ada do?"
HIGH, LOW = (
    "Ada believes the oven is at high heat.",
    "Ada believes the oven is at low heat.",
)  # aware, not aware
TURN, LEAVE = "Ada will turn the dial back to low.", "Ada will leave the dial alone."
SEES, MISSES = " Ada sees the cat turn the dial.", " Ada does not see the cat turn the dial."
SEES_CAT, MISSES_CAT = " Ada sees the cat sleeping.", " Ada does not see the cat sleeping."
TURNS, LEAVES = " Ada turns the dial back to low.", " Ada leaves the dial alone."


def by_hand(told: str, control: str) -> list[tuple[str, str, str, str]]:
    """One initial-belief setting's 12 items: forward belief, forward action, backward belief x TB, FB, TC,
    FC."""
    return [
        (told + SEES, BELIEF_Q, HIGH, LOW),
        (told + MISSES, BELIEF_Q, LOW, HIGH),
        (control + SEES_CAT, BELIEF_Q, LOW, HIGH),
        (control + MISSES_CAT, BELIEF_Q, LOW, HIGH),
        (told + SEES, ACTION_Q, TURN, LEAVE),
        (told + MISSES, ACTION_Q, LEAVE, TURN),
        (control + SEES_CAT, ACTION_Q, LEAVE, TURN),
        (control + MISSES_CAT, ACTION_Q, LEAVE, TURN),
        (told + TURNS, BELIEF_Q, HIGH, LOW),
        (told + LEAVES, BELIEF_Q, LOW, HIGH),
        (control + LEAVES, BELIEF_Q, LOW, HIGH),  # both backward controls: the not-aware action
        (control + LEAVES, BELIEF_Q, LOW, HIGH),
    ]


def test_a_story_s_25_items_are_the_ones_derived_by_hand_from_the_authors_rules():
    ada = read_stories(FILE)[0]
    items = story_items(ada)
    expected = [
        *by_hand(HIDDEN, CONTROL_HIDDEN),
        *by_hand(SHOWN, CONTROL_SHOWN),
        (SETUP, BELIEF_Q, HIGH, LOW),
    ]
    assert [i.name for i in items] == list(CONDITION_FILES)
    assert len(expected) == len(items) == 25
    for item, row in zip(items, expected, strict=True):
        assert item.row == row, item.name
    assert CONDITION_FILES[0] == "0_forward_belief_true_belief" and CONDITION_FILES[-1] == (
        "1_percept_to_belief_true_belief"
    )


def test_text_after_the_fifth_sentence_is_in_no_item_and_files_keep_the_story_order():
    stories = read_stories(FILE)
    items = generate(stories)
    assert not any("The bear leaves" in i.text for i in items)
    assert [i.story for i in items if i.name == "1_backward_belief_false_belief"] == [0, 1, 2]
    assert len(items) == 75 and items[:3] == [story_items(s)[0] for s in stories]


def test_the_answers_come_in_the_authors_order_random_seed_0_then_one_shuffle_a_row():
    random.seed(0)  # their evaluate_conditions.py, at import; then per row random.shuffle([true, wrong])
    theirs = []
    for _ in range(30):
        answers = ["right", "wrong"]
        random.shuffle(answers)
        theirs.append(tuple(0 if a == "right" else 1 for a in answers))
    assert authors_orders(30) == theirs
    assert authors_orders(6) == [(0, 1), (0, 1), (1, 0), (0, 1), (0, 1), (0, 1)]  # as the stream gives them


def broken(tmp_path, line: int, change) -> Path:
    lines = FILE.read_bytes().decode("utf-8").split("\r\n")
    fields = lines[line - 1].split(";")
    lines[line - 1] = ";".join(change(fields))
    path = tmp_path / "bigtom.csv"
    path.write_bytes("\r\n".join(lines).encode("utf-8"))
    return path


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda f: f[:-1], "field 19 ((unnamed: always 0))", "18 fields, expected 19"),
        (lambda f: f[:5], "field 6 (Belief Question)", "5 fields, expected 19"),
        (lambda f: [f[0].replace(". She", "; she", 1), *f[1:]], "field 20 (none", "a ';' inside a text"),
        (lambda f: [*f[:14], " ", *f[15:]], "field 15 (Random Event)", "empty"),
        (
            lambda f: ["Ada bakes. She waits. Then.", *f[1:]],
            "field 1 (Story)",
            "hold 3 sentences, expected 5",
        ),
    ],
)
def test_a_bad_line_names_the_file_the_line_and_the_field(tmp_path, change, field, message):
    path = broken(tmp_path, 2, change)
    with pytest.raises(DataFormatError, match=message) as err:
        read_stories(path)
    assert str(err.value).startswith(f"{path}:2 ({field}")


def joint_by_hand(records, variable: str, shown: int) -> float:
    """The authors' TB-and-FB figure from the prediction records: per story, both conditions right."""
    right = {}
    for r in records:
        for condition in ("true_belief", "false_belief"):
            if r["condition"] == f"{shown}_{variable}_{condition}":
                right.setdefault(r["cluster"], []).append(r["correct"])
    assert all(len(v) == 2 for v in right.values())
    return sum(all(v) for v in right.values()) / len(right)


@pytest.mark.slow
def test_the_authors_turn_scored_per_condition_with_the_joint_pairs_clustered_by_story(make_config):
    cfg = make_config(["task=bigtom"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) == 75
    first = records[0]
    assert INSTRUCTION in first["prompt"] and "Story: " + HIDDEN + SEES in first["prompt"]
    assert f"Question: {BELIEF_Q}\nChoose one of the following:\na){HIGH}\nb){LOW}" in first["prompt"]
    assert (
        first["continuations"] == ["A", "B"] and first["gold"] == 0
    )  # the first draw keeps the right one first
    omar = next(r for r in records if r["cluster"] == 2)  # the third draw swaps them
    assert omar["gold"] == 1 and "\nb)Omar believes the hive is empty." in omar["prompt"]
    for group in ("0_forward_belief_true_belief", "backward_belief", "false_control", "initial_belief"):
        rows = [r["correct"] for r in records if group in r["groups"]]
        assert metrics[f"test/acc/{group}"] == pytest.approx(sum(rows) / len(rows))
    for variable in ("forward_belief", "forward_action", "backward_belief"):
        for shown, name in ((1, "initial_belief"), (0, "no_initial_belief")):
            key = f"test/joint_acc/{variable}:{name}"
            assert metrics[key] == pytest.approx(joint_by_hand(records, variable, shown))
    # clustered by story: three stories; 18 pairs (3 stories x 3 questions x 2 initial beliefs)
    assert metrics["test/acc_n"] == 3 and metrics["test/acc_rows"] == 75
    assert metrics["test/joint_acc_n/all"] == 3 and metrics["test/joint_acc_rows/all"] == 18
    assert "test/joint_acc/percept_to_belief:initial_belief" not in metrics  # no false-belief twin
    assert metrics["test/chosen/a"] + metrics["test/chosen/b"] == pytest.approx(1.0)
    assert {"story", "condition", "right_answer"} <= set(first)


@pytest.mark.slow
def test_the_completion_prompt_is_the_authors_text_and_the_generative_rows_read_back(make_config):
    cfg = make_config(["task=bigtom", "prompt.template=authors_plain", "prompt.chat=false"], name="eval")
    run(cfg)
    first = predictions(cfg)[0]
    question = f"{BELIEF_Q}\nChoose one of the following:\na){HIGH}\nb){LOW}"
    theirs = (
        f"{INSTRUCTION}\n\nStory: {HIDDEN + SEES}\nQuestion: {question}\nAnswer:"  # evaluate_llm.py, 0shot
    )
    assert first["prompt"] == theirs + " "
    for template in ("authors", "declared"):
        overrides = [
            "task=bigtom",
            f"prompt.template={template}",
            "prompt.scoring=generate",
            "data.stories=1",
        ]
        cfg = make_config(overrides, name="eval", out=template)
        metrics = run(cfg)
        assert metrics["test/count"] == 25 and "test/unparsed" in metrics
        assert all("reply" in r for r in predictions(cfg))
    assert "A) Ada believes" in predictions(cfg)[0]["prompt"]  # declared: the answers lettered A) and B)


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [
        ("Answer:b)Ada believes the oven is at low heat.", 1),  # the form their instruction asks for
        ("Answer: a) Ada believes the oven is at high heat.", 0),
        (" a)Ada believes the oven is at high heat.", 0),  # after their completion prompt's "Answer:"
        ("Ada believes the oven is at low heat.", 1),  # no key: the answer's words (theirs: the grader LLM)
        ("I cannot tell from the story.", None),  # unparsed (theirs: the grader LLM, told to mark it False)
    ],
)
def test_the_authors_replies_are_read_by_their_key_or_the_answer_s_words(reply, chosen):
    prompt = OmegaConf.to_container(OmegaConf.load(CONF / "prompt" / "bigtom.yaml"))
    prompt.update(template="authors", scoring="generate")
    model = PromptedLLM(OneReply(reply), prompt)
    fields = {"story": SHOWN + SEES, "question": BELIEF_Q, "question_with_choices": BELIEF_Q}
    model([PromptItem(0, fields, (HIGH, LOW), 0)])
    [(_, record)] = model.take_records()
    assert record["choice"] == chosen and record["unparsed"] == (chosen is None)


@pytest.mark.slow
def test_some_conditions_and_stories_only(make_config):
    picked = "[1_forward_belief_true_belief,1_forward_belief_false_belief,1_percept_to_belief_true_belief]"
    cfg = make_config(["task=bigtom", f"data.conditions={picked}", "data.stories=2"], name="eval")
    metrics = run(cfg)
    assert metrics["test/count"] == 6 and metrics["test/joint_acc_rows/all"] == 2
    report = json.loads(Path(cfg.paths.output_dir, "data_report.json").read_text())
    assert report["stories"] == 2 and report["joint_sets"] == 2 and len(report["per_condition"]) == 3
    assert report["joint_sets_right_first"] == 2 and report["per_right_position"] == {"a": 6}
    text = "\n".join(report_section.sections(find_runs([Path(cfg.paths.output_dir)])))
    assert "### Controls" not in text  # none of the picked conditions is a control
    cfg = make_config(
        ["task=bigtom", "data.conditions=[1_forward_belief_true_belief]"], name="eval", out="one"
    )
    assert "test/joint_acc/all" not in run(
        cfg
    )  # a true-belief item without its false-belief twin forms no pair
    with pytest.raises(Exception, match="data.conditions: unknown 1_forward_desire"):  # hydra wraps it
        run(
            make_config(
                ["task=bigtom", "data.conditions=[1_forward_desire_true_belief]"], name="eval", out="x"
            )
        )


@pytest.mark.slow
def test_the_report_section_shows_our_cells_beside_the_paper_and_draws_the_figure(make_config, tmp_path):
    cfg = make_config(["task=bigtom"], name="eval")
    metrics = run(cfg)
    runs = find_runs([Path(cfg.paths.output_dir)])
    text = "\n".join(report_section.sections(runs))
    print(text)
    ours = next(
        line for line in text.splitlines() if line.startswith("| tiny") and "| forward belief |" in line
    )
    cells = [c.strip() for c in ours.strip("|").split("|")]
    assert cells[2] == metrics_cell(metrics, "test/acc", "1_forward_belief_true_belief", units="stories")
    assert cells[4] == metrics_cell(
        metrics, "test/joint_acc", "forward_belief:initial_belief", units="stories"
    )
    assert cells[7] == metrics_cell(
        metrics, "test/joint_acc", "forward_belief:no_initial_belief", units="stories"
    )
    assert cells[4].endswith("(n=3 stories)")
    assert "| gpt-4 (paper) | backward belief | 0.620 |  | 0.395 |  |  |  |" in text
    assert "| human (paper) | forward action | 0.925 |  | 0.775 |" in text
    assert "| chance |  | 0.500 | 0.500 | 0.250 | 0.500 | 0.500 | 0.250 |" in text
    assert "- gpt-4 (paper): plot_models.ipynb" in text
    assert "### Controls" in text
    # Ada's and Zoé's draws keep the right answer first, Omar's swaps it, in every condition: always a) is
    # right on 2 stories' items and pairs of 3, far above the 1/4 of a uniform guess on the pairs.
    assert "| always a) (bigtom.csv, 75 items) | 0.667 | 0.667 |" in text
    assert "| always b) (bigtom.csv, 75 items) | 0.333 | 0.333 |" in text
    (figure,) = report_section.figures(runs, tmp_path)
    assert figure.name == "bigtom_belief.png" and figure.read_bytes().startswith(b"\x89PNG")


def test_bigtom_is_a_benchmark_the_training_curves_accept():
    assert "bigtom" in benchmark_choices()


@pytest.mark.slow
def test_bigtom_scored_while_an_llm_trains(make_config):
    overrides = [
        "task=circa",
        "model=llm",
        "llm.finetune=lora",
        "trainer.max_epochs=1",
        "logger=csv",
        "callbacks.benchmarks.names=[bigtom]",
        "callbacks.benchmarks.every_n_steps=1000",
        f"+callbacks.benchmarks.overrides.bigtom.data.path={FOLDER}",
        "+callbacks.benchmarks.overrides.bigtom.data.stories=2",
    ]
    cfg = make_config(overrides)
    run(cfg)
    with open(Path(cfg.paths.output_dir) / "csv" / "metrics.csv") as f:
        rows = [r for r in csv.DictReader(f) if r.get("bench/bigtom/acc")]
    assert len(rows) == 2  # before the first step and after the last
    # the overall figures and the task's headline ones (the paper's TB-and-FB pairs), each with its interval
    key = "bench/bigtom/joint_acc/forward_belief:initial_belief"
    assert all(
        0.0 <= float(r[key]) <= 1.0 and r["bench/bigtom/joint_acc_stderr/forward_belief:initial_belief"]
        for r in rows
    )


@needs_samples
def test_the_shared_sample_expands_into_its_750_items():
    stories = read_stories(SAMPLES / "bigtom" / "sample.csv")
    items = generate(stories)
    assert len(stories) == 30 and len(items) == 750 and not any(s.extra_text for s in stories)
    assert all(sum(i.name == name for i in items) == 30 for name in CONDITION_FILES)


# The authors' own items: the data/conditions/ folder their code/src/generate_conditions.py writes for a story
# file (run from code/src with the file at data/bigtom/bigtom.csv). Fetched or generated files are never
# committed here: name the folder in BIGTOM_AUTHORS_CONDITIONS, and its story file in BIGTOM_AUTHORS_STORIES
# (default: the shared sample), or put it beside the sample as conditions/.
AUTHORS_STORIES = Path(os.environ.get("BIGTOM_AUTHORS_STORIES", SAMPLES / "bigtom" / "sample.csv"))
AUTHORS_CONDITIONS = Path(os.environ.get("BIGTOM_AUTHORS_CONDITIONS", SAMPLES / "bigtom" / "conditions"))


@pytest.mark.skipif(
    not (AUTHORS_CONDITIONS.is_dir() and AUTHORS_STORIES.is_file()),
    reason="the authors' generated condition files are not here: set BIGTOM_AUTHORS_CONDITIONS to the "
    "data/conditions folder their generate_conditions.py writes for BIGTOM_AUTHORS_STORIES (default: the "
    "sample)",
)
def test_the_items_equal_the_authors_generated_items_one_by_one():
    items = generate(read_stories(AUTHORS_STORIES))
    assert sorted(p.name for p in AUTHORS_CONDITIONS.iterdir() if p.is_dir()) == sorted(CONDITION_FILES)
    for name in CONDITION_FILES:
        with open(AUTHORS_CONDITIONS / name / "stories.csv", encoding="utf-8", newline="") as f:
            theirs = [tuple(row) for row in csv.reader(f, delimiter=";")]
        ours = [i.row for i in items if i.name == name]
        assert len(ours) == len(theirs), name
        for k, (mine, row) in enumerate(zip(ours, theirs, strict=True)):
            assert mine == row, f"{name}, row {k}"
