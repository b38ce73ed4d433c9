"""What a folder's files hold, as one process has read them: each key and where its record lies
(`FolderIndex`).

Each file is read from where the last read stopped (other writers append all the time), after checking whether
its writer is done (`files.writer_done`; checked first, so that what is read of a done file is all it will
ever hold). A file whose writer may still write is read up to its first stretch that is no whole record (a
record being written, or on a network file system a later page seen before an earlier one) and read on from
there later. In a done file that stretch is damage: skipped up to the next whole record, counted, and named in
the log, as is a torn tail (a writer killed in the middle of a write). A lookup reads the record again and
checks it (checksum, key): a file changed since it was read gives a miss and a warning, never a wrong answer.

A finished file of at least `segments.MIN_SIZE` bytes is not read into memory: its on-disk index (`segments`,
written by `compact` or by the first reader that meets the file) is memory-mapped, and only the files still
being written, and small ones, are held in memory (`entries`). An index found damaged or stale is named in the
log and the file is read (and indexed) again; a folder this process cannot write to keeps the index it built
in memory (20 bytes an answer). `on_disk=False` holds every file in memory (what compaction merges, and the
bench's yardstick).

Two different answers under one key (writers that disagree) are settled by their bytes: the answer whose JSON
sorts first, whatever the order the files were read in, before or after compaction, whether they lie in
indexed files or not; each such key is counted.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pragexp.generation.cache import records, segments
from pragexp.generation.cache.files import IDLE, NAME, writer_done

log = logging.getLogger(__name__)
# Where an answer is: its record's file name, offset, length and checksum; or, for a short one (at most INLINE
# bytes: a log-likelihood, a short reply), its value itself, checked when it was read (less memory than its
# place).
Entry = tuple[str, int, int, int] | bytes
INLINE = 256
CHUNK = 1 << 29  # bytes read at once from a file (more than the largest record)
FEW = 16  # keys looked up one at a time in each on-disk index; more at once with numpy


@dataclass
class _File:
    resume: int = 0  # where the next read starts
    size_seen: int = -1  # the size at the last read
    done: bool = False  # its writer is done: what is left unread is damage
    unreadable: bool = False  # not a file of this format: skipped


class FolderIndex:
    def __init__(
        self,
        folder: Path,
        idle: float = IDLE,
        select: Callable[[str], bool] | None = None,
        on_disk: bool = True,
    ):
        self.folder, self.idle, self.select, self.on_disk = Path(folder), idle, select, on_disk
        self.entries: dict[str, Entry] = {}  # the answers of the files not indexed on disk
        self.segments: dict[str, segments.Segment] = {}  # file name -> its on-disk index
        self._unwritable = False  # an index could not be written here: said once
        self._fds: dict[str, int] = {}
        self.files: dict[str, _File] = {}
        self.conflicts: set[str] = set()
        self.damaged: dict[tuple[str, int], int] = {}  # (file name, offset) -> bytes skipped there

    def names(self) -> list[str]:
        try:
            listed = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        return sorted(n for n in listed if NAME.match(n) and (self.select is None or self.select(n)))

    def refresh(self) -> None:
        """Read what the folder's files gained since the last refresh. A file gone (compacted into a pack) is
        read no more: the index is built again from what is there."""
        names = self.names()
        if set(self.files) - set(names):
            self.reset()
        for name in names:
            self._read_file(name)

    def reset(self) -> None:
        self.entries.clear()
        self.files.clear()
        self.segments.clear()
        self.close()

    def _read_file(self, name: str) -> None:
        state, path = self.files.get(name), self.folder / name
        if state is None:
            state = self.files[name] = _File()
            if self.on_disk:
                self._use_index(name, state)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return
        if state.unreadable or (size == state.size_seen and (state.done or not writer_done(path, self.idle))):
            return
        done = state.done or writer_done(
            path, self.idle
        )  # before reading: a done file holds no more than this
        try:
            with open(path, "rb") as f:
                if state.resume == 0 and not self._header(f, name, state, done):
                    state.size_seen = size
                    return
                while state.resume < size and self._read_stretch(f, name, state, size, done):
                    pass
        except FileNotFoundError:
            return
        state.size_seen = size

    def _use_index(self, name: str, state: _File) -> None:
        """Take the file `name` from its on-disk index where it has one (or, finished and large, gets one
        now); what lies beyond the stretch indexed is read as any file is."""
        try:
            segment = segments.load(self.folder, name)
        except (segments.IndexProblem, OSError) as problem:  # OSError: it cannot be read
            log.warning(
                "response cache %s: the index %s is not used (%s): %s is read instead",
                self.folder,
                name + segments.SUFFIX,
                problem,
                name,
            )
            segment = None
        path = self.folder / name
        try:
            segment = segment or self._build_index(name, path)
            size = path.stat().st_size
        except FileNotFoundError:
            return
        if segment is None:
            return
        self.segments[name] = segment
        state.resume = state.size_seen = segment.covered
        state.done = segment.closed or writer_done(path, self.idle)
        for offset, length in segment.damaged:
            torn = offset + length == segment.covered and not segment.closed
            self._damage(name, offset, length, "torn tail" if torn else "damaged bytes")
        if segment.closed and size > segment.covered:  # bytes after the CLOSE record: never a writer's
            self._damage(name, segment.covered, size - segment.covered, "damaged bytes")
            state.resume = state.size_seen = size

    def _build_index(self, name: str, path: Path) -> segments.Segment | None:
        """The on-disk index of a finished file of at least MIN_SIZE bytes, built now and written beside it
        (kept in memory where it cannot be written); None for another file."""
        size = path.stat().st_size
        if size < segments.MIN_SIZE or not (writer_done(path, self.idle) or _closed(path, size)):
            return None
        segment = segments.build(self.folder, name)
        if segment is not None:
            try:
                segments.write(self.folder, segment)
            except OSError as error:
                if not self._unwritable:
                    log.warning(
                        "response cache %s: cannot write the index of %s (%s): it is kept in memory",
                        self.folder,
                        name,
                        error,
                    )
                self._unwritable = True
        return segment

    def _header(self, f, name: str, state: _File, done: bool) -> bool:
        head = f.read(len(records.FILE_MAGIC))
        if head == records.FILE_MAGIC:
            state.resume = len(head)
            return True
        if not head and done:  # its writer died as it made it
            state.unreadable = True
        elif not (records.FILE_MAGIC.startswith(head) and not done):  # else: a file being created
            log.warning(
                "response cache %s: %s is not a response cache file of this format: skipped",
                self.folder,
                name,
            )
            state.unreadable = True
        return False

    def _read_stretch(self, f, name: str, state: _File, size: int, done: bool) -> bool:
        """Read and index from `state.resume` on; whether to go on reading the file."""
        f.seek(state.resume)
        blob = f.read(min(CHUNK, size - state.resume))
        found = records.scan(blob, state.resume, INLINE)
        done = done or found.closed_at is not None
        state.done = done
        end, damaged, gap = found.end, found.damaged, not done and bool(found.damaged)
        if gap:  # its writer may still write: no further than the first gap, for now
            end, damaged = damaged[0][0], []
        last = state.resume + len(blob) >= size
        if done and last and found.tail:
            damaged = [*damaged, (found.end, found.tail)]
        for r in found.records:
            if r.offset < end and r.kind == records.ANSWER:
                self._add(r.key, r.value if r.value is not None else (name, r.offset, r.length, r.crc))
        for offset, length in damaged:
            self._damage(name, offset, length, "torn tail" if offset == found.end else "damaged bytes")
        progressed = end > state.resume
        state.resume = end
        return progressed and not last and found.closed_at is None and not gap

    def _damage(self, name: str, offset: int, length: int, what: str) -> None:
        if (name, offset) not in self.damaged:
            self.damaged[(name, offset)] = length
            log.warning(
                "response cache %s: %s: %d bytes at offset %d are no whole record (%s): skipped",
                self.folder,
                name,
                length,
                offset,
                what,
            )

    def add_own(self, name: str, offset: int, keys: list[str], blobs: list[bytes]) -> None:
        """Index records this process just appended to its file `name` at `offset` (no need to read them
        back)."""
        state = self.files.setdefault(name, _File())
        if state.resume == 0:
            state.resume = offset
        if state.resume != offset:  # bytes before them not read yet: the next refresh reads them all
            return
        for key, blob in zip(keys, blobs, strict=True):
            value = blob[records.HEADER + len(key.encode("utf-8")) :]
            self._add(key, value if len(value) <= INLINE else (name, offset, len(blob), records.crc_of(blob)))
            offset += len(blob)
        state.resume = state.size_seen = offset

    def _add(self, key: str, entry: Entry) -> None:
        old = self.entries.get(key)
        if old is None:
            self.entries[key] = entry
        elif old != entry and (isinstance(old, bytes) or old[2:] != entry[2:]):  # the same answer: same bytes
            self._settle(key, old, entry)

    def _settle(self, key: str, old: Entry, new: Entry) -> None:
        values = {entry: self.read([key], {key: entry}).get(key) for entry in (old, new)}
        if values[old] is not None and values[new] is not None and values[old] != values[new]:
            self._conflict(key)
        readable = [entry for entry, value in values.items() if value is not None]
        if readable:
            self.entries[key] = min(readable, key=lambda entry: values[entry])

    def _conflict(self, key: str) -> None:
        if not self.conflicts:
            log.warning(
                "response cache %s: key %s holds two different answers: the model is not deterministic? The "
                "answer whose JSON sorts first is used; more such keys are counted",
                self.folder,
                key,
            )
        self.conflicts.add(key)

    def known(self, keys: list[str]) -> list[bool]:
        """Whether each of `keys` is in the index (in an indexed file: its hash; its record is checked when it
        is read)."""
        out = [key in self.entries for key in keys]
        if not self.segments or all(out):
            return out
        if len(keys) <= FEW:
            hashes = [int.from_bytes(h, "little") for h in segments.key_digests(keys)]
            held = [any(s.holds_one(h) for s in self.segments.values()) for h in hashes]
            return [a or b for a, b in zip(out, held, strict=True)]
        wanted = segments.key_hashes(keys)
        held = np.zeros(len(keys), dtype=bool)
        for segment in self.segments.values():
            held |= segment.holds(wanted)
        return [a or bool(b) for a, b in zip(out, held.tolist(), strict=True)]

    def count(self) -> int:
        """The distinct keys the index holds (in indexed files: by their 64-bit hashes)."""
        if not self.segments:
            return len(self.entries)
        hashes = [s.hashes for s in self.segments.values()] + [segments.key_hashes(self.entries)]
        return len(np.unique(np.concatenate(hashes)))

    def read(self, keys: Iterable[str], entries: dict[str, Entry] | None = None) -> dict[str, bytes]:
        """The values of those of `keys` the index holds, each read again and checked; a record that fails the
        check is a miss (and leaves the in-memory index). Two different answers under a key, in several files:
        the one that sorts first. Raises FileNotFoundError where a file was removed meanwhile."""
        if entries is not None:
            return self._read_entries(keys, entries)
        keys = list(keys)
        found = self._read_entries([k for k in keys if k in self.entries], self.entries)
        if self.segments:
            self._read_segments(keys, found)
        return found

    def _read_segments(self, keys: list[str], found: dict[str, bytes]) -> None:
        """Add to `found` the values of `keys` in the indexed files, settled with what `found` holds."""
        by_file: dict[str, list[tuple[int, int, str]]] = {}
        for i, name, offset, length in self._places(keys):
            by_file.setdefault(name, []).append((offset, length, keys[i]))
        values: dict[str, list[bytes]] = {}
        for name, places in by_file.items():
            places.sort()
            for (offset, length, key), blob in zip(places, _records_of(self._fd(name), places), strict=True):
                try:
                    value = records.answer_in(blob, key.encode("utf-8"))
                except ValueError:
                    self._damage(name, offset, length, "changed since it was read")
                    continue
                if value is not None:  # else: another key's hash
                    values.setdefault(key, []).append(value)
        for key, answers in values.items():
            if key in found:
                answers.append(found[key])
            if len(answers) > 1 and len(set(answers)) > 1:
                self._conflict(key)
            found[key] = min(answers)

    def _fd(self, name: str) -> int:
        """A descriptor of the indexed file `name`, kept open (a file is never written again under its name:
        after a compaction removed it, it still reads as it was indexed)."""
        fd = self._fds.get(name)
        if fd is None:
            fd = self._fds[name] = os.open(self.folder / name, os.O_RDONLY)
        return fd

    def close(self) -> None:
        """Close the indexed files' descriptors (opened again if needed)."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _places(self, keys: list[str]) -> list[tuple[int, str, int, int]]:
        """(position in `keys`, file, offset, length) of each record in an indexed file that may be one of
        `keys` (its hash is one of theirs)."""
        if len(keys) <= FEW:  # a binary search in Python beats numpy's overhead for a few keys
            hashes = [int.from_bytes(h, "little") for h in segments.key_digests(keys)]
            return [
                (i, name, *place)
                for name, segment in self.segments.items()
                for i, h in enumerate(hashes)
                if segment.holds_one(h)
                for place in segment.find_one(h)
            ]
        wanted = segments.key_hashes(keys)
        return [(i, name, *place) for name, s in self.segments.items() for i, *place in s.find(wanted)]

    def _read_entries(self, keys: Iterable[str], entries: dict[str, Entry]) -> dict[str, bytes]:
        by_file: dict[str, list[tuple[int, int, int, str]]] = {}  # name -> (offset, length, crc, key)
        found: dict[str, bytes] = {}
        for key in keys:
            entry = entries[key]
            if entry.__class__ is bytes:
                found[key] = entry
            else:
                by_file.setdefault(entry[0], []).append((*entry[1:], key))
        for name, wanted in by_file.items():
            wanted.sort()
            with open(self.folder / name, "rb") as f:
                for (offset, length, crc, key), blob in zip(
                    wanted, _records_of(f.fileno(), wanted), strict=True
                ):
                    value = records.value_of(blob, key, crc)
                    if value is not None:
                        found[key] = value
                    elif self.entries.get(key) == (name, offset, length, crc):
                        self._damage(name, offset, length, "changed since it was read")
                        del self.entries[key]
        return found


def _closed(path: Path, size: int) -> bool:
    """Whether the file at `path` ends with a CLOSE record (its writer closed it, and may live on)."""
    with open(path, "rb") as f:
        return os.pread(f.fileno(), len(records.CLOSED), size - len(records.CLOSED)) == records.CLOSED


def _records_of(fd: int, wanted: list[tuple[int, int, int, str]]) -> list[bytes]:
    """The bytes of each wanted record ((offset, length, ...) in file order): one read for the span they cover
    when they are most of it, else one read each."""
    start, end = wanted[0][0], wanted[-1][0] + wanted[-1][1]
    if end - start <= 4 * sum(w[1] for w in wanted) + (1 << 16):
        span = os.pread(fd, end - start, start)
        return [span[offset - start : offset - start + length] for offset, length, *_ in wanted]
    return [os.pread(fd, length, offset) for offset, length, *_ in wanted]
