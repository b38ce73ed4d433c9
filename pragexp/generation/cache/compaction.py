"""Compaction: the files of a folder whose writers are done, merged into one pack (sorted by key, each key
once, the same answer a reader would get from the files), written beside them and renamed into place (readers
see it whole or not at all), then the merged files removed.

A file is merged only when its writer is done with it (`files.writer_done`: closed, or its process gone, or
another host's file idle for `idle` seconds), so that no file a process may still append to is ever removed;
a merged file that grew after it was read anyway (an idle writer woke up) is kept. Until the merged files are
removed, readers find each answer both in the pack and in its file: the same answer. Two compactions at once
each write a pack of what they read and remove only what they merged: nothing is lost (the next compaction
merges the two packs); one that finds a file gone while it reads stops without removing anything.

A pack of at least `segments.MIN_SIZE` bytes gets its on-disk index (`segments`) as it is written, renamed
into place after the pack and before the merged files go; the merged files' indexes go with them, and indexes
whose file is gone (a reader that indexed a file as it was merged) are removed. Compaction itself reads every
file it merges into memory (`on_disk=False`): one process, now and then, holds what every process held before.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pragexp.generation.cache import records, segments
from pragexp.generation.cache.files import IDLE, new_name
from pragexp.generation.cache.index import FolderIndex
from pragexp.utils.io import atomic_output

log = logging.getLogger(__name__)
READ_KEYS = 10_000  # keys read at once while writing the pack


@dataclass
class Compaction:
    """What a compaction did: the pack it wrote (None: nothing to merge), the files it merged and removed, the
    done files it kept because they grew while it ran, the files it left to their writers, the answers in the
    pack, the keys with two different answers, the bytes skipped as damaged."""

    pack: str | None = None
    merged: list[str] = field(default_factory=list)
    grew: list[str] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    answers: int = 0
    conflicts: int = 0
    damaged: int = 0

    def __str__(self) -> str:
        if self.pack is None:
            return f"nothing to merge ({len(self.live)} files still being written)"
        return (
            f"{self.answers:,} answers from {len(self.merged)} files into {self.pack}; "
            f"{len(self.live)} files still being written left as they are"
            + (f"; kept {len(self.grew)} that grew meanwhile: {', '.join(self.grew)}" if self.grew else "")
            + (f"; {self.conflicts} keys held two different answers" if self.conflicts else "")
            + (f"; {self.damaged} damaged bytes skipped" if self.damaged else "")
        )


def compact(folder: str | Path, idle: float = IDLE) -> Compaction:
    folder = Path(folder)
    survey = FolderIndex(folder, idle, on_disk=False)
    survey.refresh()
    done = sorted(n for n, f in survey.files.items() if f.done and not f.unreadable)
    out = Compaction(live=sorted(n for n, f in survey.files.items() if not f.done and not f.unreadable))
    clean_pack = len(done) == 1 and done[0].endswith(".pack") and not survey.damaged
    if not done or clean_pack:
        _remove_old_temps(folder, idle)
        return out
    index = FolderIndex(folder, idle, select=set(done).__contains__, on_disk=False)
    index.refresh()
    sizes = {name: state.size_seen for name, state in index.files.items()}
    out.pack, out.merged = new_name("pack"), sorted(sizes)
    try:
        out.answers = _write_pack(index, folder / out.pack)
    except FileNotFoundError as error:
        raise RuntimeError(
            f"response cache {folder}: {error.filename} went away while it was being merged (another "
            "compaction at once?): nothing was removed; run it again"
        ) from error
    _sync_folder(folder)
    for name in out.merged:
        path = folder / name
        if path.stat().st_size == sizes[name]:
            path.unlink()
            path.with_name(name + segments.SUFFIX).unlink(missing_ok=True)
        else:
            out.grew.append(name)
    out.merged = [n for n in out.merged if n not in out.grew]
    out.conflicts, out.damaged = len(index.conflicts), sum(index.damaged.values())
    _remove_old_temps(folder, idle)
    return out


def _write_pack(index: FolderIndex, path: Path) -> int:
    """Write the pack (and its on-disk index, if it is large); the answers it holds."""
    keys = sorted(index.entries)
    stored, offsets, lengths = [], [], []
    at = len(records.FILE_MAGIC)
    with atomic_output(path, binary=True) as f:
        f.write(records.FILE_MAGIC)
        for start in range(0, len(keys), READ_KEYS):
            chunk = keys[start : start + READ_KEYS]
            values = index.read(chunk)
            for key in chunk:
                if key in values:
                    record = records.encode(key, values[key])
                    f.write(record)
                    stored.append(key)
                    offsets.append(at)
                    lengths.append(len(record))
                    at += len(record)
        f.write(records.encode("", b"", records.CLOSE))
    if path.stat().st_size >= segments.MIN_SIZE:
        hashes = segments.key_hashes(stored)
        order = np.argsort(hashes, kind="stable")
        offsets_, lengths_ = np.asarray(offsets, "<u8"), np.asarray(lengths, "<u4")
        pack = segments.Segment(
            path.name, path.stat().st_size, True, hashes[order], offsets_[order], lengths_[order]
        )
        segments.write(path.parent, pack)
    return len(stored)


def _sync_folder(folder: Path) -> None:
    """The pack's name on disk before the merged files' names go (a crash then leaves both, never neither)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove_old_temps(folder: Path, idle: float) -> None:
    """Temp files of compactions and index writers that died, once they are `idle` old; indexes whose file is
    gone."""
    for path in [*folder.glob(".*.pack.*.tmp"), *folder.glob(f".*{segments.SUFFIX}.*.tmp")]:
        try:
            if time.time() - path.stat().st_mtime >= idle:
                path.unlink()
        except FileNotFoundError:
            pass
    for path in folder.glob(f"*{segments.SUFFIX}"):
        if not path.with_name(path.name[: -len(segments.SUFFIX)]).exists():
            path.unlink(missing_ok=True)
