"""Copy the answers of a response cache of before issue 49 (one SQLite file) into the folder that replaced it.

    python experiments/llm/convert_response_cache.py <cache_dir>/llm/responses.sqlite [<folder>]

The keys are the same (the SHA-256 of what decides an answer) and so are the values (the answer's JSON), so
the answers are found by the same runs as before. The folder defaults to `responses/` beside the file; the
answers go into a file of their own there (the folder may be in use), which is then compacted with the
folder's other finished files. The SQLite file is left as it was: delete it once the runs find their answers.
A one-off: the package itself reads no SQLite file.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pragexp.generation.cache import ResponseCache, compact  # noqa: E402

CHUNK = 10_000


def convert(old: Path, folder: Path) -> int:
    """Copy every (key, value) row of `old` into `folder`; the number of answers copied."""
    copied = 0
    cache = ResponseCache(folder)
    with closing(sqlite3.connect(f"file:{old}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT key, value FROM responses")
        while chunk := rows.fetchmany(CHUNK):
            # the values are JSON already: parsed and written again as the cache writes them
            cache.put_many({key: _json(value, key) for key, value in chunk})
            copied += len(chunk)
    cache.close()
    return copied


def _json(text: str, key: str):
    try:
        return json.loads(text)
    except ValueError as error:
        raise SystemExit(
            f"the value under {key} is no JSON ({error}): is this a response cache file?"
        ) from error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="the SQLite file: <cache_dir>/llm/responses.sqlite")
    parser.add_argument("folder", type=Path, nargs="?", help="default: responses/ beside it")
    args = parser.parse_args()
    if not args.old.is_file():
        print(f"{args.old}: no such file", file=sys.stderr)
        return 2
    folder = args.folder or args.old.with_name("responses")
    copied = convert(args.old, folder)
    print(f"{copied:,} answers copied from {args.old} into {folder}; {compact(folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
