"""`python -m pragexp.generation.cache compact|stats <folder>`: merge a cache folder's finished files into
one pack, or say what the folder holds; `pack RUN_DIR... --out answers.tar`, `unpack answers.tar --cache-dir
DIR`: the answers some runs used, shipped (`packs`)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from pragexp.generation.cache import packs
from pragexp.generation.cache.compaction import compact
from pragexp.generation.cache.files import IDLE
from pragexp.generation.cache.index import FolderIndex


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] in (["pack"], ["unpack"]):
        return packs.main(argv)
    parser = argparse.ArgumentParser(prog="python -m pragexp.generation.cache", description=__doc__)
    parser.add_argument("command", choices=("compact", "stats"))
    parser.add_argument("folder", type=Path, help="a response cache folder: <paths.cache_dir>/llm/responses")
    parser.add_argument(
        "--idle-hours",
        type=float,
        default=IDLE / 3600,
        help="another host's unclosed file counts as finished after this long without a write (default "
        "%(default)s)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.folder.is_dir():
        print(f"{args.folder}: no such folder", file=sys.stderr)
        return 2
    idle = args.idle_hours * 3600
    if args.command == "compact":
        print(f"{args.folder}: {compact(args.folder, idle)}")
        return 0
    index = FolderIndex(args.folder, idle)
    index.refresh()  # large finished files from their on-disk indexes (built now where they have none)
    done = sum(f.done for f in index.files.values())
    print(
        f"{args.folder}: {index.count():,} answers in {len(index.files)} files ({done} finished, "
        f"{len(index.files) - done} still being written), {len(index.segments)} indexed on disk; "
        f"{len(index.conflicts)} keys with two different "
        f"answers; {sum(index.damaged.values())} damaged bytes skipped"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
