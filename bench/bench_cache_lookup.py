"""The response cache's folder of per-writer files against the single SQLite file it replaced (issue 49).

    python bench/bench_cache_lookup.py [--keys 100000] [--writers 64] [--group 16] [--value loglik|reply]
                                       [--repeats 3] [--dir /tmp/...]

Both layouts get the same answers (`--keys` SHA-256 keys, as the cache makes them; a log-likelihood triple
each, or a 300-character reply) stored in groups of `--group` (as a backend hands them over):

- the folder: `--writers` writers (one `ResponseCache` each, as many jobs would) share the keys, each into its
  file; then `compact` merges them into one pack;
- the file of before: one SQLite file in WAL mode, the old class's statements (`SqliteCache` below: its table,
  `INSERT OR REPLACE` in one transaction a group, `SELECT ... IN (500 keys)` lookups).

Printed: write throughput (answers/s) of each; a lookup of every key in shuffled order, cold (a new reader:
the folder's index built from its files, the SQLite file opened) and warm (the same reader again), on the
writers' files, on the pack, and on the SQLite file, best of `--repeats`; and the ratios, all measured in this
one run. The files are in the OS's page cache throughout (just written): a cold lookup here is cold for the
process, not for the disk. Timings on a shared machine are noisy: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pragexp.generation.cache import ResponseCache, compact  # noqa: E402


class SqliteCache:
    """The old layout (the response cache module before issue 49), its statements as they were."""

    def __init__(self, path: Path):
        self.db = sqlite3.connect(path, timeout=60, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get_many(self, keys: list[str]) -> dict[str, object]:
        found: dict[str, object] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):  # SQLite's bound-parameter limit
            chunk = unique[start : start + 500]
            rows = self.db.execute(
                f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
            )
            found.update((k, json.loads(v)) for k, v in rows)
        return found

    def put_many(self, values: dict[str, object]) -> None:
        with self.db:
            self.db.execute("BEGIN")
            self.db.executemany(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()],
            )

    def close(self) -> None:
        self.db.close()


def answers(n: int, kind: str) -> dict[str, object]:
    rng = random.Random(0)
    out = {}
    for i in range(n):
        key = hashlib.sha256(json.dumps([{"backend": "bench"}, "q", i]).encode()).hexdigest()
        if kind == "loglik":
            out[key] = [-rng.uniform(0, 30), rng.randint(1, 9), rng.randint(1, 40)]
        else:
            out[key] = "".join(rng.choice("abcdefghij klmnop") for _ in range(300))
    return out


def write_folder(folder: Path, values: dict, writers: int, group: int) -> float:
    keys = list(values)
    start = time.perf_counter()
    for w in range(writers):
        cache = ResponseCache(folder)
        mine = keys[w::writers]
        for at in range(0, len(mine), group):
            cache.put_many({k: values[k] for k in mine[at : at + group]})
        cache.close()
    return time.perf_counter() - start


def write_sqlite(path: Path, values: dict, group: int) -> float:
    keys = list(values)
    start = time.perf_counter()
    cache = SqliteCache(path)
    for at in range(0, len(keys), group):
        cache.put_many({k: values[k] for k in keys[at : at + group]})
    cache.close()
    return time.perf_counter() - start


def lookups(open_reader, keys: list[str], expected: dict, repeats: int) -> tuple[float, float]:
    """(cold, warm) seconds of a lookup of every key, best of `repeats`; checks every answer."""
    cold = warm = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        reader = open_reader()
        found = reader.get_many(keys)
        cold = min(cold, time.perf_counter() - start)
        start = time.perf_counter()
        again = reader.get_many(keys)
        warm = min(warm, time.perf_counter() - start)
        reader.close()
        assert found == again == expected, "a lookup missed or changed an answer"
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--group", type=int, default=16)
    parser.add_argument("--value", choices=("loglik", "reply"), default="loglik")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: a temp folder)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cache-", dir=args.dir))
    try:
        values = answers(args.keys, args.value)
        keys = list(values)
        random.Random(1).shuffle(keys)
        expected = {k: values[k] for k in keys}
        folder, db = work / "responses", work / "responses.sqlite"
        t_folder = write_folder(folder, values, args.writers, args.group)
        t_sqlite = write_sqlite(db, values, args.group)
        files = len(list(folder.iterdir()))
        print(f"{args.keys:,} answers ({args.value}) in groups of {args.group}:")
        print(f"  write  folder ({files} writers' files): {args.keys / t_folder:10,.0f} answers/s")
        print(f"  write  SQLite file (WAL)             : {args.keys / t_sqlite:10,.0f} answers/s")
        print(f"  write ratio folder/SQLite: {t_sqlite / t_folder:.2f}x the throughput")
        old = lookups(lambda: SqliteCache(db), keys, expected, args.repeats)
        new = lookups(lambda: ResponseCache(folder), keys, expected, args.repeats)
        start = time.perf_counter()
        merged = compact(folder)
        t_compact = time.perf_counter() - start
        packed = lookups(lambda: ResponseCache(folder), keys, expected, args.repeats)
        print(
            f"  compaction: {merged.answers:,} answers from {len(merged.merged)} files in {t_compact:.2f} s"
        )
        print(f"lookup of {len(keys):,} keys, shuffled (seconds, best of {args.repeats}):")
        print(f"  {'':28} {'cold':>8} {'warm':>8}")
        for name, (cold, warm) in (
            (f"folder, {files} writers' files", new),
            ("folder, compacted", packed),
            ("SQLite file", old),
        ):
            print(f"  {name:28} {cold:8.3f} {warm:8.3f}")
        for name, (cold, warm) in ((f"{files} files", new), ("compacted", packed)):
            print(
                f"  ratio {name} / SQLite: cold {cold / old[0]:.2f}, warm {warm / old[1]:.2f} (< 1: faster)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
