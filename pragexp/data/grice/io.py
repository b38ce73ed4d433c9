"""Reads GRICE dialogue files in the official `impl_dial` v0.1 schema (released or generated).

Every structural problem raises DataFormatError naming the file, the dialogue id, the round and
the field, so a broken file is found without a debugger.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.grice.schema import IMPLICATURE_TYPES, TEST_CONDITIONS
from pragexp.utils.errors import DataFormatError

NUM_OPTIONS = 4
_CONDITION_IN_NAME = re.compile(r"_(" + "|".join(TEST_CONDITIONS) + r")\.json$")


@dataclass(frozen=True)
class Round:
    question: str
    answer: str
    explicit: str
    options: tuple[str, ...]
    answer_index: int
    implicature: str | None  # None in the official release, which types files, not rounds


@dataclass(frozen=True)
class Question:
    question: str
    answer: str
    implicature: str | None


@dataclass(frozen=True)
class Dialogue:
    dialog_id: str
    rounds: tuple[Round, ...]
    questions: tuple[Question, ...]
    implicature: str | None  # the type a per-type test file (or `test_condition`) is about


def read_dialogues(path: str | Path) -> list[Dialogue]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"GRICE data file not found: {path}")
    try:
        with path.open(encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"malformed JSON: {e.msg} (column {e.colno})", line=e.lineno) from None
    except UnicodeDecodeError as e:
        raise DataFormatError(path, f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    dialogs = _get(_get(doc, "data", path, "top level", dict), "dialogs", path, "data", list)
    file_condition = _CONDITION_IN_NAME.search(path.name)
    default_type = TEST_CONDITIONS[file_condition.group(1)] if file_condition else None
    return [_parse_dialogue(raw, i, path, default_type) for i, raw in enumerate(dialogs)]


def _parse_dialogue(raw, position: int, path: Path, default_type: str | None) -> Dialogue:
    where = f"dialogs[{position}]"
    if not isinstance(raw, dict):
        raise DataFormatError(path, f"expected an object, got {type(raw).__name__}", where=where)
    dialog_id = str(_get(raw, "dialog_id", path, where, (int, str)))
    where = f"dialog_id {dialog_id}"
    condition = raw.get("test_condition")
    dialog_type = TEST_CONDITIONS.get(condition, default_type) if condition is not None else default_type
    rounds = tuple(
        _parse_round(r, path, f"{where}, round {k}")
        for k, r in enumerate(_get(raw, "dialog", path, where, list))
    )
    if not rounds:
        raise DataFormatError(path, "dialogue has no rounds ('dialog' is empty)", where=where)
    questions = tuple(
        Question(
            question=_get(q, "question", path, f"{where}, question {k}", str),
            answer=_get(q, "answer", path, f"{where}, question {k}", str),
            implicature=_implicature(q, path, f"{where}, question {k}"),
        )
        for k, q in enumerate(_get(raw, "question", path, where, list))
    )
    return Dialogue(dialog_id, rounds, questions, dialog_type)


def _parse_round(raw, path: Path, where: str) -> Round:
    if not isinstance(raw, dict):
        raise DataFormatError(path, f"expected an object, got {type(raw).__name__}", where=where)
    options = _get(raw, "option", path, where, list)
    if len(options) != NUM_OPTIONS or not all(isinstance(o, str) for o in options):
        raise DataFormatError(
            path, f"field 'option' must hold {NUM_OPTIONS} strings, got {options!r}", where=where
        )
    index = _get(raw, "answer_index", path, where, int)
    if isinstance(index, bool) or not 0 <= index < len(options):
        raise DataFormatError(
            path, f"field 'answer_index' is {index}, outside 0..{len(options) - 1}", where=where
        )
    return Round(
        question=_get(raw, "question", path, where, str),
        answer=_get(raw, "answer", path, where, str),
        explicit=_get(raw, "explict_answer", path, where, str),
        options=tuple(options),
        answer_index=index,
        implicature=_implicature(raw, path, where),
    )


def _implicature(raw: dict, path: Path, where: str) -> str | None:
    value = raw.get("implicature")
    if value is not None and value not in IMPLICATURE_TYPES:
        raise DataFormatError(
            path, f"field 'implicature' is {value!r}, not one of {IMPLICATURE_TYPES}", where=where
        )
    return value


def _get(obj, key: str, path: Path, where: str, kind):
    if not isinstance(obj, dict):
        raise DataFormatError(
            path, f"expected an object holding '{key}', got {type(obj).__name__}", where=where
        )
    if key not in obj:
        raise DataFormatError(path, f"missing key '{key}'", where=where)
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise DataFormatError(
            path, f"field '{key}' should be {names}, got {type(value).__name__}", where=where
        )
    return value
