"""Every file of a release checked against the registry, and the marker that says a release folder was
checked: written last, inside the folder, so that a folder without it (a fetch cut short, a copy put there by
hand) is never taken for a verified one. The marker records the commit and every file's digest: after the
registry pins another commit, an older copy reads as stale, not verified."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from pragexp.data.releases.registry import Release, ReleaseFile
from pragexp.utils.io import atomic_write_text

MARKER = ".pragexp-verified.json"
_CHUNK = 1 << 20


class ReleaseFileError(ValueError):
    """A file of a release is missing or is not the registered one."""


class DigestMismatch(ReleaseFileError):
    pass


def file_digests(path: Path) -> tuple[int, str, str]:
    """(size, SHA-256, git blob id) of a file, read once."""
    size = Path(path).stat().st_size
    sha256, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            sha256.update(chunk)
            blob.update(chunk)
    return size, sha256.hexdigest(), blob.hexdigest()


def check_file(release: Release, registered: ReleaseFile, path: Path) -> None:
    """Refuses a file that is not the registered one, naming it and both digests."""
    where = f"{release.name} ({release.repo} at {release.commit[:12]}): {registered.path}"
    if not Path(path).is_file():
        raise ReleaseFileError(f"{where}: missing ({path})")
    size, sha256, blob = file_digests(path)
    if registered.sha256 is not None and sha256 != registered.sha256:
        raise DigestMismatch(
            f"{where}: sha256 {sha256} where the registry says {registered.sha256} ({size:,} bytes read, "
            f"{registered.size:,} registered): refused"
        )
    if blob != registered.git_blob:
        raise DigestMismatch(
            f"{where}: git blob id {blob} where the registry says {registered.git_blob} ({size:,} bytes "
            "read): refused"
        )


def check_tree(release: Release, root: Path, advance: Callable[[int], object] = lambda n: None) -> None:
    """Every registered file under `root` checked; `advance(1)` after each (a progress bar's update)."""
    for registered in release.files:
        check_file(release, registered, Path(root) / registered.path)
        advance(1)


def marker(release: Release) -> dict:
    return {
        "release": release.name,
        "repo": release.repo,
        "commit": release.commit,
        "files": {f.path: f.git_blob for f in release.files},
    }


def write_marker(release: Release, root: Path) -> None:
    atomic_write_text(Path(root) / MARKER, json.dumps(marker(release), indent=1, sort_keys=True) + "\n")


def release_dir(data_dir: Path, release: Release) -> Path:
    return Path(data_dir) / release.name


def state(release: Release, data_dir: Path) -> str:
    """`verified` (the marker of this registry entry is there), `stale` (a marker of another commit or other
    files), `unverified` (a folder without a marker) or `absent`. Reads the marker only, no file."""
    folder = release_dir(data_dir, release)
    if not folder.is_dir():
        return "absent"
    try:
        found = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unverified"
    return "verified" if found == marker(release) else "stale"
