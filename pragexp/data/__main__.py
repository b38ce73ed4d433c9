"""`python -m pragexp.data fetch NAME... | --all`: the public releases pragexp reads, downloaded at their
pinned commits into the data folder and every file checked against the registry
(pragexp/data/releases/registry.yaml); `fetch --list` prints each release with its size, licence, whether
training on it is allowed and whether it is here and verified."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragexp.data.releases.check import ReleaseFileError, state
from pragexp.data.releases.download import DownloadError
from pragexp.data.releases.fetcher import FetchError, fetch
from pragexp.data.releases.registry import (
    Release,
    UnknownRelease,
    default_data_dir,
    mirror,
    registry,
    release,
)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m pragexp.data", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch", help="download and check releases, or list them (--list)")
    fetching.add_argument("names", nargs="*", metavar="NAME", help="releases to fetch (see --list)")
    fetching.add_argument("--all", action="store_true", help="every release of the registry")
    fetching.add_argument("--list", action="store_true", help="every release, its size, licence and state")
    fetching.add_argument(
        "--data-dir", type=Path, default=None, help="default: $PRAGEXP_DATA_DIR or ~/.cache/pragexp/data"
    )
    fetching.add_argument(
        "--registry", type=Path, default=None, help="another registry file (tests, a lab's own)"
    )
    return top


def _size(entry: Release) -> str:
    mb = f"{entry.known_size / 1e6:.1f} MB"
    return f">={mb} (+{entry.unknown_sizes} of unknown size)" if entry.unknown_sizes else mb


def list_releases(releases: dict[str, Release], data_dir: Path) -> str:
    header = ("release", "size", "files", "licence", "training", "here")
    rows = [header] + [
        (e.name, _size(e), str(len(e.files)), e.licence, e.training, state(e, data_dir))
        for e in releases.values()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    where = f"data folder: {data_dir}; archives from: {mirror()}"
    return "\n".join([where, *lines])


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    releases = registry(args.registry)
    data_dir = args.data_dir or default_data_dir()
    if args.list:
        print(list_releases(releases, data_dir))
        return 0
    if not args.names and not args.all:
        parser().error("name the releases to fetch, or --all (--list shows them)")
    try:
        chosen = list(releases.values()) if args.all else [release(n, releases) for n in args.names]
    except UnknownRelease as exc:
        print(exc, file=sys.stderr)
        return 2
    failed = 0
    for entry in chosen:
        try:
            print(fetch(entry, data_dir), flush=True)
        except (FetchError, ReleaseFileError, DownloadError) as exc:
            failed += 1
            print(f"error: {exc}", file=sys.stderr, flush=True)
        else:
            if entry.training == "evaluation only":
                print(f"{entry.name}: {entry.licence}: evaluation only, never train on it", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
