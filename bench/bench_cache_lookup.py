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

    python bench/bench_cache_lookup.py --scale [--keys 1000000] [--writers 64] [--data DIR]

A folder at scale (issue 54, item 5): `--keys` log-likelihood answers written by `--writers` writers (a file
each, closed; generated once into `--data` and copied for the run when given). Each reader is a fresh process
(this script, `--child`) that looks up one key (the time from its start, interpreter and imports included, to
that first answer: `first answer`), then every key in shuffled batches of 1,000 (`batch`: microseconds a key,
key making excluded) and 10,000 keys one at a time (`single`); every answer is checked. Its memory is its peak
resident set (`resource.getrusage(RUSAGE_SELF).ru_maxrss`: the interpreter, numpy and the memory-mapped index
pages it touched included; `imports`: the same before the cache is opened). Readers, in order: today's index
(`on_disk_index=False`: every file in memory) on the writers' files; the on-disk index, first reader (it
builds and writes the files' indexes); the on-disk index again (a new process: indexes memory-mapped); then
`compact` (a process of its own: its time and peak memory), today's index on the pack, the on-disk index on
the pack.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import shutil
import sqlite3
import subprocess
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


SCALE_BATCH, SINGLES = 1000, 10_000


def scale_key(i: int) -> str:
    return hashlib.sha256(json.dumps([{"backend": "bench-scale"}, "q", i]).encode()).hexdigest()


def scale_value(i: int) -> list:
    """A log-likelihood triple that names its key's number (checked without holding every answer)."""
    return [-((i * 7919) % 30000) / 1000, 1 + i % 9, i]


def write_scale(folder: Path, keys: int, writers: int, group: int = 16) -> None:
    for w in range(writers):
        cache = ResponseCache(folder)
        mine = range(w, keys, writers)
        for at in range(0, len(mine), group):
            cache.put_many({scale_key(i): scale_value(i) for i in mine[at : at + group]})
        cache.close()


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(folder: Path, on_disk: bool, started: float, keys: int) -> dict:
    """A fresh reader's figures (see the docstring); every answer checked."""
    import numpy as np

    imports = peak_mib()
    cache = ResponseCache(folder, on_disk_index=on_disk)
    order = np.random.default_rng(1).permutation(keys)
    first = int(order[0])
    assert cache.get_many([scale_key(first)]) == {scale_key(first): scale_value(first)}
    first_answer = time.time() - started
    batch = single = 0.0
    for at in range(0, keys, SCALE_BATCH):
        wanted = order[at : at + SCALE_BATCH].tolist()
        names = [scale_key(i) for i in wanted]
        start = time.perf_counter()
        found = cache.get_many(names)
        batch += time.perf_counter() - start
        assert len(found) == len(names) and all(
            found[k] == scale_value(i) for k, i in zip(names, wanted, strict=True)
        )
    for i in order[:SINGLES].tolist():
        name = scale_key(i)
        start = time.perf_counter()
        found = cache.get_many([name])
        single += time.perf_counter() - start
        assert found == {name: scale_value(i)}
    figures = {
        "peak": peak_mib(),
        "imports": imports,
        "first": first_answer,
        "batch": batch / keys * 1e6,
        "single": single / SINGLES * 1e6,
        "indexed": len(cache._index.segments),
        "in_memory": len(cache._index.entries),
    }
    cache.close()
    return figures


def in_child(*args: str) -> dict:
    started = time.time()
    done = subprocess.run(
        [sys.executable, __file__, *args, str(started)], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"{args}: {done.stderr[-3000:]}")
    figures = json.loads(done.stdout.splitlines()[-1])
    figures["wall"] = time.time() - started
    return figures


def scale(args) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-cache-scale-", dir=args.dir))
    try:
        data = args.data or work / "data"
        if not (data / "done").exists():
            start = time.perf_counter()
            write_scale(data / "responses", args.keys, args.writers)
            (data / "done").write_text(f"{args.keys} {args.writers}\n")
            print(
                f"written: {args.keys:,} answers by {args.writers} writers in "
                f"{time.perf_counter() - start:.0f} s"
            )
        folder = work / "responses"
        shutil.copytree(data / "responses", folder)
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"{args.keys:,} log-likelihood answers, {args.writers} writers' files ({size:.0f} MiB):")
        files = f"{args.writers} files"
        rows = [(f"today's index, {files}", in_child("--child", str(folder), "0", str(args.keys)))]
        rows.append((f"on-disk, {files}, first", in_child("--child", str(folder), "1", str(args.keys))))
        rows.append((f"on-disk, {files}", in_child("--child", str(folder), "1", str(args.keys))))
        merged = in_child("--child-compact", str(folder))
        rows.append(("today's index, pack", in_child("--child", str(folder), "0", str(args.keys))))
        rows.append(("on-disk, pack", in_child("--child", str(folder), "1", str(args.keys))))
        report(rows, merged)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows: list[tuple[str, dict]], merged: dict) -> None:
    print(
        f"  {'reader (a fresh process)':26} {'peak RSS':>9} {'imports':>8} {'1st answer':>10} {'batch':>9} "
        f"{'single':>9}"
    )
    for name, f in rows:
        print(
            f"  {name:26} {f['peak']:5.0f} MiB {f['imports']:4.0f} MiB {f['first']:8.2f} s "
            f"{f['batch']:6.1f} us {f['single']:6.1f} us  ({f['indexed']} files indexed on disk, "
            f"{f['in_memory']:,} answers in memory)"
        )
    print(f"  compact: {merged['seconds']:.1f} s, peak RSS {merged['peak']:.0f} MiB ({merged['what']})")
    today = dict(rows)
    files = rows[0][0].split(", ")[1]
    pairs = ((f"today's index, {files}", f"on-disk, {files}"), ("today's index, pack", "on-disk, pack"))
    for old, new in pairs:
        a, b = today[old], today[new]
        print(
            f"  ratio {new} / {old}: peak RSS {b['peak'] / a['peak']:.2f}, first answer "
            f"{b['first'] / a['first']:.2f}, batch {b['batch'] / a['batch']:.2f}, single "
            f"{b['single'] / a['single']:.2f} (< 1: less)"
        )


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        folder, on_disk, keys, started = sys.argv[2:6]
        print(json.dumps(child(Path(folder), on_disk == "1", float(started), int(keys))))
        return
    if sys.argv[1:2] == ["--child-compact"]:
        start = time.perf_counter()
        merged = compact(sys.argv[2])
        print(json.dumps({"seconds": time.perf_counter() - start, "peak": peak_mib(), "what": str(merged)}))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--group", type=int, default=16)
    parser.add_argument("--value", choices=("loglik", "reply"), default="loglik")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: a temp folder)")
    parser.add_argument("--scale", action="store_true", help="a fresh process's memory and start at scale")
    parser.add_argument("--data", type=Path, default=None, help="--scale: the writers' files, made once")
    args = parser.parse_args()
    if args.scale:
        scale(args)
        return
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
