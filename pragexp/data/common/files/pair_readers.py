"""Labelled text pairs from released files (JSON lines or TSV with a header) or from the hub.

A `PairSchema` says which fields hold the two texts and the label (a few accepted names each, e.g.
MNLI's `sentence1` or the hub's `premise`) and how a label value becomes a class index. Rows
without a gold label (MNLI's `-`, the hub's -1) are skipped and counted. Anything else that is
wrong (undecodable bytes, a line that is not JSON, a missing field, an unknown label) stops the
read with a `DataFormatError` naming the file, the line and the field: a loader that quietly drops
malformed rows would train on less data than the user thinks.

TSV files are split on tabs with no quote handling (MultiNLI and GLUE release their TSV files
unquoted, and their sentences contain stray `"`); a row may be short of trailing columns it does
not need (the MultiNLI .txt leaves empty annotator columns off), never longer than the header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl, iter_lines
from pragexp.utils.errors import DataFormatError

TSV_SUFFIXES = (".tsv", ".txt")


@dataclass(frozen=True)
class PairSchema:
    name: str  # the data set's name, for messages
    first: tuple[str, ...]  # accepted field names of the first text, preferred first
    second: tuple[str, ...]
    label: tuple[str, ...]
    parse_label: Callable[[object], int | None]  # class index; None = no gold label; ValueError = unknown
    missing_label_hint: str = ""  # appended to the error for a missing label field
    prompt_names: tuple[str, str] = ("first", "second")  # the two texts' names in prompt templates

    def fields(self) -> tuple[tuple[str, ...], ...]:
        return self.first, self.second, self.label


@dataclass(frozen=True)
class PairRow:
    first: str
    second: str
    line: int  # 1-based line in the file (the row index for hub data)


@dataclass
class PairReadReport:
    source: str
    rows_read: int = 0
    no_gold_label: int = 0

    def as_dict(self, kept: int) -> dict:
        return {
            "source": self.source,
            "rows_read": self.rows_read,
            "no_gold_label": self.no_gold_label,
            "kept": kept,
        }


def _pick(record: Mapping, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in record), None)


def _example(record: Mapping, schema: PairSchema, source, line: int) -> tuple[PairRow, int | None]:
    texts = []
    for names in (schema.first, schema.second):
        name = _pick(record, names)
        if name is None:
            raise DataFormatError(source, "missing field", line=line, where=f"field {names[0]!r}")
        value = record[name]
        if not isinstance(value, str):
            raise DataFormatError(
                source, f"expected text, found {type(value).__name__}", line=line, where=f"field {name!r}"
            )
        texts.append(value.strip())
    name = _pick(record, schema.label)
    if name is None:
        message = "missing field" + (f"; {schema.missing_label_hint}" if schema.missing_label_hint else "")
        raise DataFormatError(source, message, line=line, where=f"field {schema.label[0]!r}")
    try:
        label = schema.parse_label(record[name])
    except ValueError as err:
        raise DataFormatError(source, str(err), line=line, where=f"field {name!r}") from None
    return PairRow(texts[0], texts[1], line), label


def _tsv_records(path: Path, schema: PairSchema) -> Iterator[tuple[int, Mapping]]:
    lines = iter_lines(path)
    first = next(lines, None)
    if first is None:
        raise DataFormatError(path, "empty file; expected a header line", line=1)
    header_line, header_text = first
    header = [h.strip() for h in header_text.split("\t")]
    for names in schema.fields():
        if _pick(dict.fromkeys(header), names) is None:
            hint = (
                f"; {schema.missing_label_hint}"
                if names is schema.label and schema.missing_label_hint
                else ""
            )
            raise DataFormatError(
                path,
                f"missing column (found: {', '.join(header)}){hint}",
                line=header_line,
                where=f"header, field {names[0]!r}",
            )
    for number, text in lines:
        fields = text.split("\t")
        if len(fields) > len(header):
            raise DataFormatError(
                path, f"expected at most {len(header)} tab-separated fields, found {len(fields)}", line=number
            )
        yield number, dict(zip(header, fields, strict=False))


def read_pair_file(
    path, schema: PairSchema, setting: str
) -> tuple[list[tuple[PairRow, int]], PairReadReport]:
    """The labelled rows of one file, and how many rows were read and had no gold label.
    `setting` names the config key the path came from, for the file-not-found message."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{schema.name} file not found: {path} (set {setting}=/path/to/the/file)")
    records = _tsv_records(path, schema) if path.suffix.lower() in TSV_SUFFIXES else iter_jsonl(path)
    return _collect(records, schema, str(path))


def read_pair_hub(
    name: str, split: str, schema: PairSchema
) -> tuple[list[tuple[PairRow, int]], PairReadReport]:
    """One split of a hub dataset through `datasets` (class ids as the hub stores them, -1 = no label).
    Raises RuntimeError when it cannot be loaded (offline, unknown name); the caller names the files
    to set instead."""
    try:
        import datasets

        data = datasets.load_dataset(name, split=split)
    except Exception as err:  # offline, unknown name, no network: all end the same way for the user
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise RuntimeError(
            f"the hub dataset {name!r} (split {split!r}) could not be loaded "
            f"({type(err).__name__}: {first_line})"
        ) from err
    return _collect(((i, record) for i, record in enumerate(data)), schema, f"hub:{name}[{split}]")


def _collect(records, schema: PairSchema, source: str) -> tuple[list[tuple[PairRow, int]], PairReadReport]:
    report, kept = PairReadReport(source=source), []
    for line, record in records:
        report.rows_read += 1
        row, label = _example(record, schema, source, line)
        if label is None:
            report.no_gold_label += 1
        else:
            kept.append((row, label))
    return kept, report
