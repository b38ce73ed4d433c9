"""The response cache's on-disk indexes (`pragexp.generation.cache.segments`): they answer as a scan of the
files does, an index damaged or stale is named and not trusted, a writer after a compaction is found, and
writers and compactions at once never give a torn answer. The indexes are made for files of any size here
(`segments.MIN_SIZE` set to 0) so that the tests' small files get them."""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from pragexp.generation.cache import ResponseCache, compact, records, segments

LOGGER = "pragexp.generation.cache"


@pytest.fixture(autouse=True)
def index_every_file(monkeypatch):
    monkeypatch.setattr(segments, "MIN_SIZE", 0)


def indexes(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(segments.SUFFIX))


def lookup(folder: Path, keys: list[str], on_disk: bool = True) -> tuple[dict, int, int]:
    """The answers found under `keys`, the keys with two answers, the keys the folder holds."""
    cache = ResponseCache(folder, on_disk_index=on_disk)
    found = cache.get_many(keys)
    figures = found, cache.conflicts, len(cache)
    cache.close()
    return figures


def fill(folder: Path, rng: random.Random, writers: int, keys: int) -> list[str]:
    """`writers` closed files of random answers over `keys` keys, some keys in several files with another
    answer (a model that is not deterministic), some twice in one file; the keys (some never stored)."""
    names = [f"key {i}" for i in range(keys)]
    for _ in range(writers):
        cache = ResponseCache(folder)
        for _ in range(0, keys, rng.randint(1, 9)):
            group = rng.sample(names, rng.randint(1, 6))
            cache.put_many({k: rng.choice([k, [k, rng.random()], "x" * rng.randint(0, 400)]) for k in group})
        if rng.random() < 0.5:
            cache.close()
        else:  # as a killed process leaves it: no CLOSE record
            cache._writer._drop()
    return names


@pytest.mark.parametrize("seed", range(6))
def test_the_on_disk_indexes_answer_as_a_scan_of_the_files(tmp_path, seed):
    """Random files (answers that disagree across files included): the same answers, the same keys with two
    answers and the same count as the in-memory index, before and after compaction; misses stay misses."""
    rng = random.Random(seed)
    names = fill(tmp_path, rng, rng.randint(1, 5), rng.randint(1, 300))
    wanted = [*names, "not stored", *rng.sample(names, min(5, len(names)))]
    scanned = lookup(tmp_path, wanted, on_disk=False)
    assert indexes(tmp_path) == []
    assert lookup(tmp_path, wanted) == scanned  # the first reader builds the indexes
    assert len(indexes(tmp_path)) == len(os.listdir(tmp_path)) // 2
    assert lookup(tmp_path, wanted) == scanned  # a new reader uses them
    few = ResponseCache(tmp_path)  # key by key (a search in Python) as in one batch (numpy)
    assert {k: v for k in wanted for k, v in few.get_many([k]).items()} == scanned[0]
    few.close()
    merged = compact(tmp_path)
    assert merged.conflicts == scanned[1]
    assert indexes(tmp_path) == [merged.pack + segments.SUFFIX]
    assert lookup(tmp_path, wanted) == (scanned[0], 0, scanned[2])


DAMAGES = ["truncated", "flipped", "header", "a field's type", "another file's", "stale", "empty"]


def with_meta(blob: bytearray, change) -> bytearray:
    """The index `blob` with its header's fields changed by `change` (same length), its checksum made anew."""
    at = len(segments.MAGIC)
    length = int.from_bytes(blob[at : at + 4], "little")
    meta = json.loads(bytes(blob[at + 4 : at + 4 + length]))
    changed = json.dumps(change(meta)).encode().ljust(length)
    assert len(changed) == length
    blob[at + 4 : at + 4 + length] = changed
    blob[-4:] = zlib.crc32(bytes(blob[:-4])).to_bytes(4, "little")
    return blob


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_or_stale_index_is_named_and_not_trusted(tmp_path, caplog, damage):
    names = fill(tmp_path, random.Random(7), 2, 200)
    expected = lookup(tmp_path, names, on_disk=False)
    merged = compact(tmp_path)
    index = tmp_path / (merged.pack + segments.SUFFIX)
    blob = bytearray(index.read_bytes())
    if damage == "truncated":
        del blob[len(blob) // 2 :]
    elif damage == "flipped":
        blob[-100] ^= 0x10  # inside the arrays
    elif damage == "header":
        blob[len(segments.MAGIC) + 8 : len(segments.MAGIC) + 20] = b"#" * 12
    elif damage == "a field's type":  # whole and checked, yet a count below 0, a number for a yes or no
        blob = with_meta(blob, lambda meta: {**meta, "records": -1, "closed": 1})
    elif damage == "another file's":
        other = ResponseCache(tmp_path / "other")
        other.put_many({"k": 1})
        other.close()
        compact(tmp_path / "other")
        [blob] = [bytearray(p.read_bytes()) for p in (tmp_path / "other").glob(f"*{segments.SUFFIX}")]
    elif damage == "stale":  # the data file's bytes changed (same size) since it was indexed
        data = bytearray((tmp_path / merged.pack).read_bytes())
        data[len(records.FILE_MAGIC) + 30] ^= 0xFF
        (tmp_path / merged.pack).write_bytes(bytes(data))
    else:
        blob = bytearray()
    index.write_bytes(bytes(blob))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        found, conflicts, count = lookup(tmp_path, names)
    assert f"the index {index.name} is not used" in caplog.text
    if damage == "stale":  # one record is damaged now: missed, and named
        assert merged.pack in caplog.text and len(found) == len(expected[0]) - 1
        assert all(expected[0][k] == v for k, v in found.items())
    else:
        assert (found, count) == (expected[0], expected[2])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER):  # rebuilt by the reader: trusted again
        assert lookup(tmp_path, names)[0] == found
    assert "is not used" not in caplog.text


def test_an_index_that_points_elsewhere_never_gives_a_wrong_answer(tmp_path, caplog):
    """An index whose checksum holds but whose offsets are shuffled (a bug, or a file swapped under it): each
    record read is checked against its key: misses and warnings, never another key's answer."""
    names = fill(tmp_path, random.Random(3), 1, 100)
    expected = lookup(tmp_path, names, on_disk=False)[0]
    merged = compact(tmp_path)
    segment = segments.load(tmp_path, merged.pack)
    offsets = segment.offsets.copy()
    random.Random(0).shuffle(offsets)
    shuffled = segments.Segment(merged.pack, segment.covered, True, segment.hashes, offsets, segment.lengths)
    segments.write(tmp_path, shuffled)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        found = lookup(tmp_path, names)[0]
    assert all(expected[k] == v for k, v in found.items()) and len(found) < len(expected)
    assert merged.pack in caplog.text and "changed since it was read" in caplog.text


def test_damage_in_an_indexed_file_is_named_and_never_answered(tmp_path, caplog):
    """A torn tail found as the index was built is named by every reader; bytes damaged after it was built
    give a miss and a warning; bytes appended after the CLOSE record are named."""
    cache = ResponseCache(tmp_path)
    for i in range(20):
        cache.put_many({f"k{i}": f"answer {i} " * 30})
    name = cache._writer.name
    cache._writer._drop()
    path = tmp_path / name
    with open(path, "ab") as f:
        f.write(records.encode("k99", b'"torn"')[:25])
    for _ in range(2):  # the reader that builds the index, then one that uses it
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            reader = ResponseCache(tmp_path)
            assert len(reader.get_many([f"k{i}" for i in range(20)])) == 20
        assert [n for n, _ in reader.damaged] == [name] and "torn tail" in caplog.text
        reader.close()
        caplog.clear()
    blob = bytearray(path.read_bytes())
    blob[len(records.FILE_MAGIC) + records.HEADER + 10] ^= 0xFF  # inside k0's record
    path.write_bytes(bytes(blob))
    reader = ResponseCache(tmp_path)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        found = reader.get_many([f"k{i}" for i in range(20)])
    assert "k0" not in found and len(found) == 19 and name in caplog.text
    reader.close()


def test_a_writer_after_compaction_is_found_and_settled_with_the_pack(tmp_path):
    names = fill(tmp_path, random.Random(11), 3, 150)
    reader = ResponseCache(tmp_path, refresh_every=0)
    before = reader.get_many(names)
    old = sorted(before)[0]
    compact(tmp_path)
    assert indexes(tmp_path) and reader.get_many(names) == before  # the files it read are gone: read again
    late = ResponseCache(tmp_path)  # a writer that never looked: a key the pack holds, another answer
    late.put_many({"new key": "new", old: "another answer"})
    settled = min(before[old], "another answer", key=lambda v: json.dumps(v, ensure_ascii=False))
    expected = {"new key": "new", old: settled}
    assert reader.get_many(["new key", old]) == expected and old in reader._index.conflicts
    assert lookup(tmp_path, ["new key", old])[:2] == (expected, 1)
    late.close()
    reader.close()
    merged = compact(tmp_path)
    assert merged.conflicts == 1 and lookup(tmp_path, ["new key", old])[:2] == (expected, 0)


def test_an_index_that_cannot_be_written_is_kept_in_memory(tmp_path, caplog, monkeypatch):
    names = fill(tmp_path, random.Random(5), 2, 100)
    expected = lookup(tmp_path, names, on_disk=False)

    def refused(folder, segment):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(segments, "write", refused)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        cache = ResponseCache(tmp_path)
        assert (cache.get_many(names), cache.conflicts, len(cache)) == expected
    assert len(cache._index.segments) == 2 and cache._index.entries == {} and indexes(tmp_path) == []
    assert "cannot write the index" in caplog.text
    cache.close()


# A writer of `count` answers value(i), in groups, looking some up first, as a job does.
WRITER = r"""
import random, sys
from pragexp.generation.cache import ResponseCache, segments
segments.MIN_SIZE = 0
folder, first, count, seed = sys.argv[1], *map(int, sys.argv[2:5])
rng, cache, keys = random.Random(seed), ResponseCache(folder), list(range(first, first + count))
while keys:
    n = rng.randint(1, 30)
    group, keys = keys[:n], keys[n:]
    if rng.random() < 0.3:
        cache.get_many([f"k{i}" for i in group])
    cache.put_many({f"k{i}": {"i": i, "text": "t" * (i % 500)} for i in group})
cache.close()
"""


@pytest.mark.slow
def test_writers_and_compactions_at_once_never_give_a_torn_answer(tmp_path):
    """Four processes write (and read) while this one compacts again and again and reads: every answer read
    is the one stored, and at the end every key is found, from one indexed pack."""
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(2000 * w), "2500", str(w)])
        for w in range(4)
    ]
    rng, compactions, reads = random.Random(0), 0, 0
    while any(p.poll() is None for p in procs):
        compact(tmp_path)
        compactions += 1
        cache = ResponseCache(tmp_path)
        found = cache.get_many([f"k{i}" for i in rng.sample(range(8500), 500)])
        assert all(v == {"i": int(k[1:]), "text": "t" * (int(k[1:]) % 500)} for k, v in found.items())
        reads += len(found)
        cache.close()
        time.sleep(0.05)
    assert [p.returncode for p in procs] == [0] * 4
    compact(tmp_path)  # (nothing to merge if the last one above came after the writers were done)
    [pack] = [n for n in os.listdir(tmp_path) if n.endswith(".pack")]
    assert indexes(tmp_path) == [pack + segments.SUFFIX] and len(os.listdir(tmp_path)) == 2
    found, conflicts, count = lookup(tmp_path, [f"k{i}" for i in range(8500)])
    assert count == 8500 and conflicts == 0 and len(found) == 8500
    assert all(v == {"i": int(k[1:]), "text": "t" * (int(k[1:]) % 500)} for k, v in found.items())
    print(f"{compactions} compactions while 4 writers wrote; {reads} answers read meanwhile, none torn")
