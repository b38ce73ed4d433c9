"""A release fetched into the data folder and checked: `fetch(release, data_dir)`.

A copy already in `<data_dir>/<name>/` (an earlier fetch, or files put there by hand) is checked file by file
first, and kept when every file is the registered one. Otherwise the repository's archive at the pinned
commit is downloaded (`<mirror>/<owner>/<repo>/archive/<commit>.tar.gz`; an archive put at `archive_path` by
hand is used as it is), only the registered files are taken out of it (each written at the path the registry
gives, never at a name the archive chooses), each is checked, the marker is written last, and the folder is
renamed into place: a half-fetched release is never where a finished one is expected. Only registered files
are kept, so that everything in the data folder is a checked file; the archive is deleted once installed."""

from __future__ import annotations

import os
import shutil
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path

from tqdm.auto import tqdm

from pragexp.data.releases.check import ReleaseFileError, check_tree, release_dir, write_marker
from pragexp.data.releases.download import DownloadError, Unreachable, download
from pragexp.data.releases.registry import MIRROR_VARIABLE, Release


class FetchError(RuntimeError):
    pass


def archive_path(data_dir: Path, release: Release) -> Path:
    return Path(data_dir) / ".archives" / f"{release.name}-{release.commit}.tar.gz"


def _files_bar(release: Release, action: str) -> tqdm:
    return tqdm(total=len(release.files), unit="file", desc=f"{release.name}: {action}", leave=False)


def _checked_in_place(release: Release, folder: Path) -> bool:
    if not folder.is_dir():
        return False
    try:
        with _files_bar(release, "checking the copy here") as bar:
            check_tree(release, folder, bar.update)
    except ReleaseFileError as exc:
        print(f"{exc}\n{release.name}: fetching the release again", file=sys.stderr)
        return False
    write_marker(release, folder)
    return True


def _offline_message(release: Release, url: str, data_dir: Path, exc: Exception) -> str:
    folder = release_dir(data_dir, release)
    example = next((f.path for f in release.files if "LICENSE" not in f.path), release.files[0].path)
    cause = exc.__cause__ or exc  # what the connection said (refused, a name that does not resolve)
    return (
        f"{release.title} ({release.name}): cannot download {url} ({type(cause).__name__}: {cause}).\n"
        f"Offline, put a copy here by hand: that archive (from a machine that has the network) at "
        f"{archive_path(data_dir, release)}, or the repository's {len(release.files)} registered files at "
        f"their paths under {folder}/ (e.g. {folder / example}); then run `python -m pragexp.data fetch "
        f"{release.name}` again: it checks them and downloads nothing. Behind a firewall, "
        f"{MIRROR_VARIABLE}=<url> asks <url>/{release.repo}/archive/{release.commit}.tar.gz instead."
    )


def _extract(release: Release, archive: Path, into: Path) -> None:
    """The registered files out of a GitHub archive (one top folder, `<repo>-<commit>/`)."""
    wanted = {f.path for f in release.files}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            inside = member.name.split("/", 1)[1] if "/" in member.name else ""
            if inside in wanted and member.isfile():
                target = into / inside  # the registry's path (checked: relative, no ".."), not the archive's
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)
                wanted.discard(inside)
    if wanted:
        raise ReleaseFileError(f"{release.name}: {archive} lacks {len(wanted)} file(s): {sorted(wanted)[:5]}")


def _swap(staging: Path, folder: Path) -> None:
    """`staging` renamed onto `folder`; an older folder there is moved aside first, then deleted."""
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.old."))
        os.rename(folder, old / folder.name)
    os.rename(staging, folder)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _install(release: Release, archive: Path, folder: Path) -> None:
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        try:
            _extract(release, archive, staging)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            archive.unlink(missing_ok=True)
            raise FetchError(
                f"{release.name}: the archive {archive} cannot be read ({type(exc).__name__}: {exc}); it was "
                "deleted, and the next run downloads it again"
            ) from exc
        with _files_bar(release, "checking") as bar:
            check_tree(release, staging, bar.update)
        write_marker(release, staging)  # last: its presence says every file above was checked
        _swap(staging, folder)
    except ReleaseFileError:
        archive.unlink(missing_ok=True)  # not the registered files: never kept, never installed
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def fetch(release: Release, data_dir: Path) -> str:
    """The release in `<data_dir>/<name>/`, every registered file checked; says what was done."""
    data_dir = Path(data_dir)
    folder = release_dir(data_dir, release)
    folder.parent.mkdir(parents=True, exist_ok=True)
    if _checked_in_place(release, folder):
        return f"{release.name}: here and verified ({len(release.files)} files in {folder})"
    archive, url = archive_path(data_dir, release), release.archive_url()
    if not archive.is_file():
        try:
            download(url, archive, label=f"{release.name}: {url}")
        except Unreachable as exc:
            raise FetchError(_offline_message(release, url, data_dir, exc)) from exc
        except DownloadError as exc:
            raise FetchError(f"{release.title} ({release.name}): {exc}") from exc
    _install(release, archive, folder)
    archive.unlink(missing_ok=True)
    return f"{release.name}: fetched and verified ({len(release.files)} files in {folder})"
