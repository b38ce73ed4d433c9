"""The files' format: a header line, then records, each framed and checksummed so that a reader can tell a
whole record from a torn or damaged one, and find the next whole record after damage.

    file    := FILE_MAGIC record*
    record  := RECORD_MAGIC (4 bytes) kind (u8) key_length (u32) value_length (u32) crc (u32) key value
    crc     := CRC-32 of the 13 bytes before it, the key and the value

Integers are little-endian; the key is UTF-8 (the SHA-256 hex of what decides the answer), the value the
answer's JSON in UTF-8. `RECORD_MAGIC` starts with the byte 0xFF, which UTF-8 never holds: no key or value can
hold a record start, so after a damaged record a reader looks for the next one from the byte after its start.
A `CLOSE` record (empty key and value) ends a file whose writer closed it: nothing follows it.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import NamedTuple

FILE_MAGIC = b"pragexp response cache, format 1\n"
RECORD_MAGIC = b"\xffRC1"
ANSWER, CLOSE = 0, 1
_HEAD = struct.Struct("<4sBII")  # magic, kind, key length, value length
_CRC = struct.Struct("<I")
_unpack_head, _unpack_crc = _HEAD.unpack_from, _CRC.unpack_from
HEADER = _HEAD.size + _CRC.size
MAX_KEY = 1 << 12  # a record claiming more is damaged (a key is a 64-character digest)
MAX_VALUE = 1 << 28


def encode(key: str, value: bytes, kind: int = ANSWER) -> bytes:
    """One record."""
    k = key.encode("utf-8")
    head = _HEAD.pack(RECORD_MAGIC, kind, len(k), len(value))
    return head + _CRC.pack(zlib.crc32(value, zlib.crc32(k, zlib.crc32(head)))) + k + value


CLOSED = encode("", b"", CLOSE)  # the record that ends a closed file


def crc_of(record: bytes) -> int:
    return _CRC.unpack_from(record, _HEAD.size)[0]


class Record(NamedTuple):
    """A whole record found in a file: where it starts (in the file), its length, its checksum, and its value
    where it is short (`inline`: kept in memory rather than read again)."""

    kind: int
    key: str
    offset: int
    length: int
    crc: int
    value: bytes | None = None


@dataclass
class Scan:
    """What `scan` found in a stretch of a file. `end`: where the bytes it could not read yet begin (an
    unfinished or torn record at the stretch's end: `tail` bytes); `damaged`: (offset, length) of bytes
    between whole records that are no record (skipped); `closed_at`: where a CLOSE record ends, if one was
    found."""

    records: list[Record] = field(default_factory=list)
    damaged: list[tuple[int, int]] = field(default_factory=list)
    end: int = 0
    tail: int = 0
    closed_at: int | None = None


def record_at(buf: bytes, view: memoryview, at: int, base: int = 0, inline: int = -1) -> Record | None:
    """The whole record at `buf[at:]` (`view`: a memoryview of buf), its offset `base + at`, its value kept if
    at most `inline` bytes; None where buf holds no whole record there (damaged, or cut short)."""
    if len(buf) - at < HEADER:
        return None
    magic, kind, key_length, value_length = _unpack_head(buf, at)
    start = at + HEADER
    end = start + key_length + value_length
    if (
        magic != RECORD_MAGIC
        or kind > CLOSE
        or key_length > MAX_KEY
        or value_length > MAX_VALUE
        or end > len(buf)
    ):
        return None
    (crc,) = _unpack_crc(buf, at + _HEAD.size)
    if zlib.crc32(view[start:end], zlib.crc32(view[at : at + _HEAD.size])) != crc:
        return None
    value = buf[start + key_length : end] if value_length <= inline else None
    return Record(
        kind, buf[start : start + key_length].decode("utf-8", "replace"), base + at, end - at, crc, value
    )


def scan(buf: bytes, base: int, inline: int = -1) -> Scan:
    """Every whole record of `buf` (the bytes of a file from offset `base` on, at a record's start), skipping
    damaged bytes up to the next whole record; values of at most `inline` bytes kept. Offsets in the result
    are the file's."""
    out, at, view = Scan(), 0, memoryview(buf)
    while at < len(buf):
        record = record_at(buf, view, at, base, inline)
        if record is not None:
            out.records.append(record)
            at += record.length
            if record.kind == CLOSE:
                out.closed_at = base + at
                break
            continue
        following = _next_record(buf, view, at + 1)
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


def _next_record(buf: bytes, view: memoryview, start: int) -> int | None:
    """The offset of the first whole record at or after `start`, or None."""
    at = buf.find(RECORD_MAGIC, start)
    while at != -1 and record_at(buf, view, at) is None:
        at = buf.find(RECORD_MAGIC, at + 1)
    return None if at == -1 else at


def value_of(blob: bytes, key: str, crc: int) -> bytes | None:
    """The value of the record `blob` (read again from its file) if it is still the whole record of `key` with
    checksum `crc`, else None (the file changed under the reader)."""
    k = key.encode("utf-8")
    start = HEADER + len(k)
    if len(blob) < start or blob[:4] != RECORD_MAGIC or blob[HEADER:start] != k:
        return None
    _, kind, key_length, value_length = _HEAD.unpack_from(blob)
    if kind != ANSWER or key_length != len(k) or start + value_length != len(blob):
        return None
    if (
        _CRC.unpack_from(blob, _HEAD.size)[0] != crc
        or zlib.crc32(blob[HEADER:], zlib.crc32(blob[: _HEAD.size])) != crc
    ):
        return None
    return blob[start:]


def answer_in(blob: bytes, key: bytes) -> bytes | None:
    """The value of `blob` (read again from its file) if it is the whole answer record of `key`; None if it is
    a whole record of another key; raises ValueError if it is no whole record (the file changed)."""
    if len(blob) < HEADER:
        raise ValueError("shorter than a record's header")
    magic, kind, key_length, value_length = _unpack_head(blob, 0)
    if magic != RECORD_MAGIC or kind > CLOSE or HEADER + key_length + value_length != len(blob):
        raise ValueError("no record's header")
    view = memoryview(blob)
    if zlib.crc32(view[HEADER:], zlib.crc32(view[: _HEAD.size])) != _unpack_crc(blob, _HEAD.size)[0]:
        raise ValueError("its checksum does not match")
    if kind != ANSWER or view[HEADER : HEADER + key_length] != key:
        return None
    return blob[HEADER + key_length :]
