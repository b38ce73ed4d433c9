"""Reading Hi-ToM's release (`Hi-ToM_data.json` of github.com/ying-hui-he/Hi-ToM_dataset, as its
`toJSON.ipynb` writes it from the text tree
`Hi-ToM_data/<Tell|No_Tell>/<CoT|MC>/length_<L>/sample_<n>/order_<k>.txt`).

The file is `{"data": [records]}`; a record has `prompting_type` (CoTP or VP), `deception` (the Tell folder),
`story_length` (1-3 chapters), `question_order` (0-4), `sample_id` (its running index), `story` (numbered
lines), `question`, `choices` (one line, "A. blue_box, B. red_crate, ...") and `answer` (a container's name).
A record that breaks this (a missing key, a value of another type or range, choices not lettered A, B, ... in
order, an answer that is none of its choices) is a `DataFormatError` naming the file, the record (its position
and sample_id) and the field.

Each question is released twice, once per prompting style (VP and CoTP), with the same story, question and
choices: `read_questions` pairs them into one `Question`. Kept as the release has them, and undone only where
the text is the prompt's rather than the story's: the VP records' stories open with the VP instruction line
(the notebook did not filter it), six CoTP records end with a stray "***" line, and every story ends with a
blank line. The two records of a question do not always agree on the answer (138 of the release's 600
questions); the authors score both styles against the CoTP record's answer (`check_response.ipynb` at commit
a139da24, cells 1 and 3, read the gold from `data_ToMh_old/<tell>/CoT/...`, the folder released as
`Hi-ToM_data/`), and so does `Question.answer`; the VP record's answer is kept beside it (`vp_answer`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import read_json
from pragexp.data.common.files.records import require_fields
from pragexp.utils.errors import DataFormatError

FILE = "Hi-ToM_data.json"
STYLES = ("CoTP", "VP")
VP_INSTRUCTION = (  # the authors' prompt file, word for word
    "Read the following story and answer the multiple-choice question. "
    "Please provide answer without explanations."
)
KEYS = {
    "prompting_type": str,
    "deception": bool,
    "story_length": int,
    "question_order": int,
    "sample_id": int,
    "story": str,
    "question": str,
    "choices": str,
    "answer": str,
}
LENGTHS, ORDERS = (1, 2, 3), (0, 1, 2, 3, 4)
_CHOICE = re.compile(r"([A-Z])\. (\S+)")


@dataclass(frozen=True)
class Record:
    position: int
    style: str
    deception: bool
    length: int
    order: int
    sample_id: int
    story: str  # the story's numbered lines, as the prompt files hold them
    question: str
    choices: str  # the release's line: "A. blue_box, B. red_crate, ..."
    options: tuple[str, ...]  # the containers' names, in the choices' order
    answer: str


@dataclass(frozen=True)
class Question:
    story_id: int  # the story, numbered in the order of the file (its five orders' questions share it)
    deception: bool
    length: int
    order: int
    story: str
    question: str
    choices: str
    options: tuple[str, ...]
    answer: str  # the gold the authors score both styles against: the CoTP record's
    true_index: int
    vp_answer: str | None  # the VP record's answer (None: no VP record)
    sample_ids: tuple[int, ...]  # its records' sample_id, CoTP's first


def read_records(path) -> list[Record]:
    path = Path(path)
    document = read_json(path, "Hi-ToM", f"data.path: the repository, or {FILE}")
    records = document.get("data") if isinstance(document, dict) else None
    if not isinstance(records, list):
        raise DataFormatError(path, 'expected {"data": [records]}, as the release writes it')
    return [_record(r, n, path) for n, r in enumerate(records)]


def _record(raw, n: int, path: Path) -> Record:
    sample_id = raw.get("sample_id") if isinstance(raw, dict) else None

    def fail(field: str, message: str):
        raise DataFormatError(path, message, where=f"record {n} (sample_id {sample_id!r}), field {field!r}")

    require_fields(raw, KEYS, fail)
    checks = (
        ("prompting_type", raw["prompting_type"] in STYLES, f"one of {', '.join(STYLES)}"),
        ("story_length", raw["story_length"] in LENGTHS, "1, 2 or 3 (chapters)"),
        ("question_order", raw["question_order"] in ORDERS, "an order 0-4"),
        ("story", bool(_story(raw["story"], raw["prompting_type"])), "a story's lines"),
        ("question", bool(raw["question"].strip()), "a question"),
    )
    for field, holds, expected in checks:
        if not holds:
            fail(field, f"expected {expected}, found {raw[field]!r}")
    options = _options(raw["choices"])
    if options is None:
        fail("choices", f'expected "A. name, B. name, ..." lettered in order, found {raw["choices"]!r}')
    if raw["answer"] not in options:
        fail("answer", f"{raw['answer']!r} is none of its choices ({', '.join(options)})")
    return Record(
        n,
        raw["prompting_type"],
        raw["deception"],
        raw["story_length"],
        raw["question_order"],
        sample_id,
        _story(raw["story"], raw["prompting_type"]),
        raw["question"],
        raw["choices"],
        options,
        raw["answer"],
    )


def _story(text: str, style: str) -> str:
    """The story's lines as the prompt files hold them: without the VP instruction line the notebook kept, the
    blank line that ends every record's story and the stray "***" of six CoTP records."""
    if style == "VP" and text.startswith(VP_INSTRUCTION + "\n"):
        text = text[len(VP_INSTRUCTION) + 1 :]
    text = text.rstrip("\n")
    if text.endswith("\n***"):
        text = text[: -len("\n***")]
    return text.rstrip("\n")


def _options(choices: str) -> tuple[str, ...] | None:
    """The names of "A. x, B. y, ..." in order; None unless every part is the next letter and a name."""
    parts = choices.split(", ")
    found = [_CHOICE.fullmatch(part) for part in parts]
    if len(parts) < 2 or not all(found):
        return None
    if [m.group(1) for m in found] != [chr(ord("A") + i) for i in range(len(parts))]:
        return None
    return tuple(m.group(2) for m in found)


def read_questions(path) -> list[Question]:
    """The release's questions, each once (its VP and CoTP records paired), in the order of their first
    record."""
    path = Path(path)
    records = read_records(path)
    pairs: dict[tuple, dict[str, Record]] = {}
    for r in records:
        key = (r.deception, r.length, r.story, r.order, r.question)
        styles = pairs.setdefault(key, {})
        if r.style in styles:
            where = f"record {r.position} (sample_id {r.sample_id!r}), field 'prompting_type'"
            first = styles[r.style]
            message = (
                f"a second {r.style} record of the question of record {first.position} "
                "(same story and question)"
            )
            raise DataFormatError(path, message, where=where)
        styles[r.style] = r
    stories: dict[tuple, int] = {}
    return [_question(styles, stories, path) for styles in pairs.values()]


def _question(styles: dict[str, Record], stories: dict, path: Path) -> Question:
    gold = styles.get("CoTP") or styles["VP"]
    vp = styles.get("VP")
    if vp is not None and vp.choices != gold.choices:
        where = f"record {vp.position} (sample_id {vp.sample_id!r}), field 'choices'"
        raise DataFormatError(
            path, f"differs from the CoTP record {gold.position} of the same question", where=where
        )
    story_id = stories.setdefault((gold.deception, gold.length, gold.story), len(stories))
    return Question(
        story_id,
        gold.deception,
        gold.length,
        gold.order,
        gold.story,
        gold.question,
        gold.choices,
        gold.options,
        gold.answer,
        gold.options.index(gold.answer),
        vp.answer if vp is not None else None,
        tuple(r.sample_id for r in (styles.get("CoTP"), vp) if r is not None),
    )
