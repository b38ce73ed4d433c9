"""Reading a released CSV file as it is: its bytes as UTF-8 (an error naming the line of the first byte that
is not), and its records with their first line (quoted fields may span lines), a missing column naming the
file."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from pragexp.utils.errors import DataFormatError


def decode_utf8(path: Path) -> str:
    """The file's text (a leading byte-order mark dropped); undecodable bytes are an error naming their
    line."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise DataFormatError(path, f"not UTF-8 ({err.reason} at byte {err.start})", line=line) from None


def csv_records(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line of the record, {column: value}) for every non-blank record; a short record's last fields
    are empty, a long one is an error naming its line; a missing required column is an error naming it."""
    reader = csv.reader(io.StringIO(decode_utf8(path), newline=""))
    header = next(reader, None)
    if header is None:
        raise DataFormatError(path, "empty file; expected a header", line=1)
    header = [h.strip() for h in header]
    absent = [c for c in required if c not in header]
    if absent:
        raise DataFormatError(
            path, f"missing column(s) {', '.join(absent)}", line=1, where=f"header, column {absent[0]!r}"
        )
    start = reader.line_num + 1
    for fields in reader:
        if any(f.strip() for f in fields):
            if len(fields) > len(header):
                raise DataFormatError(path, f"expected {len(header)} fields, found {len(fields)}", line=start)
            yield start, dict(zip(header, fields + [""] * (len(header) - len(fields)), strict=True))
        start = reader.line_num + 1
