"""The response cache's storage (`pragexp.generation.cache`): its files, what a reader makes of
damaged or unfinished ones, two answers under one key, compaction, and answers stored as a backend hands them
over."""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.cache import ResponseCache, compact, records
from pragexp.generation.cache.cached_backend import CachedBackend, close_caches
from pragexp.generation.cache.files import NAME, host
from pragexp.generation.scoring.requests import ChoiceRequest

LOGGER = "pragexp.generation.cache"


def value_of(i: int):
    return {"reply": f"answer {i} " + "é" * (i % 7), "logliks": [-i / 3, i]}


def write(folder: Path, keys, close: bool = True) -> str:
    """Store value_of(i) under key f"k{i}" for each i, one put a key; the file's name."""
    cache = ResponseCache(folder)
    for i in keys:
        cache.put_many({f"k{i}": value_of(i)})
    name = cache._writer.name
    if close:
        cache.close()
    else:  # as a killed process leaves it: no CLOSE record, held by no one
        cache._writer._drop()
    return name


def read(folder: Path, keys, **kwargs) -> dict:
    cache = ResponseCache(folder, **kwargs)
    found = cache.get_many([f"k{i}" for i in keys])
    cache.close()
    return found


def assert_never_wrong(found: dict) -> None:
    for key, value in found.items():
        assert value == value_of(int(key[1:])), key


def test_answers_round_trip_in_a_file_of_their_writers_own(tmp_path):
    name = write(tmp_path, range(5))
    assert NAME.match(name) and f"-{host()}-{os.getpid()}-" in name
    blob = (tmp_path / name).read_bytes()
    assert blob.startswith(records.FILE_MAGIC) and blob.endswith(records.encode("", b"", records.CLOSE))
    assert read(tmp_path, range(6)) == {f"k{i}": value_of(i) for i in range(5)}
    second = write(tmp_path, [7])  # another writer: another file, read together with the first
    assert second != name and read(tmp_path, [1, 7]) == {"k1": value_of(1), "k7": value_of(7)}


def _record_offsets(path: Path) -> list[int]:
    start = len(records.FILE_MAGIC)
    return [r.offset for r in records.scan(path.read_bytes()[start:], start).records]


@pytest.mark.parametrize("damage", ["flipped", "truncated", "appended", "header"])
def test_a_damaged_file_gives_a_skip_naming_it_never_a_wrong_answer(tmp_path, caplog, damage):
    name = write(tmp_path, range(10))
    path = tmp_path / name
    blob = bytearray(path.read_bytes())
    fifth = _record_offsets(path)[5]
    if damage == "flipped":
        blob[fifth + 30 : fifth + 34] = bytes(b ^ 0x5A for b in blob[fifth + 30 : fifth + 34])
    elif damage == "truncated":
        del blob[fifth + 40 :]
    elif damage == "appended":
        blob += b"\x00garbage after the close record" * 3
    else:
        blob[:5] = b"oops!"
    path.write_bytes(bytes(blob))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        found = read(tmp_path, range(10))
    assert_never_wrong(found)
    expected = {
        "flipped": set(range(10)) - {5},
        "truncated": set(range(5)),
        "appended": set(range(10)),
        "header": set(),
    }[damage]
    assert {int(k[1:]) for k in found} == expected
    assert name in caplog.text and ("skipped" in caplog.text)


def test_random_damage_never_gives_a_wrong_answer(tmp_path):
    """200 files, each damaged at random (bytes flipped, cut, inserted, removed): every answer returned is the
    one stored, and each file keeps the records its damage did not touch."""
    rng = random.Random(0)
    clean = tmp_path / "clean"
    name = write(clean, range(40))
    original = (clean / name).read_bytes()
    returned = 0
    for trial in range(200):
        blob = bytearray(original)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(records.FILE_MAGIC), len(blob))
            kind = rng.choice(["flip", "cut", "insert", "delete"])
            if kind == "flip":
                blob[at] ^= 1 << rng.randrange(8)
            elif kind == "cut":
                del blob[at:]
            elif kind == "insert":
                blob[at:at] = rng.randbytes(rng.randint(1, 40))
            elif len(blob) > at + 1:
                del blob[at : at + rng.randint(1, 40)]
        folder = tmp_path / f"damaged{trial}"
        folder.mkdir()
        (folder / name).write_bytes(bytes(blob))
        found = read(folder, range(40))
        assert_never_wrong(found)
        returned += len(found)
    assert returned > 200 * 40 / 3  # damage costs the records it touches, not whole files


def test_a_long_answer_damaged_after_it_was_indexed_is_a_miss_and_a_warning(tmp_path, caplog):
    """A long answer is read again at its lookup (a short one is kept in memory, checked, at the first
    read)."""
    writer = ResponseCache(tmp_path)
    long = {f"k{i}": f"a long reply {i} " * 40 for i in range(3)}
    for key, reply in long.items():
        writer.put_many({key: reply})
    name = writer._writer.name
    writer.close()
    cache = ResponseCache(tmp_path)
    assert cache.get_many(["k1"]) == {"k1": long["k1"]}
    path = tmp_path / name
    blob = bytearray(path.read_bytes())
    second = _record_offsets(path)[1]
    blob[second + records.HEADER + 8] ^= 0xFF  # inside k1's value
    path.write_bytes(bytes(blob))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert cache.get_many(["k0", "k1"]) == {"k0": long["k0"]}
    assert name in caplog.text and "changed since it was read" in caplog.text
    cache.close()


def test_a_file_still_being_written_is_read_to_its_first_gap_and_on_when_its_writer_is_done(tmp_path, caplog):
    """A writer alive on this host (a process that sleeps): a stretch that is no record (a record being
    written; on a network file system, a later page seen first) holds the reader there, with no damage said;
    once the writer is gone, the stretch is damage, skipped and named, and the records after it are read."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        name = f"{time.time_ns():020d}-{host()}-{sleeper.pid}-{'ab' * 8}.log"
        good = [records.encode(f"k{i}", json.dumps(value_of(i)).encode()) for i in range(3)]
        (tmp_path / name).write_bytes(records.FILE_MAGIC + good[0] + b"\x00" * len(good[1]) + good[2])
        cache = ResponseCache(tmp_path, refresh_every=0)
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert cache.get_many(["k0", "k2"]) == {"k0": value_of(0)}
        assert caplog.text == "" and cache.damaged == {}
        with open(tmp_path / name, "ab") as f:  # a torn record at the end: still being written
            f.write(good[1][:20])
        assert cache.get_many(["k2"]) == {} and cache.damaged == {}
        sleeper.kill()
        sleeper.wait()
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            assert cache.get_many(["k0", "k2"]) == {"k0": value_of(0), "k2": value_of(2)}
        gap, tail = len(records.FILE_MAGIC) + len(good[0]), len(records.FILE_MAGIC) + len(b"".join(good))
        assert set(cache.damaged) == {(name, gap), (name, tail)}
        assert name in caplog.text and "torn tail" in caplog.text
        cache.close()
    finally:
        sleeper.kill()


def test_a_reader_picks_up_what_other_writers_appended_since(tmp_path):
    reader = ResponseCache(tmp_path, refresh_every=0)
    assert reader.get_many(["k1"]) == {}
    writer = ResponseCache(tmp_path)
    writer.put_many({"k1": value_of(1)})  # not closed: a live writer of this process
    assert reader.get_many(["k1"]) == {"k1": value_of(1)}
    writer.put_many({"k2": value_of(2)})
    assert reader.get_many(["k2"]) == {"k2": value_of(2)} and len(reader) == 2
    writer.close()
    reader.close()


def test_two_different_answers_under_one_key_give_the_same_one_everywhere(tmp_path, caplog):
    """Whatever order the files are read in, before and after compaction: the answer whose JSON sorts first,
    counted as a conflict."""
    for first, second in (("b", "a"), ("a", "b")):
        folder = tmp_path / first
        for value in (first, second):
            cache = ResponseCache(folder)
            cache.put_many({"key": value, f"only-{value}": value})
            cache.close()
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            reader = ResponseCache(folder)
            assert reader.get_many(["key"]) == {"key": "a"} and reader.conflicts == 1
            reader.close()
        assert "two different answers" in caplog.text
        merged = compact(folder)
        assert merged.conflicts == 1 and merged.answers == 3 and len(os.listdir(folder)) == 1
        assert ResponseCache(folder).get_many(["key", "only-b"]) == {"key": "a", "only-b": "b"}


def test_compaction_merges_finished_files_only_and_readers_see_the_same_answers(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        write(tmp_path, range(0, 10))
        write(tmp_path, range(5, 15), close=False)  # not closed, but its writer (of this process) is gone
        live = f"{time.time_ns():020d}-{host()}-{sleeper.pid}-{'cd' * 8}.log"  # a writer still at work
        (tmp_path / live).write_bytes(
            records.FILE_MAGIC + records.encode("k20", json.dumps(value_of(20)).encode())
        )
        old, recent = (f"{t:020d}-otherhost-7-{token * 8}.log" for t, token in ((1, "ef"), (2, "ab")))
        for name, i in ((old, 21), (recent, 22)):  # another host's, unclosed: idle for long enough, or not
            (tmp_path / name).write_bytes(
                records.FILE_MAGIC + records.encode(f"k{i}", json.dumps(value_of(i)).encode())
            )
        os.utime(tmp_path / old, (time.time() - 2 * 86400,) * 2)
        before = ResponseCache(tmp_path)
        everything = [*range(15), 20, 21, 22]
        assert before.get_many([f"k{i}" for i in everything]) == {f"k{i}": value_of(i) for i in everything}
        done = compact(tmp_path)
        assert done.answers == 16 and len(done.merged) == 3 and done.live == sorted([live, recent])
        assert sorted(os.listdir(tmp_path)) == sorted([done.pack, live, recent])
        # a reader whose index points into the files compacted away builds it again
        assert before.get_many([f"k{i}" for i in everything]) == {f"k{i}": value_of(i) for i in everything}
        assert read(tmp_path, everything) == {f"k{i}": value_of(i) for i in everything}
        assert compact(tmp_path).pack is None  # one pack and a live file: nothing to do
        before.close()
    finally:
        sleeper.kill()


def test_the_command_line_compacts_and_says_what_a_folder_holds(tmp_path):
    write(tmp_path, range(3))
    write(tmp_path, range(2, 6))
    command = [sys.executable, "-m", "pragexp.generation.cache"]
    stats = subprocess.run([*command, "stats", str(tmp_path)], capture_output=True, text=True, check=True)
    assert "6 answers in 2 files (2 finished, 0 still being written)" in stats.stdout
    done = subprocess.run([*command, "compact", str(tmp_path)], capture_output=True, text=True, check=True)
    assert "6 answers from 2 files into" in done.stdout and len(os.listdir(tmp_path)) == 1
    assert read(tmp_path, range(6)) == {f"k{i}": value_of(i) for i in range(6)}


def test_a_forked_process_writes_a_file_of_its_own(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.put_many({"k0": value_of(0)})
    pid = os.fork()
    if pid == 0:  # the child: the parent's cache object, its own file
        try:
            cache.put_many({"k1": value_of(1)})
            cache.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    cache.put_many({"k2": value_of(2)})
    cache.close()
    assert len(os.listdir(tmp_path)) == 2
    assert read(tmp_path, range(3)) == {f"k{i}": value_of(i) for i in range(3)}
    assert compact(tmp_path).damaged == 0


class HandsOver(LLMBackend):
    """Answers a call's prompts one by one, handing each over, and fails at the prompt `fail_at`."""

    name = "hands_over"

    def __init__(self, fail_at: str | None = None):
        super().__init__()
        self.fail_at = fail_at

    def generate_samples(self, prompts, params, sample):
        self.calls += 1
        replies = []
        for i, prompt in enumerate(prompts):
            if prompt.text == self.fail_at:
                raise RuntimeError("the server went away")
            replies.append(f"reply to {prompt.text}")
            self.answer_arrived(i, replies[-1])
        return replies


def test_answers_handed_over_are_stored_before_the_call_returns(tmp_path):
    prompts = [Prompt(f"p{i}") for i in range(5)]
    backend = CachedBackend(HandsOver(fail_at="p3"), tmp_path)
    with pytest.raises(RuntimeError, match="went away"):
        backend.generate_samples(prompts, GenerationParams(), 0)
    close_caches()
    again = CachedBackend(HandsOver(), tmp_path)
    assert again.generate_samples(prompts, GenerationParams(), 0) == [f"reply to p{i}" for i in range(5)]
    assert again.backend.calls == 1  # only p3 and p4 asked: p0..p2 came from the cache
    close_caches()


def test_the_scorer_hands_each_request_over_as_it_is_scored(tmp_path):
    """The in-process scorer: each request stored after the pass that completes it (several writes in one
    call), with the numbers the call returns."""
    backend = CachedBackend(HFBackend(model="tiny", device="cpu"), tmp_path)
    writes = []
    cache = backend.cache
    put = cache.put_many
    cache.put_many = lambda values: (writes.append(dict(values)), put(values))  # type: ignore[method-assign]
    requests = [
        ChoiceRequest(
            f"Question {i}: is it so?" + " and more" * i + "\nAnswer:", (" yes", " no", " not at all")
        )
        for i in range(12)
    ]
    scores = backend.loglikelihood_many(requests)
    stored = {k: v for w in writes for k, v in w.items()}
    assert len(writes) > 1 and len(stored) == 36 == sum(len(w) for w in writes)  # each once, in parts
    assert sorted(v[0] for v in stored.values()) == sorted(s.loglik for row in scores for s in row)
    close_caches()


def test_a_sqlite_file_of_before_converts_into_a_folder_whose_answers_are_found(tmp_path):
    """experiments/llm/convert_response_cache.py: the rows of the old single file (its table as it was), found
    under the same keys in the folder."""
    old = tmp_path / "llm" / "responses.sqlite"
    old.parent.mkdir(parents=True)
    rows = {f"k{i}": value_of(i) for i in range(2500)}
    with closing(sqlite3.connect(old)) as db, db:
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.executemany("INSERT INTO responses VALUES (?, ?)", [(k, json.dumps(v)) for k, v in rows.items()])
    script = Path(__file__).resolve().parents[1] / "experiments" / "llm" / "convert_response_cache.py"
    done = subprocess.run([sys.executable, str(script), str(old)], capture_output=True, text=True, check=True)
    assert "2,500 answers copied" in done.stdout
    assert read(tmp_path / "llm" / "responses", range(2500)) == rows


def test_a_file_that_grows_while_it_is_compacted_is_kept(tmp_path, monkeypatch):
    """Another host's file idle for a day counts as finished; if its writer wakes up while the compaction
    writes the pack, the file is kept (the pack holds what was read of it) and nothing is lost."""
    from pragexp.generation.cache import compaction

    idle = f"{1:020d}-otherhost-7-{'ef' * 8}.log"
    path = tmp_path / idle
    path.write_bytes(records.FILE_MAGIC + records.encode("k1", json.dumps(value_of(1)).encode()))
    os.utime(path, (time.time() - 2 * 86400,) * 2)
    write_pack = compaction._write_pack

    def woken(index, pack):
        with open(path, "ab") as f:  # its writer appends as the pack is being written
            f.write(records.encode("k2", json.dumps(value_of(2)).encode()))
        return write_pack(index, pack)

    monkeypatch.setattr(compaction, "_write_pack", woken)
    done = compact(tmp_path)
    assert done.grew == [idle] and done.merged == [] and done.answers == 1
    assert sorted(os.listdir(tmp_path)) == sorted([done.pack, idle])
    assert read(tmp_path, [1, 2]) == {"k1": value_of(1), "k2": value_of(2)}
