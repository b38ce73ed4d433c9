"""`ResponseCache`: a cache folder as one process uses it."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from pathlib import Path

from pragexp.generation.cache import records
from pragexp.generation.cache.files import IDLE, Writer
from pragexp.generation.cache.index import FolderIndex

log = logging.getLogger(__name__)
_decode = json.JSONDecoder().raw_decode  # values are json.dumps output: no whitespace around them


class ResponseCache:
    """The folder at `path`: lookups (`get_many`) in the index of every file there (its large finished files'
    indexes on disk, memory-mapped; the others' in memory: `index`), built at the first lookup and read on (at
    most every `refresh_every` seconds) where keys are missing; answers (`put_many`) appended to this
    process's own file, opened at the first. `hits` and `misses` count the keys looked up, by every backend it
    serves, and `close` says them. `on_disk_index=False`: every file indexed in memory (as before the on-disk
    indexes)."""

    def __init__(
        self, path: str | Path, idle: float = IDLE, refresh_every: float = 1.0, on_disk_index: bool = True
    ):
        self.path = Path(path)
        self.hits = self.misses = 0
        self.refresh_every = refresh_every
        self._index = FolderIndex(self.path, idle, on_disk=on_disk_index)
        self._writer = Writer(self.path)
        self._loaded, self._refreshed = False, 0.0
        self._lock = threading.RLock()  # a backend's threads may hand answers over at once

    @staticmethod
    def key(*parts) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, object]:
        with self._lock:
            unique = list(dict.fromkeys(keys))
            if not self._loaded:
                self.refresh()
            found = self._values(unique)
            if len(found) < len(unique) and time.monotonic() - self._refreshed >= self.refresh_every:
                self.refresh()  # other writers may have appended the keys missing: all read again, settled
                found = self._values(unique)  # with what the refresh found
            hits = len(found) if len(unique) == len(keys) else sum(k in found for k in keys)
            self.hits += hits
            self.misses += len(keys) - hits
        return found

    def _values(self, keys: list[str], again: bool = True) -> dict[str, object]:
        try:
            raw = self._index.read(keys)
        except FileNotFoundError:  # a file compacted away since the index was built
            if not again:
                raise
            self._index.reset()
            self.refresh()
            return self._values(keys, again=False)
        found = {}
        for key, value in raw.items():
            try:
                found[key] = _decode(value.decode("utf-8"))[0]
            except ValueError:  # whole and checked, yet no JSON: not an answer this code wrote
                log.warning("response cache %s: the answer under %s is no JSON: ignored", self.path, key)
        return found

    def put_many(self, values: dict[str, object]) -> None:
        """Append `values` to this process's file with one write; answers already known under their keys are
        not written again (stored answers stand)."""
        with self._lock:
            keys = list(values)
            if self._loaded:
                keys = [k for k, known in zip(keys, self._index.known(keys), strict=True) if not known]
            if not keys:
                return
            blobs = [
                records.encode(k, json.dumps(values[k], ensure_ascii=False).encode("utf-8")) for k in keys
            ]
            offset = self._writer.append(b"".join(blobs), len(blobs))
            if self._loaded:
                self._index.add_own(self._writer.name, offset, keys, blobs)

    def refresh(self) -> None:
        """Read what every file of the folder gained since the last read."""
        with self._lock:
            self._index.refresh()
            self._loaded, self._refreshed = True, time.monotonic()

    def __len__(self) -> int:
        """The keys the folder holds now."""
        self.refresh()
        return self._index.count()

    @property
    def conflicts(self) -> int:
        return len(self._index.conflicts)

    @property
    def damaged(self) -> dict[tuple[str, int], int]:
        """(file name, offset) -> bytes skipped there, for each stretch of a file that held no whole
        record."""
        return dict(self._index.damaged)

    def close(self) -> None:
        if self.hits or self.misses:
            log.info(
                "response cache %s: %d answers found there, %d asked of the model",
                self.path,
                self.hits,
                self.misses,
            )
        if self.conflicts:
            log.warning(
                "response cache %s: %d keys held two different answers; each gave the one whose JSON sorts "
                "first",
                self.path,
                self.conflicts,
            )
        if self._index.damaged:
            files = sorted({name for name, _ in self._index.damaged})
            log.warning(
                "response cache %s: %d stretches of %d bytes held no whole record and were skipped, in %s",
                self.path,
                len(self._index.damaged),
                sum(self._index.damaged.values()),
                ", ".join(files),
            )
        self._writer.close()
        self._index.close()
