"""Reading MultiPragEval's `test_suite.csv` as released.

Columns `id,type,english,german,korean,chinese,answer`; records end with CRLF, line breaks inside the quoted
language cells are LF, the file has no final newline (Python's csv reader with `newline=""` keeps a cell's LF
as they are). A language cell is the whole prompt: scenario, the utterance, an instruction line (irregular:
some end with ':', one row has none), then the options `(A)` .. `(E)`, one per line, (E) "none of the above".
The cell is kept byte for byte (leading and trailing spaces, a final newline, a stray sentence after (E)): it
is what the model reads. Its options are read from it only to check that there are five, lettered A-E in
order, and to name them in predictions. The gold letter (`answer`, A-E) is shared by the four languages.

A row that breaks this (a missing column, an id that is not a whole number, an unknown type, a gold letter
outside A-E, a cell whose options are not five) is a `DataFormatError` naming the file, the row (its line in
the file and its id) and the field.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from pragexp.utils.errors import DataFormatError

FILE = "test_suite.csv"
LANGUAGES = ("english", "german", "korean", "chinese")
TYPES = ("quantity", "quality", "relation", "manner", "literal")  # the four maxims, then the control
MAXIMS = TYPES[:4]
LETTERS = ("A", "B", "C", "D", "E")
_OPTION = re.compile(r"^\s*\(([A-Z])\)\s?(.*?)\s*$")


@dataclass(frozen=True)
class Unit:
    """One row in one language: a test unit (the languages are adaptations, not translations)."""

    row_id: int
    type: str
    language: str
    prompt: str  # the cell as released
    options: tuple[str, ...]  # the option lines' text after "(A) ", .. "(E) ", stripped
    answer: str  # the gold letter

    @property
    def true_index(self) -> int:
        return LETTERS.index(self.answer)


def read_units(path, languages=LANGUAGES) -> list[Unit]:
    """Every unit of the file in the given languages, by row then language."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"MultiPragEval file not found: {path} (data.path: the folder or {FILE} itself)"
        )
    unknown = [lang for lang in languages if lang not in LANGUAGES]
    if unknown:
        raise ValueError(f"data.languages: {unknown} are not among {', '.join(LANGUAGES)}")
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("id", "type", "answer", *languages) if c not in (reader.fieldnames or [])]
        if missing:
            raise DataFormatError(path, f"no column {missing} (found {reader.fieldnames})", line=1)
        units = []
        for record in reader:
            line = reader.line_num  # the record's last line: a cell holds line breaks
            units.extend(_units(record, languages, path, line))
    return units


def _units(record: dict, languages, path: Path, line: int) -> list[Unit]:
    def fail(field: str, message: str):
        raise DataFormatError(path, message, line=line, where=f"row id {record.get('id')!r}, field {field!r}")

    row_id = (record.get("id") or "").strip()
    if not row_id.isdigit():
        fail("id", f"expected a whole number, found {row_id!r}")
    kind = (record.get("type") or "").strip().lower()
    if kind not in TYPES:
        fail("type", f"expected one of {', '.join(TYPES)}, found {record.get('type')!r}")
    answer = (record.get("answer") or "").strip()
    if answer not in LETTERS:
        fail("answer", f"expected a gold letter A-E, found {record.get('answer')!r}")
    units = []
    for language in languages:
        cell = record.get(language)
        if not cell or not cell.strip():
            fail(language, "empty")
        options = _options(cell)
        letters = tuple(letter for letter, _ in options)
        if letters != LETTERS:
            fail(language, f"expected five options (A) to (E), one per line, found {list(letters) or 'none'}")
        units.append(Unit(int(row_id), kind, language, cell, tuple(t for _, t in options), answer))
    return units


def _options(cell: str) -> list[tuple[str, str]]:
    """The option lines `(X) text` of a cell, in order."""
    found = (_OPTION.match(line) for line in cell.split("\n"))
    return [(m.group(1), m.group(2)) for m in found if m]
