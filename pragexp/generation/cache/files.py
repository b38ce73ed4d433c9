"""The folder's files: their names, whether their writers are done with them, and a process's own file
(`Writer`).

A writer's file is `<start time, ns>-<host>-<pid>-<16 random hex digits>.log`: no two processes, on any hosts,
ever write one file, so writers need no lock. A compacted file is the same name ending in `.pack`. Whether a
file's writer is done (`writer_done`): it closed the file (its last record is CLOSE), or the file is a pack,
or its writer ran on this host and its process is gone (or is this process, holding the file no more), or the
file was written last more than `idle` seconds ago (the one guess, for other hosts' files: compaction's
default is a day).
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import secrets
import socket
import time
from pathlib import Path

from pragexp.generation.cache import records

log = logging.getLogger(__name__)
NAME = re.compile(
    r"^(?P<started>\d{20})-(?P<host>.+)-(?P<pid>\d+)-(?P<token>[0-9a-f]{16})\.(?P<kind>log|pack)$"
)
IDLE = 24 * 3600.0  # seconds without a write after which another host's unclosed file counts as done
SYNC_EVERY = 1.0  # seconds: at most one fsync per this time; every answer is written (to the OS) at once
_LIVE: dict[str, Writer] = {}  # the files this process is writing now, by name


class CacheWriteError(OSError):
    """An answer could not be stored (a full disk, a quota, a file system gone): the run stops."""


def host() -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname()) or "host"


def new_name(kind: str = "log") -> str:
    return f"{time.time_ns():020d}-{host()}-{os.getpid()}-{secrets.token_hex(8)}.{kind}"


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def writer_done(path: Path, idle: float = IDLE) -> bool:
    """Whether no process can still append to the file at `path` (its CLOSE record aside: the reader's
    part)."""
    match = NAME.match(path.name)
    if match is None or match["kind"] == "pack":
        return True
    if match["host"] == host():
        pid = int(match["pid"])
        return path.name not in _LIVE if pid == os.getpid() else not _process_alive(pid)
    try:
        return time.time() - path.stat().st_mtime >= idle
    except FileNotFoundError:
        return True


class Writer:
    """This process's own file of a folder, opened at the first answer: each `append` writes its records with
    one write (in the OS's hands at once: a killed process keeps them), an fsync at most every SYNC_EVERY
    seconds and at `close`, which ends the file with a CLOSE record."""

    def __init__(self, folder: Path):
        self.folder, self.name, self.size = Path(folder), None, 0
        self._fd: int | None = None
        self._pid = os.getpid()  # a forked child never writes to its parent's file
        self._synced = self._wrote = 0.0

    @property
    def path(self) -> Path | None:
        return self.folder / self.name if self.name else None

    def append(self, data: bytes, answers: int) -> int:
        """Write `data` (whole records); the offset in the file where it starts."""
        if self._fd is None or self._pid != os.getpid() or self._file_gone():
            self._open(answers)
        offset = self.size
        try:
            _write_all(self._fd, data)
            self.size += len(data)
            now = time.monotonic()
            if now - self._synced >= SYNC_EVERY:
                os.fsync(self._fd)
                self._synced = now
            self._wrote = now
        except OSError as error:
            self._drop()
            raise self._error(error, answers) from error
        return offset

    def close(self) -> None:
        if self._fd is None or self._pid != os.getpid():
            self._drop()
            return
        try:
            _write_all(self._fd, records.encode("", b"", records.CLOSE))
            os.fsync(self._fd)
        except OSError as error:  # the answers are there; only the mark that no more will come is missing
            log.warning("response cache %s: could not close %s: %s", self.folder, self.name, error)
        self._drop()

    def _open(self, answers: int) -> None:
        self._drop()
        self.name, self.size = new_name(), 0
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
            self._pid, _LIVE[self.name] = os.getpid(), self
            _write_all(self._fd, records.FILE_MAGIC)
        except OSError as error:
            self._drop()
            raise self._error(error, answers) from error
        self.size = len(records.FILE_MAGIC)
        self._synced = self._wrote = time.monotonic()

    def _file_gone(self) -> bool:
        """After a long pause, whether the file was taken away (compacted as if its writer were done): then
        the next answers go to a new file. Checked only then: a stat on a network file system is a round
        trip."""
        if time.monotonic() - self._wrote < IDLE / 2:
            return False
        try:
            return os.stat(self.path).st_ino != os.fstat(self._fd).st_ino
        except FileNotFoundError:
            return True

    def _drop(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = None
        _LIVE.pop(self.name, None)

    def _error(self, error: OSError, answers: int) -> CacheWriteError:
        return CacheWriteError(
            error.errno,
            f"response cache {self.folder}: cannot store {answers} answer(s) in {self.name}: "
            f"{error.strerror or error} (the answers stored before are kept; free space there or point "
            "paths.cache_dir elsewhere)",
        )


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@atexit.register
def _close_at_exit() -> None:
    """Files left open at exit are closed, so that they say their writer is done."""
    for writer in list(_LIVE.values()):
        writer.close()
