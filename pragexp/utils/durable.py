"""Files and folders replaced whole, and kept through a kill, a full disk or a power cut: what a run writes to
resume from (its checkpoints, a tuned LLM's adapter folder beside each).

- `write_durably(path, write)`: the bytes go to `.<name>.partial` beside `path`, are flushed to the disk
  (fsync), the file is renamed onto `path` and the rename flushed (fsync of the folder). A reader finds the
  previous file or the new one, never part of one; a writer killed or stopped by a full disk leaves the
  previous file as it was. A partial file a killed writer left is written over by the next write of that path.
- `replace_folder(new, path)`: a complete folder `new`, written beside `path`, takes its place. Its files are
  flushed, then the two folders are swapped at once (Linux's `renameat2` with RENAME_EXCHANGE, which local
  filesystems and tmpfs support) and the old one removed. Where a filesystem cannot swap (NFS, another OS),
  the old folder is first renamed aside: a kill between the two renames then leaves no folder at `path`, the
  old one at `.<name>.old` beside it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

AT_FDCWD, RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>


def write_durably(path: str | Path, write: Callable[[BinaryIO], None]) -> Path:
    """`write(file)` writes the content; see the module docstring. An OSError names the file and says the
    previous one is kept."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise OSError(
            error.errno,
            f"{error.strerror or error}: writing {path} (not written; a previous {path.name} is unchanged)",
        ) from error
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)
    return path


def replace_folder(new: str | Path, path: str | Path) -> Path:
    """See the module docstring; `new` must be on `path`'s filesystem (a folder beside it)."""
    new, path = Path(new), Path(path)
    for file in sorted(new.rglob("*")):
        if file.is_file():
            _fsync_file(file)
    fsync_folder(new)
    if not path.exists():
        os.rename(new, path)
    elif _exchange(new, path):
        shutil.rmtree(new)  # (the old content, now under the new folder's name)
    else:
        old = path.with_name(f".{path.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(path, old)
        os.rename(new, path)
        shutil.rmtree(old)
    fsync_folder(path.parent)
    return path


def fsync_folder(folder: str | Path) -> None:
    """Flushes a folder's entries (a rename into it) to the disk."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swaps two paths at once (True), or says the system cannot (False)."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # a filesystem or kernel without the swap
    raise OSError(code, f"{os.strerror(code)}: swapping {a} and {b}")
