"""What the fidelity tool reads of each file: its dialogues' rounds (question, answer, explicit form,
distractors, the generated files' type and subtopic tags) and QA pairs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.grice.io import Dialogue, read_dialogues
from pragexp.data.grice.schema import SUBTOPICS


@dataclass
class RoundView:
    question: str
    answer: str
    explicit: str
    distractors: tuple
    implicature: str | None  # generated files tag each round; official ones do not
    subtopic: str | None


@dataclass
class DialogueView:
    source: str  # "file.json#dialog_id"
    condition: str | None  # the type a test file (or `test_condition`) is about
    rounds: list
    qa: list  # (question, answer)


def read_views(path: Path) -> list[DialogueView]:
    """Reads with the package's reader (it names file, dialogue and field on bad input); the
    subtopic tags of generated files are read from the same JSON."""
    dialogues: list[Dialogue] = read_dialogues(path)
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)["data"]["dialogs"]
    out = []
    for d, r in zip(dialogues, raw, strict=True):
        rounds = []
        for k, rd in enumerate(d.rounds):
            sub = r["dialog"][k].get("subtopic")
            rounds.append(
                RoundView(
                    rd.question,
                    rd.answer,
                    rd.explicit,
                    tuple(o for i, o in enumerate(rd.options) if i != rd.answer_index),
                    rd.implicature,
                    sub if sub in SUBTOPICS else None,
                )
            )
        out.append(
            DialogueView(
                f"{path.name}#{d.dialog_id}",
                d.implicature,
                rounds,
                [(q.question, q.answer) for q in d.questions],
            )
        )
    return out
