"""The files' format: a header line, then records, each framed and checksummed so that a reader can tell a whole
record from a torn or damaged one, and find the next whole record after damage.

    file    := FILE_MAGIC record*
    record  := RECORD_MAGIC (4 bytes) kind (u8) key_length (u32) value_length (u32) crc (u32) key value
    crc     := CRC-32 of the 13 bytes before it, the key and the value

Integers are little-endian; the key is UTF-8 (the SHA-256 hex of what decides the answer), the value the answer's
JSON in UTF-8. `RECORD_MAGIC` starts with the byte 0xFF, which UTF-8 never holds: no key or value can hold a record
start, so after a damaged record a reader looks for the next one from the byte after its start. A `CLOSE` record
(empty key and value) ends a file whose writer closed it: nothing follows it.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

FILE_MAGIC = b"pragexp response cache, format 1\n"
RECORD_MAGIC = b"\xffRC1"
ANSWER, CLOSE = 0, 1
_HEAD = struct.Struct("<4sBII")  # magic, kind, key length, value length
_CRC = struct.Struct("<I")
HEADER = _HEAD.size + _CRC.size
MAX_KEY = 1 << 12  # a record claiming more is damaged (a key is a 64-character digest)
MAX_VALUE = 1 << 28


def encode(key: str, value: bytes, kind: int = ANSWER) -> bytes:
    """One record."""
    k = key.encode("utf-8")
    head = _HEAD.pack(RECORD_MAGIC, kind, len(k), len(value))
    return head + _CRC.pack(zlib.crc32(value, zlib.crc32(k, zlib.crc32(head)))) + k + value


def crc_of(record: bytes) -> int:
    return _CRC.unpack_from(record, _HEAD.size)[0]


@dataclass(frozen=True)
class Record:
    """A whole record found in a file: where it starts (in the file), its length, its checksum."""

    kind: int
    key: str
    offset: int
    length: int
    crc: int


@dataclass
class Scan:
    """What `scan` found in a stretch of a file. `end`: where the bytes it could not read yet begin (an
    unfinished or torn record at the stretch's end: `tail` bytes); `damaged`: (offset, length) of bytes between
    whole records that are no record (skipped); `closed`: a CLOSE record was found (where it ends: `closed_at`)."""

    records: list[Record] = field(default_factory=list)
    damaged: list[tuple[int, int]] = field(default_factory=list)
    end: int = 0
    tail: int = 0
    closed_at: int | None = None


def parse(buf, at: int) -> tuple[str, Record | None]:
    """The record at `buf[at:]`: ("ok", record with offsets relative to buf), ("short", None) where buf ends
    before the record does, ("bad", None) where the bytes there are no whole record."""
    if len(buf) - at < HEADER:
        return ("short", None) if RECORD_MAGIC.startswith(bytes(buf[at : at + 4])) else ("bad", None)
    magic, kind, key_length, value_length = _HEAD.unpack_from(buf, at)
    if (
        magic != RECORD_MAGIC
        or kind not in (ANSWER, CLOSE)
        or key_length > MAX_KEY
        or value_length > MAX_VALUE
    ):
        return "bad", None
    end = at + HEADER + key_length + value_length
    if end > len(buf):
        return "short", None
    (crc,) = _CRC.unpack_from(buf, at + _HEAD.size)
    body = memoryview(buf)[at + HEADER : end]
    if zlib.crc32(body, zlib.crc32(memoryview(buf)[at : at + _HEAD.size])) != crc:
        return "bad", None
    key = bytes(body[:key_length]).decode("utf-8", errors="replace")
    return "ok", Record(kind, key, at, end - at, crc)


def scan(buf: bytes, base: int) -> Scan:
    """Every whole record of `buf` (the bytes of a file from offset `base` on, at a record's start), skipping
    damaged bytes up to the next whole record. Offsets in the result are the file's."""
    out, at = Scan(), 0
    while at < len(buf):
        status, record = parse(buf, at)
        if status == "ok":
            out.records.append(Record(record.kind, record.key, base + at, record.length, record.crc))
            at += record.length
            if record.kind == CLOSE:
                out.closed_at = base + at
                break
            continue
        following = _next_record(buf, at + 1)
        if following is None:  # nothing whole after it: a tail, torn or still being written
            break
        out.damaged.append((base + at, following - at))
        at = following
    out.end = base + at
    out.tail = len(buf) - at
    if out.closed_at is not None and out.tail:  # bytes after a CLOSE record: never a writer's
        out.damaged.append((out.end, out.tail))
        out.tail = 0
        out.end = base + len(buf)
    return out


def _next_record(buf, start: int) -> int | None:
    """The offset of the first whole record at or after `start`, or None."""
    at = buf.find(RECORD_MAGIC, start)
    while at != -1:
        if parse(buf, at)[0] == "ok":
            return at
        at = buf.find(RECORD_MAGIC, at + 1)
    return None


def value_of(blob: bytes, key: str, crc: int) -> bytes | None:
    """The value of the record `blob` (read again from its file) if it is still the whole record of `key` with
    checksum `crc`, else None (the file changed under the reader)."""
    status, record = parse(blob, 0)
    if status != "ok" or record.length != len(blob) or record.key != key or record.crc != crc:
        return None
    return blob[HEADER + len(key.encode("utf-8")) :]
