"""PragmatiCQA's released files (`{train,val,test}.jsonl`, github.com/qipeng/PragmatiCQA), read as released.

One conversation per line:

    {"topic", "genre", "community",
     "qas": [{"q", "a", "a_meta": {"literal_obj": [span, ...], "pragmatic_obj": [span, ...]}, "human_eval"}]}
    span = {"text", "startKey", "endKey"}: the text a teacher selected on a Fandom page, and the UUIDs of the
    DOM elements where the selection starts and ends.

Quirks of the release, each handled and counted in the `ReadReport`:

- some spans name their keys `startId`/`endId`;
- canned literal spans ("Yes", "No", "I don't know") carry key 0: they stay gold text, but point at no
  passage (they are not evidence for retrieval);
- some keys are null, empty or not a UUID ("Background"): the text stays gold, it points at no passage;
- some span texts are scraper failures ("Cannot GET /wiki/...") or empty: dropped from the gold spans;
- `human_eval` is null or missing.

Anything else that is wrong (a line that is not JSON, a missing field, a field of the wrong type) stops
the read with a `DataFormatError` naming the file, the line and the field.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl
from pragexp.data.common.splits import SPLITS
from pragexp.utils.errors import DataFormatError

SPAN_KINDS = ("literal_obj", "pragmatic_obj")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
SCRAPER_FAILURE = "Cannot GET"
CANNED_KEY = 0  # the key of the canned literal answers ("Yes", "No", "I don't know")


@dataclass(frozen=True)
class Span:
    text: str
    start_key: str | None  # a DOM element's UUID (lower case); None when the span points at no element
    end_key: str | None
    canned: bool = False  # a canned literal answer (key 0)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k in dict.fromkeys((self.start_key, self.end_key)) if k)


@dataclass(frozen=True)
class QA:
    question: str
    answer: str
    literal: tuple[Span, ...]
    pragmatic: tuple[Span, ...]
    human_eval: tuple[int, ...] | None


@dataclass(frozen=True)
class Conversation:
    topic: str
    genre: str
    community: str
    qas: tuple[QA, ...]
    source: str  # file
    line: int


@dataclass
class ReadReport:
    """What one file held and what was done about its quirks."""

    source: str
    conversations: int = 0
    qas: int = 0
    spans: int = 0
    counts: Counter = field(default_factory=Counter)  # quirk -> spans (or QAs) it touched
    odd_keys: Counter = field(default_factory=Counter)  # key values that are not UUIDs

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "conversations": self.conversations,
            "qas": self.qas,
            "spans": self.spans,
            **{k: self.counts[k] for k in sorted(self.counts)},
            "odd_key_values": dict(self.odd_keys.most_common(10)),
        }


def _field(record: Mapping, name: str, kind: type, path, line: int, where: str = ""):
    """record[name], which must be a `kind` (str or list); otherwise an error naming file, line and field."""
    if name not in record:
        raise DataFormatError(path, "missing field", line=line, where=f"{where}field {name!r}")
    value = record[name]
    if not isinstance(value, kind):
        expected = "text" if kind is str else f"a {kind.__name__}"
        raise DataFormatError(
            path,
            f"expected {expected}, found {type(value).__name__}",
            line=line,
            where=f"{where}field {name!r}",
        )
    return value


def _key(value) -> tuple[str | None, str | None]:
    """(the element UUID or None, the quirk that leaves it None: "canned", "null" or "odd")."""
    if isinstance(value, str) and UUID.fullmatch(value.strip()):
        return value.strip().lower(), None
    if value == CANNED_KEY or value == str(CANNED_KEY):
        return None, "canned"
    return None, "null" if value is None or value == "" else "odd"


def _span(record, path, line: int, where: str, report: ReadReport) -> Span | None:
    if not isinstance(record, dict):
        raise DataFormatError(
            path, f"expected an object, found {type(record).__name__}", line=line, where=where
        )
    text = _field(record, "text", str, path, line, f"{where}, ")
    report.spans += 1
    if "startKey" in record or "endKey" in record:
        start, end = record.get("startKey"), record.get("endKey")
    elif "startId" in record or "endId" in record:
        report.counts["keys_named_startId_endId"] += 1
        start, end = record.get("startId"), record.get("endId")
    else:
        raise DataFormatError(path, "missing field", line=line, where=f"{where}, field 'startKey'")
    if text.strip().startswith(SCRAPER_FAILURE):
        report.counts["scraper_failure_spans_dropped"] += 1
        return None
    if not text.strip():
        report.counts["empty_spans_dropped"] += 1
        return None
    (start_key, start_quirk), (end_key, end_quirk) = _key(start), _key(end)
    quirks = {start_quirk, end_quirk} - {None}
    for quirk in quirks:  # counted once per span
        report.counts[f"{quirk}_key_spans"] += 1
    for value, quirk in ((start, start_quirk), (end, end_quirk)):
        if quirk == "odd":
            report.odd_keys[str(value)[:40]] += 1
    return Span(text=text, start_key=start_key, end_key=end_key, canned="canned" in quirks)


def _human_eval(qa: Mapping, path, line: int, where: str, report: ReadReport) -> tuple[int, ...] | None:
    if "human_eval" not in qa:
        report.counts["human_eval_missing"] += 1
        return None
    value = qa["human_eval"]
    if value is None:
        report.counts["human_eval_null"] += 1
        return None
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise DataFormatError(
            path,
            f"expected a list of ratings, found {value!r}",
            line=line,
            where=f"{where}field 'human_eval'",
        ) from None


def _qa(record, path, line: int, where: str, report: ReadReport) -> QA:
    if not isinstance(record, dict):
        raise DataFormatError(
            path, f"expected an object, found {type(record).__name__}", line=line, where=where
        )
    question = _field(record, "q", str, path, line, f"{where}, ")
    answer = _field(record, "a", str, path, line, f"{where}, ")
    meta = record.get("a_meta")
    if not isinstance(meta, dict):
        raise DataFormatError(path, "missing or not an object", line=line, where=f"{where}, field 'a_meta'")
    spans = {}
    for kind in SPAN_KINDS:
        items = _field(meta, kind, list, path, line, f"{where}, a_meta ")
        kept = (_span(s, path, line, f"{where}, a_meta.{kind}[{i}]", report) for i, s in enumerate(items))
        spans[kind] = tuple(s for s in kept if s is not None)
    return QA(
        question=question.strip(),
        answer=answer.strip(),
        literal=spans["literal_obj"],
        pragmatic=spans["pragmatic_obj"],
        human_eval=_human_eval(record, path, line, f"{where}, ", report),
    )


def read_conversations(path, setting: str = "data.path") -> tuple[list[Conversation], ReadReport]:
    """Every conversation of one released file, and what the read found. `setting` names the config key
    the file came from, for the file-not-found message."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"PragmatiCQA file not found: {path} (set {setting}=/path/to/the/data/folder)"
        )
    report = ReadReport(source=str(path))
    conversations = []
    for line, record in iter_jsonl(path):
        header = {name: _field(record, name, str, path, line) for name in ("topic", "genre", "community")}
        qas = tuple(
            _qa(qa, path, line, f"qas[{i}]", report)
            for i, qa in enumerate(_field(record, "qas", list, path, line))
        )
        conversations.append(
            Conversation(**{k: v.strip() for k, v in header.items()}, qas=qas, source=str(path), line=line)
        )
        report.conversations += 1
        report.qas += len(qas)
    return conversations, report


def split_files(folder, setting: str = "data.path") -> dict[str, Path]:
    """The released split files present in `folder` (train.jsonl, val.jsonl, test.jsonl)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"PragmatiCQA data folder not found: {folder} (set {setting}= to the folder holding the "
            "release's "
            "train.jsonl, val.jsonl and test.jsonl)"
        )
    return {split: folder / f"{split}.jsonl" for split in SPLITS if (folder / f"{split}.jsonl").is_file()}
