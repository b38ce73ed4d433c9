"""Small file helpers shared by data modules and entry points."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def as_paths(value) -> list[Path]:
    """None, one path, or a list of paths (as given on the command line) -> list of Paths."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [Path(value)]
    return [Path(v) for v in value]


def digest(obj) -> str:
    """Short stable hash of a JSON-able description of what went into a cached artefact."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_output(path: Path, binary: bool = False) -> Iterator[IO]:
    """A file handle on a temp file beside `path`, renamed onto `path` when the block ends and
    deleted if it raises: readers never see half a file. The file gets the mode a plain open()
    would give (mkstemp's is private)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_directory(path: Path) -> Iterator[Path]:
    """A temp directory beside `path`, renamed onto `path` when the block ends and deleted if it raises:
    a cache entry (several files) appears whole or not at all. If another process published `path`
    meanwhile, its copy is kept and this one dropped (both were built from the same inputs)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        try:
            os.rename(tmp, path)
        except OSError:
            if not path.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_output(path) as f:
        f.write(text)


def missing(paths: Iterable[Path]) -> list[Path]:
    return [p for p in paths if not Path(p).is_file()]


def load_yaml(path: Path, default):
    """A YAML file's content (`default` where the file is missing or empty)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        return default
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f) or default
