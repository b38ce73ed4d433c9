"""Circa (Louis, Roth and Radlinski, EMNLP 2020): reading the released data.

Reads the released `circa-data.tsv` (columns id, context, question-X, canquestion-X, answer-Y,
judgements, goldstandard1, goldstandard2) as it is, or the hub dataset through `datasets`.

- Labels: `relaxed` = goldstandard2, 4 classes; `strict` = goldstandard1, 6 classes. Rows without a
  majority label (empty, `NA`, `nan`), `Other` and `I am not sure how X will interpret Y's answer`
  (curly or straight apostrophe) are dropped and counted (`select_labelled`).
- Rows that cannot be read (undecodable bytes, a wrong number of fields, a non-numeric id, a label
  value that is not one of Circa's) are skipped and counted with their line numbers, never fatal.
- Rows whose fields read fine but whose text is odd (a JSON fragment in the answer, an empty text)
  are kept, as the paper kept them (their labels are valid), and counted as `odd_text` with their
  line numbers.
- A missing file or column is an error naming the file, line and field.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.utils.errors import DataFormatError

COLUMNS = (
    "id",
    "context",
    "question-X",
    "canquestion-X",
    "answer-Y",
    "judgements",
    "goldstandard1",
    "goldstandard2",
)
TEXT_COLUMNS = ("context", "question-X", "answer-Y")
LABEL_COLUMNS = {"strict": "goldstandard1", "relaxed": "goldstandard2"}

YES, NO = "Yes", "No"
PROBABLY_YES, PROBABLY_NO = "Probably yes / sometimes yes", "Probably no"
CONDITIONAL = "Yes, subject to some conditions"
MIDDLE = "In the middle, neither yes nor no"
OTHER = "Other"
NOT_SURE = "I am not sure how X will interpret Y's answer"  # the release spells it with U+2019

LABELS = {
    "relaxed": (YES, NO, CONDITIONAL, MIDDLE),
    "strict": (YES, NO, PROBABLY_YES, CONDITIONAL, PROBABLY_NO, MIDDLE),
}
LABEL_SLUGS = {
    YES: "yes",
    NO: "no",
    PROBABLY_YES: "probably_yes",
    PROBABLY_NO: "probably_no",
    CONDITIONAL: "conditional",
    MIDDLE: "middle",
}
MISSING_VALUES = ("", "na", "nan", "none", "null")
DROP_NO_LABEL, DROP_OTHER, DROP_NOT_SURE = "no majority label", "Other", "I am not sure"
KNOWN_LABELS = {*LABEL_SLUGS, OTHER, NOT_SURE}
_JSON_FRAGMENT = re.compile(r'[{}]|"\s*:')


def normalize_label(value: str) -> str | None:
    """The canonical label name, or None for a missing label; unknown values are returned as they are."""
    value = value.strip().replace("\u2019", "'").replace("\u2018", "'")
    if value.lower() in MISSING_VALUES:
        return None
    return value


@dataclass(frozen=True)
class CircaRow:
    id: str
    context: str
    question: str
    answer: str
    strict: str | None  # canonical label names (None = missing)
    relaxed: str | None
    line: int = 0  # 1-based line in the file (0 for hub rows)


@dataclass
class ReadReport:
    source: str
    rows_read: int = 0
    corrupt: list[tuple[int, str]] = field(default_factory=list)  # (line, reason): skipped
    odd_text: list[tuple[int, str]] = field(default_factory=list)  # (line, reason): kept


# -- reading ------------------------------------------------------------------------------------
def _unquote(value: str) -> str:
    """Undo CSV-style quoting if a tool saved the file with it ("..." with doubled inner quotes)."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('""', '"')
    return value


def read_circa_tsv(path) -> tuple[list[CircaRow], ReadReport]:
    """Every usable row of a circa-data.tsv, and what was skipped. Raises for a missing file or column."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Circa file not found: {path} (set data.path=/path/to/circa-data.tsv)")
    raw_lines = path.read_bytes().split(b"\n")
    if raw_lines and raw_lines[-1].strip() == b"":
        raw_lines.pop()
    if not raw_lines:
        raise DataFormatError(
            path, "empty file; expected a header with the columns " + ", ".join(COLUMNS), line=1
        )
    header = raw_lines[0].decode("utf-8-sig", errors="replace").rstrip("\r").split("\t")
    header = [_unquote(h.strip()) for h in header]
    absent = [c for c in COLUMNS if c not in header]
    if absent:
        raise DataFormatError(
            path,
            f"missing column(s) {', '.join(absent)}; found: {', '.join(header)}",
            line=1,
            where=f"header, field {absent[0]!r}",
        )
    col = {name: header.index(name) for name in COLUMNS}
    report = ReadReport(source=str(path))
    rows = []
    for number, raw in enumerate(raw_lines[1:], start=2):
        if not raw.strip():
            continue
        report.rows_read += 1
        try:
            text = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as err:
            report.corrupt.append((number, f"not UTF-8 ({err.reason} at byte {err.start})"))
            continue
        fields = [_unquote(f) for f in text.split("\t")]
        if len(fields) != len(header):
            report.corrupt.append(
                (number, f"expected {len(header)} tab-separated fields, found {len(fields)}")
            )
            continue
        row = {name: fields[i].strip() for name, i in col.items()}
        if not _accept(row, number, report):
            continue
        rows.append(
            CircaRow(
                id=row["id"],
                context=row["context"],
                question=row["question-X"],
                answer=row["answer-Y"],
                strict=normalize_label(row["goldstandard1"]),
                relaxed=normalize_label(row["goldstandard2"]),
                line=number,
            )
        )
    return rows, report


def _accept(row: dict, line: int, report: ReadReport) -> bool:
    """False (and counted as corrupt) for a row that cannot be read; odd text is counted and kept."""
    problem = _unreadable(row)
    if problem:
        report.corrupt.append((line, problem))
        return False
    odd = _odd_text(row)
    if odd:
        report.odd_text.append((line, odd))
    return True


def _unreadable(row: dict) -> str | None:
    """Why a row cannot be used at all (naming the field), or None."""
    if not row["id"].isdigit():
        return f"field 'id': not a number: {row['id'][:40]!r}"
    for name in LABEL_COLUMNS.values():
        label = normalize_label(row[name])
        if label is not None and label not in KNOWN_LABELS:
            return f"field {name!r}: unknown label {row[name][:60]!r}"
    return None


def _odd_text(row: dict) -> str | None:
    """What is odd about a readable row's text (naming the field), or None."""
    for name in TEXT_COLUMNS:
        if not row[name]:
            return f"field {name!r}: empty"
    for name in ("question-X", "answer-Y"):
        if _JSON_FRAGMENT.search(row[name]):
            return f"field {name!r}: JSON fragment: {row[name][:60]!r}"
    return None


def read_circa_hub(name: str) -> tuple[list[CircaRow], ReadReport]:
    """The hub copy of Circa through `datasets` (one `train` split; labels as class ids or names)."""
    try:
        import datasets

        data = datasets.load_dataset(name, split="train")
    except Exception as err:  # offline, unknown name, no network: all end the same way for the user
        raise RuntimeError(
            f"data.path is not set and the hub dataset {name!r} could not be loaded "
            f"({type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}); "
            "set data.path=/path/to/circa-data.tsv (the released file)"
        ) from err

    def names(column):
        feature = data.features[column]
        if hasattr(feature, "int2str"):
            return lambda v: None if v is None or int(v) < 0 else feature.int2str(int(v))
        return lambda v: None if v is None else str(v)

    strict, relaxed = names("goldstandard1"), names("goldstandard2")
    report, rows = ReadReport(source=f"hub:{name}"), []
    for i, record in enumerate(data):
        report.rows_read += 1
        row = {
            "id": str(record.get("id", i)),
            "context": record["context"] or "",
            "question-X": record["question-X"] or "",
            "answer-Y": record["answer-Y"] or "",
            "goldstandard1": strict(record["goldstandard1"]) or "",
            "goldstandard2": relaxed(record["goldstandard2"]) or "",
        }
        row = {k: str(v).strip() for k, v in row.items()}
        if not _accept(row, i, report):
            continue
        rows.append(
            CircaRow(
                row["id"],
                row["context"],
                row["question-X"],
                row["answer-Y"],
                normalize_label(row["goldstandard1"]),
                normalize_label(row["goldstandard2"]),
            )
        )
    return rows, report


def select_labelled(rows: list[CircaRow], labels: str) -> tuple[list[tuple[CircaRow, int]], Counter]:
    """The rows with a usable label in the `labels` setting, with the label's index, and the drop counts."""
    if labels not in LABELS:
        raise ValueError(f"data.labels must be 'relaxed' (4 classes) or 'strict' (6 classes), got {labels!r}")
    index = {name: i for i, name in enumerate(LABELS[labels])}
    kept, dropped = [], Counter()
    for row in rows:
        label = getattr(row, labels)
        if label is None:
            dropped[DROP_NO_LABEL] += 1
        elif label == OTHER:
            dropped[DROP_OTHER] += 1
        elif label == NOT_SURE:
            dropped[DROP_NOT_SURE] += 1
        elif label in index:
            kept.append((row, index[label]))
        else:  # a strict-only label in the relaxed column: not Circa's release
            dropped[f"not a {labels} label: {label}"] += 1
    return kept, dropped
