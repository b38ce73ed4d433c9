"""Reading released text files: UTF-8 lines, JSON lines and a whole JSON document, with errors that name the
file and the line (a BOM on the first line is allowed, blank lines are skipped)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from pragexp.utils.errors import DataFormatError


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every non-blank line, decoded as UTF-8 (a BOM is allowed)."""
    for number, raw in enumerate(Path(path).read_bytes().split(b"\n"), start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DataFormatError(
                path, f"not UTF-8 ({err.reason} at byte {err.start})", line=number
            ) from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Mapping]]:
    """(line number, object) for every line of a JSON-lines file holding one object per line."""
    for number, text in iter_lines(path):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataFormatError(
                path, f"not valid JSON ({err.msg} at column {err.colno})", line=number
            ) from None
        if not isinstance(record, dict):
            raise DataFormatError(
                path, f"expected one JSON object per line, found {type(record).__name__}", line=number
            )
        yield number, record


def read_json(path: Path, dataset: str, hint: str):
    """A release's JSON document, or an error naming the file (missing: `hint` says what data.path should be;
    not JSON: the line)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{dataset} file not found: {path} ({hint})")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DataFormatError(path, f"not JSON ({err.msg})", line=err.lineno) from None
