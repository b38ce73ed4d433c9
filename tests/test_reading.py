"""An answer is read, or it is none (issue 46): the reading rules (`prompting.answers`) on a labelled set of
replies from the tasks with generative rows (tests/fixtures/replies/: SmolLM2's own replies, the scripted
thinker's, and hand-written hard cases), each labelled with its correct reading (an option, or none). The
reader's precision (the answers read that are right) must stay at or above 0.99; its recall (the answerable
replies read right) is printed per task and source. And `unparsed` counts what the rules could not read, the
extractor's recoveries apart."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from pragexp.generation.backends.base import LLMBackend
from pragexp.metrics.generation import GenerationMetric
from pragexp.models.llm import PromptedLLM
from pragexp.prompting import PromptItem, parse_option, read_answer
from pragexp.prompting.reasoning import split_reasoning

REPLIES = Path(__file__).parent / "fixtures" / "replies"
FIELDS = {"id", "task", "source", "template", "options", "continuations", "reply", "reading", "note"}
SOURCES = {"smollm2", "scripted", "hand"}


def labelled() -> list[dict]:
    rows = []
    for path in sorted(REPLIES.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            missing = FIELDS - set(row)
            assert not missing, f"{path.name}:{number}: fields {sorted(missing)} missing"
            rows.append(row)
    return rows


def reading(row: dict) -> int | None:
    """The reply's answer as the generative route reads it: the reasoning cut, then the rules."""
    answer = split_reasoning(row["reply"]).answer
    return None if answer is None else read_answer(answer, row["continuations"], row["options"])


def test_the_labelled_set_is_well_formed():
    rows = labelled()
    assert len(rows) >= 400
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["source"] for r in rows} == SOURCES
    assert {"hu_pragmatics", "ludwig", "circa"} <= {r["task"] for r in rows}
    for row in rows:
        assert len(row["options"]) == len(row["continuations"]) >= 2, row["id"]
        assert row["reading"] is None or 0 <= row["reading"] < len(row["options"]), row["id"]
    unanswerable = sum(r["reading"] is None for r in rows)
    assert 0.2 * len(rows) < unanswerable < 0.8 * len(rows)  # both kinds, in numbers


def scores(rows: list[dict]) -> dict[str, list[int]]:
    """{group: [read, read right, answerable, answerable read right]} for all, each task and each source."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in rows:
        got, right = reading(row), row["reading"]
        for group in ("all", f"task {row['task']}", f"source {row['source']}"):
            c = counts[group]
            c[0] += got is not None
            c[1] += got is not None and got == right
            c[2] += right is not None
            c[3] += right is not None and got == right
    return counts


def test_the_reader_s_precision_is_at_least_0_99_and_its_recall_is_reported():
    rows = labelled()
    counts = scores(rows)
    for group, (read, right, answerable, found) in sorted(counts.items()):
        print(f"{group:24s} precision {right}/{read}  recall {found}/{answerable}")
    read, right, answerable, found = counts["all"]
    wrong = [r["id"] for r in rows if reading(r) is not None and reading(r) != r["reading"]]
    assert read >= 200 and right / read >= 0.99, f"precision {right}/{read}; read wrongly: {wrong}"
    assert found / answerable >= 0.9  # a reader that reads nothing is precise too


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I have no idea.", None),  # the old reader: "no"
        ("No comment.", None),  # the old reader: "no"
        ("The answer is not yes.", None),  # the old reader: "yes"
        ("Yes and no.", None),  # the old reader: "yes"
        ('No, the answer is not "yes" but "no".', 1),
        ("Answer: yes. Wait, the answer is no.", 1),
        ("Answer: yes. Wait, that's wrong.", None),
        ("\\boxed{yes} or \\boxed{no}", None),
        ("\\boxed{yes}. Re-reading it: \\boxed{no}.", 1),
        ("Yes, I can help with that.", None),
        ("The question is whether the response implies yes.", None),
        ('The answer to the question "Is it far?" is "No."', 1),
    ],
)
def test_hard_cases(reply, expected):
    assert read_answer(reply, ["yes", "no"], ["yes", "no"]) == expected


def test_an_option_that_holds_a_hedge_word_is_still_an_option():
    options = ["yes", "no", "yes, subject to some conditions", "neither yes nor no"]
    assert parse_option("Neither yes nor no.", options) == 3
    assert parse_option("Yes, subject to some conditions being met.", options) is None  # which one? none
    assert read_answer("Answer: D", ["A", "B", "C", "D"], options) == 3
    assert read_answer("Neither.", ["A", "B", "C", "D"], options) is None


class Hedging(LLMBackend):
    """Hedges on the question; as the extractor, answers "B" to the first item and "none" to the second."""

    name = "hedging"

    def generate_samples(self, prompts, params, sample):
        replies = []
        for p in prompts:
            if "Which option does the reply give" in p.text:
                replies.append("B" if "hot one" in p.text else "none")
            else:
                replies.append("Maybe the hot one?" if "hot" in p.text else "It depends.")
        return replies


def test_unparsed_counts_what_the_rules_could_not_read_and_extracted_what_the_extractor_then_did():
    prompt = {
        "templates": [
            {"name": "q", "input": "{question}", "answer": "{letter}", "option_line": "{letter}. {option}"}
        ],
        "scoring": "generate",
        "chat": False,
        "extractor": True,
    }
    model = PromptedLLM(Hedging(), prompt)
    items = [
        PromptItem(0, {"question": "Is the coffee hot?"}, ("cold", "hot"), 1),
        PromptItem(1, {"question": "Is it cold?"}, ("cold", "warm"), 0),
    ]
    scores = model(items)
    records = dict(model.take_records())
    assert records[0]["unparsed"] and records[0]["extracted"] and records[0]["choice"] == 1
    assert records[1]["unparsed"] and not records[1]["extracted"] and records[1]["choice"] is None
    assert scores[0].argmax().item() == 1 and not scores[1].isfinite().any()
    metric = GenerationMetric()
    metric.update(records)
    figures = metric.compute()
    assert figures["unparsed"].item() == 1.0  # both unread by the rules, though one was extracted
    assert figures["extracted"].item() == 0.5
