"""On-disk indexes: one per large finished file of a cache folder (`Segment`), so that a process looks keys up
without holding in memory an entry for every answer the folder ever stored.

Why this design. A folder shared by a lab holds millions of answers; an index of them all in every process's
memory (a dict of key -> place) costs each process hundreds of MiB and a scan of every file before its first
answer. Most of a folder is finished files (packs, and the files of jobs that ended), which never change: each
gets an immutable index beside it, `<file>.idx`, written once (by `compact` for its pack, or by the first
reader that meets a finished file of at least MIN_SIZE bytes) to a temp file and renamed, and memory-mapped by
every reader, which keeps in memory only what the files still being written hold. The index is a sorted array
of 64-bit hashes of the keys (BLAKE2b) with each record's offset and length: a lookup is a binary search
(`numpy.searchsorted`, a batch of keys at once), then the record is read from the data file and checked as any
answer is (its CRC-32 and its whole key), so neither a hash collision nor a stale index can give a wrong
answer. A hash table file would answer in one probe rather than ~20, but a sorted array is simpler to write,
to check and to merge, and a batch lookup costs a few microseconds a key either way; SQLite would add a second
format and its page cache to every process.

    file    := MAGIC meta_length (u32) meta (JSON) padding (to 8 bytes) hashes (u64 x n) offsets (u64 x n)
               lengths (u32 x n) crc (u32: CRC-32 of everything before it)

`meta` names the data file, the stretch indexed (`size`: from its start), the SHA-256 of that stretch's first
and last EDGE bytes, whether the stretch ends with a CLOSE record, and the damaged stretches found when it was
built (named again by each reader). An index that is damaged (its CRC, its length, its header) or stale (its
data file is shorter, or its edges differ) raises `IndexProblem`: the reader names it and reads the data file
instead. A data file longer than its index's stretch (another host's idle file whose writer woke up) is read
on from there as any file is.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import mmap
import os
import struct
import sys
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pragexp.generation.cache import records
from pragexp.utils.io import atomic_output

MAGIC = b"pragexp response cache index, format 1\n"
SUFFIX = ".idx"
MIN_SIZE = 1 << 20  # bytes: a finished file this large gets an index; a smaller one is read into memory
EDGE = 1 << 16  # bytes at each end of the indexed stretch whose SHA-256 the index holds
BUILD_CHUNK = 1 << 23  # bytes read at once while building an index (few records in memory at a time)
_U32 = struct.Struct("<I")


class IndexProblem(Exception):
    """An index that cannot be trusted: damaged, or not of the data file as it is now."""


def key_digests(keys) -> list[bytes]:
    """The 64-bit hash of each key (its UTF-8 bytes), as 8 bytes (little-endian)."""
    return [hashlib.blake2b(k.encode("utf-8"), digest_size=8).digest() for k in keys]


def key_hashes(keys) -> np.ndarray:
    """The 64-bit hash of each key, as the indexes sort them."""
    return np.frombuffer(b"".join(key_digests(keys)), dtype="<u8")


def edges(path: Path, size: int) -> tuple[str, str]:
    """SHA-256 of the first and of the last EDGE bytes of `path`'s first `size` bytes."""
    with open(path, "rb") as f:
        head = os.pread(f.fileno(), min(EDGE, size), 0)
        tail = os.pread(f.fileno(), min(EDGE, size), max(0, size - EDGE))
    return hashlib.sha256(head).hexdigest(), hashlib.sha256(tail).hexdigest()


@dataclass
class Segment:
    """A file's index: `covered` bytes of file `name`, whose answers are at `offsets` (`lengths` bytes each)
    under the key hashes `hashes` (sorted)."""

    name: str
    covered: int
    closed: bool
    hashes: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    damaged: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self):  # the arrays as sequences of Python ints, for a search in Python
        self._hashes, self._offsets, self._lengths = (
            memoryview(a).cast("B").cast(code) if len(a) and sys.byteorder == "little" else a.tolist()
            for a, code in ((self.hashes, "Q"), (self.offsets, "Q"), (self.lengths, "I"))
        )

    def holds_one(self, wanted: int) -> bool:
        at = bisect.bisect_left(self._hashes, wanted)
        return at < len(self._hashes) and self._hashes[at] == wanted

    def find_one(self, wanted: int) -> list[tuple[int, int]]:
        """(offset, length) of every record whose key hash is `wanted`."""
        at, out = bisect.bisect_left(self._hashes, wanted), []
        while at < len(self._hashes) and self._hashes[at] == wanted:
            out.append((self._offsets[at], self._lengths[at]))
            at += 1
        return out

    def holds(self, wanted: np.ndarray) -> np.ndarray:
        """Whether each hash of `wanted` is in the index."""
        at = np.searchsorted(self.hashes, wanted, "left")
        inside = at < len(self.hashes)
        out = np.zeros(len(wanted), dtype=bool)
        out[inside] = self.hashes[at[inside]] == wanted[inside]
        return out

    def find(self, wanted: np.ndarray) -> list[tuple[int, int, int]]:
        """(position in `wanted`, offset, length) of every record whose key hash is one of `wanted`."""
        lo = np.searchsorted(self.hashes, wanted, "left")
        hi = np.searchsorted(self.hashes, wanted, "right")
        count = hi - lo
        one = np.nonzero(count == 1)[0]
        at = lo[one]
        out = list(zip(one.tolist(), self.offsets[at].tolist(), self.lengths[at].tolist(), strict=True))
        for i in np.nonzero(count > 1)[0].tolist():  # a key stored twice in one file, or two keys' hashes
            out += [(i, int(self.offsets[j]), int(self.lengths[j])) for j in range(lo[i], hi[i])]
        return out


def write(folder: Path, segment: Segment) -> None:
    """Write `segment` as `<folder>/<its file>.idx`, whole or not at all."""
    path = Path(folder) / segment.name
    head, tail = edges(path, segment.covered)
    meta = {
        "file": segment.name,
        "size": segment.covered,
        "head": head,
        "tail": tail,
        "closed": segment.closed,
        "records": len(segment.hashes),
        "damaged": segment.damaged,
    }
    blob = json.dumps(meta).encode("utf-8")
    start = len(MAGIC) + _U32.size + len(blob)
    body = [MAGIC, _U32.pack(len(blob)), blob, b"\0" * (-start % 8)]
    body += [a.astype(t).tobytes() for a, t in ((segment.hashes, "<u8"), (segment.offsets, "<u8"))]
    body.append(segment.lengths.astype("<u4").tobytes())
    crc = 0
    for part in body:
        crc = zlib.crc32(part, crc)
    with atomic_output(path.with_name(path.name + SUFFIX), binary=True) as f:
        for part in body:
            f.write(part)
        f.write(_U32.pack(crc))


def load(folder: Path, name: str) -> Segment | None:
    """The index of file `name` (memory-mapped), None where it has none; raises IndexProblem where it has one
    that cannot be trusted."""
    path = Path(folder) / (name + SUFFIX)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if os.fstat(fd).st_size < len(MAGIC) + 2 * _U32.size:
            raise IndexProblem("shorter than its header")
        buf = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    meta, arrays_at = _header(buf, name)
    n = meta["records"]
    end = arrays_at + 20 * n
    if len(buf) != end + _U32.size:
        raise IndexProblem(f"{len(buf)} bytes where its header says {end + _U32.size}")
    if zlib.crc32(memoryview(buf)[:end]) != _U32.unpack_from(buf, end)[0]:
        raise IndexProblem("its checksum does not match its bytes")
    _check_data(Path(folder) / name, meta)
    return Segment(
        name,
        meta["size"],
        meta["closed"],
        np.frombuffer(buf, "<u8", n, arrays_at),
        np.frombuffer(buf, "<u8", n, arrays_at + 8 * n),
        np.frombuffer(buf, "<u4", n, arrays_at + 16 * n),
        [tuple(d) for d in meta["damaged"]],
    )


def _header(buf, name: str) -> tuple[dict, int]:
    if buf[: len(MAGIC)] != MAGIC:
        raise IndexProblem("not an index of this format")
    (length,) = _U32.unpack_from(buf, len(MAGIC))
    start = len(MAGIC) + _U32.size
    try:
        meta = json.loads(bytes(buf[start : start + length]))
        fields = meta["file"], meta["size"], meta["records"], meta["closed"], meta["damaged"]
        whole = [int, int, bool, list] == [type(f) for f in fields[1:]] and min(fields[1:3]) >= 0
        damaged = all(len(d) == 2 and all(type(x) is int for x in d) for d in fields[4])
    except (ValueError, KeyError, TypeError) as error:
        raise IndexProblem(f"its header is damaged ({error})") from None
    if not (whole and damaged):
        raise IndexProblem("its header is damaged (a field of the wrong type)")
    if fields[0] != name:
        raise IndexProblem(f"it indexes {fields[0]!r}")
    return meta, start + length + (-(start + length) % 8)


def _check_data(path: Path, meta: dict) -> None:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise IndexProblem("its data file is gone") from None
    if size < meta["size"]:
        raise IndexProblem(f"its data file holds {size} bytes, fewer than the {meta['size']} it indexes")
    if list(edges(path, meta["size"])) != [meta.get("head"), meta.get("tail")]:
        raise IndexProblem("its data file's bytes are not those it indexed (stale)")


def build(folder: Path, name: str) -> Segment | None:
    """Index the file `name` of `folder` (a finished one: what it holds now is all it holds), reading it a
    chunk at a time; None where it is no file of this format. Damaged stretches and a torn tail are noted in
    the index."""
    path = Path(folder) / name
    hashes, offsets, lengths, damaged = bytearray(), array("Q"), array("I"), []
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if f.read(len(records.FILE_MAGIC)) != records.FILE_MAGIC:
            return None
        at, chunk, closed = len(records.FILE_MAGIC), BUILD_CHUNK, False
        while at < size:
            blob = os.pread(f.fileno(), min(chunk, size - at), at)
            found = records.scan(blob, at)
            for r in found.records:
                if r.kind == records.ANSWER:
                    hashes += hashlib.blake2b(r.key.encode("utf-8"), digest_size=8).digest()
                    offsets.append(r.offset)
                    lengths.append(r.length)
            damaged += found.damaged
            last = at + len(blob) >= size
            if found.closed_at is not None or last:
                closed = found.closed_at is not None
                if closed and not last:  # bytes after the CLOSE record: never a writer's
                    damaged.append((at + len(blob), size - at - len(blob)))
                elif not closed and found.tail:
                    damaged.append((found.end, found.tail))
                break
            chunk = BUILD_CHUNK if found.end > at else 2 * chunk  # a record longer than the chunk: read more
            at = found.end
    keys = np.frombuffer(bytes(hashes), dtype="<u8")
    order = np.argsort(keys, kind="stable")
    return Segment(
        name,
        size,
        closed,
        keys[order],
        np.asarray(offsets, dtype="<u8")[order],
        np.asarray(lengths, dtype="<u4")[order],
        [(int(o), int(n)) for o, n in damaged],
    )
