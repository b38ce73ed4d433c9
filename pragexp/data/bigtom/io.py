"""Reading BigToM's released story file (`data/bigtom/bigtom.csv` of
github.com/cicl-stanford/procedural-evals-tom): one story a line, 19 fields separated by ";", no header, CRLF
line ends, read as the authors read it (`csv.reader(f, delimiter=";")` in their
code/src/generate_conditions.py).

The fields, named as their `generate_conditions` names them: the story (five sentences: setup 1-3, the agent's
initial belief 4, the causal event 5), whether the agent perceives the event or not, the action that follows
each, the belief, desire and action questions, each question's answer when the agent is aware and when not, a
random event and whether the agent perceives it; then two unnamed fields, how the line was made
(`auto`/`user`) and one that is always `0`. The conditions use the first 17 and every sentence up to the
fifth.

A line that breaks this is a `DataFormatError` naming the file, the line and the field: a number of fields
other than 19 (a ";" inside a text splits it), an empty text among the 17 the conditions use, a story of fewer
than five sentences before its fifth full stop (their code stops with an IndexError, or builds items on an
empty sentence). Text after the fifth sentence is left out of every item, as their code leaves it out; such
stories are counted (`Story.extra_text`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from pragexp.utils.errors import DataFormatError

FILE = "bigtom.csv"
FIELDS = (
    "Story",
    "Aware of event",
    "Not Aware of event",
    "Action aware",
    "Action not aware",
    "Belief Question",
    "Desire Question",
    "Action Question",
    "Belief Answer Aware",
    "Desire Answer Aware",
    "Action Answer Aware",
    "Belief Answer not Aware",
    "Desire Answer not Aware",
    "Action Answer not Aware",
    "Random Event",
    "Aware of random event",
    "Not aware of random event",
    "(unnamed: how the line was made, auto or user)",
    "(unnamed: always 0)",
)
USED = 17  # the fields the conditions are built from
SENTENCES = 5  # story sentences the conditions use: setup 1-3, initial belief 4, causal event 5


@dataclass(frozen=True)
class Story:
    index: int  # the story's row in the file, from 0 (the authors' row in every condition file)
    line: int  # its line in the file, from 1
    fields: tuple[str, ...]  # the 19 fields as read

    def __getitem__(self, name: str) -> str:
        """A field by the authors' name (`story["Belief Answer Aware"]`)."""
        return self.fields[FIELDS.index(name)]

    @property
    def sentences(self) -> list[str]:
        """The story split on "." as the authors split it: each part without its full stop, spaces kept."""
        return self["Story"].split(".")

    @property
    def extra_text(self) -> bool:
        """Whether the story has text after its fifth full stop (no item shows it)."""
        return any(part.strip() for part in self.sentences[SENTENCES:])


def read_stories(path) -> list[Story]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"BigToM story file not found: {path} (data.path: bigtom.csv or its folder)")
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter=";")
        stories = []
        for row in reader:
            stories.append(_story(row, len(stories), reader.line_num, path))
    if not stories:
        raise DataFormatError(path, "no story lines")
    return stories


def _story(row: list[str], index: int, line: int, path: Path) -> Story:
    def fail(field: int, message: str):
        name = FIELDS[field] if field < len(FIELDS) else "none: a story line has 19"
        raise DataFormatError(path, message, line=line, where=f"field {field + 1} ({name})")

    if len(row) != len(FIELDS):
        hint = " (a ';' inside a text splits it)" if len(row) > len(FIELDS) else ""
        fail(min(len(row), len(FIELDS)), f"{len(row)} fields, expected {len(FIELDS)}{hint}")
    for field, text in enumerate(row[:USED]):
        if not text.strip():
            fail(field, "empty: every item built from this field would lack it")
    story = Story(index, line, tuple(row))
    parts = story.sentences[:SENTENCES]
    if len(parts) < SENTENCES or not all(part.strip() for part in parts):
        found = sum(1 for part in parts if part.strip())
        fail(
            0,
            f"its first {SENTENCES} '.'-separated parts hold {found} sentences, expected {SENTENCES} "
            "(setup 1-3, the initial belief, the causal event)",
        )
    return story
