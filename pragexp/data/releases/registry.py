"""The registry of the public releases pragexp reads (`registry.yaml` beside this module), read and checked:
each entry names a GitHub repository at a pinned commit, the files pragexp reads from it with their digests
and sizes, the licence and whether training on the release is allowed. A malformed entry is refused naming
the release and the field."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REGISTRY = Path(__file__).with_name("registry.yaml")
TRAINING = ("allowed", "evaluation only", "not stated")
MIRROR_VARIABLE, DATA_DIR_VARIABLE = "PRAGEXP_DATA_MIRROR", "PRAGEXP_DATA_DIR"
GITHUB = "https://github.com"
_HEX = {"commit": 40, "sha256": 64, "git_blob": 40}


class RegistryError(ValueError):
    pass


class UnknownRelease(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class ReleaseFile:
    """One file pragexp reads from a release. `sha256` and `size` are None for a file whose bytes the
    registry's author could not read (4 MiB and more): its git blob id (SHA-1 of "blob <size>\\0" + its
    bytes, from the commit's tree) is its digest then."""

    path: str
    size: int | None
    sha256: str | None
    git_blob: str


@dataclass(frozen=True)
class Release:
    name: str
    title: str
    repo: str  # owner/name on GitHub
    commit: str
    licence: str
    licence_note: str
    training: str  # one of TRAINING
    note: str
    files: tuple[ReleaseFile, ...]

    def archive_url(self, base: str | None = None) -> str:
        """GitHub's path of the repository's archive at the commit, under `base` (a mirror's) or GitHub."""
        return f"{(base or mirror()).rstrip('/')}/{self.repo}/archive/{self.commit}.tar.gz"

    @property
    def known_size(self) -> int:
        return sum(f.size for f in self.files if f.size is not None)

    @property
    def unknown_sizes(self) -> int:
        return sum(f.size is None for f in self.files)


def mirror() -> str:
    """Where archives are asked for: `$PRAGEXP_DATA_MIRROR` (a lab's mirror) or GitHub."""
    return os.environ.get(MIRROR_VARIABLE) or GITHUB


def default_data_dir() -> Path:
    """The data folder when none is given: `$PRAGEXP_DATA_DIR`, else ~/.cache/pragexp/data (the same rule as
    `paths.data_dir` in conf/paths/default.yaml)."""
    return Path(os.environ.get(DATA_DIR_VARIABLE) or Path(os.environ["HOME"]) / ".cache" / "pragexp" / "data")


def _field(source: str, entry: dict, key: str, kind=str, optional: bool = False):
    value = entry.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (key in _HEX and not re.fullmatch(f"[0-9a-f]{{{_HEX[key]}}}", value)):
        raise RegistryError(f"{source}: field {key!r} is {value!r}")
    return value


def _file(source: str, entry: dict) -> ReleaseFile:
    path = _field(source, entry, "path")
    where = f"{source}, file {path}"
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise RegistryError(f"{where}: a path inside the repository is needed")
    size, sha256 = _field(where, entry, "size", int, True), _field(where, entry, "sha256", str, True)
    if (size is None) != (sha256 is None):
        raise RegistryError(f"{where}: size and sha256 are both given or both null")
    return ReleaseFile(path, size, sha256, _field(where, entry, "git_blob"))


def _release(source: str, name: str, entry: dict) -> Release:
    where = f"{source}: release {name}"
    if _field(where, entry, "source") != "github":
        raise RegistryError(f"{where}: field 'source' must be github")
    training = _field(where, entry, "training")
    if training not in TRAINING:
        raise RegistryError(f"{where}: field 'training' is {training!r}, not one of {TRAINING}")
    files = tuple(_file(where, f) for f in _field(where, entry, "files", list))
    if not files:
        raise RegistryError(f"{where}: no files")
    text = {k: _field(where, entry, k) for k in ("title", "repo", "commit", "licence", "licence_note")}
    return Release(name, training=training, note=entry.get("note") or "", files=files, **text)


def load_registry(path: Path = REGISTRY) -> dict[str, Release]:
    """Every release of the registry at `path`, by name, in the file's order."""
    import yaml

    document = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    entries = document.get("releases")
    if not isinstance(entries, dict) or not entries:
        raise RegistryError(f"{path}: no 'releases' mapping")
    return {name: _release(str(path), name, entry) for name, entry in entries.items()}


@cache
def _default_registry() -> dict[str, Release]:
    return load_registry(REGISTRY)


def registry(path: Path | None = None) -> dict[str, Release]:
    return _default_registry() if path is None else load_registry(path)


def release(name: str, releases: dict[str, Release] | None = None) -> Release:
    releases = registry() if releases is None else releases
    if name not in releases:
        raise UnknownRelease(f"no release {name!r} in the registry; the releases are: {', '.join(releases)}")
    return releases[name]
