"""The response cache under load and faults, on this machine's files: 16 processes writing one folder at once,
a writer killed with SIGKILL in the middle of a write, a full disk, a job killed while its server answers
(each test prints its figures: answers written, found, lost)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from openai_server import Script, openai_server

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.backends.openai import OpenAIBackend
from pragexp.generation.cache import CacheWriteError, ResponseCache, compact, records
from pragexp.generation.cache.cached_backend import CachedBackend, cached, close_caches

# A writing process: `load` stores value(i) for its keys in groups of 1 to 40, looking some up first as a job
# does; `tear` (the seed-th record write cut in half, then SIGKILL) and `big` (large values, until killed)
# print each key once its put_many returned.
WRITER = r"""
import os, random, signal, sys
from pragexp.generation.cache import ResponseCache, files

mode, folder, first, count, seed = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
size = (lambda i: (i * 7919) % 300) if mode == "load" else (lambda i: (1 + i % 4) * 1_000_000)
value = lambda i: {"i": i, "text": chr(65 + i % 26) * size(i)}
rng, cache = random.Random(seed), ResponseCache(folder)
if mode == "tear":
    write_all, writes = files._write_all, [0]
    def torn(fd, data):
        writes[0] += data.startswith(b"\xffRC1")
        if writes[0] == seed:
            os.write(fd, data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        write_all(fd, data)
    files._write_all = torn
keys = list(range(first, first + count))
while keys:
    n = rng.randint(1, 40) if mode == "load" else 1
    group, keys = keys[:n], keys[n:]
    if mode == "load" and rng.random() < 0.2:
        cache.get_many([f"k{i}" for i in group])
    cache.put_many({f"k{i}": value(i) for i in group})
    if mode != "load":
        print(group[0], flush=True)
cache.close()
"""


def value(i: int, big: bool = False) -> dict:
    size = (1 + i % 4) * 1_000_000 if big else (i * 7919) % 300
    return {"i": i, "text": chr(65 + i % 26) * size}


def writer(mode: str, folder: Path, first: int, count: int, seed: int) -> subprocess.Popen:
    args = [sys.executable, "-c", WRITER, mode, str(folder), str(first), str(count), str(seed)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def every_record(folder: Path) -> list[tuple[str, str, bytes]]:
    """(file, key, value) of every whole answer record in the folder's files."""
    found = []
    for path in sorted(folder.iterdir()):
        blob = path.read_bytes()
        start = len(records.FILE_MAGIC)
        for r in records.scan(blob[start:], start).records:
            if r.kind == records.ANSWER:
                found.append(
                    (path.name, r.key, blob[r.offset : r.offset + r.length][records.HEADER + len(r.key) :])
                )
    return found


@pytest.mark.slow
def test_16_processes_write_one_folder_at_once_and_every_answer_is_there_once(tmp_path):
    """16 writers of 2,000 answers each, neighbours sharing 1,000 keys: every answer is in the folder, each
    record equal to what its writer stored (nothing torn or mixed), each key once to a reader and in the
    pack."""
    started = time.monotonic()
    procs = [writer("load", tmp_path, 1000 * w, 2000, w) for w in range(16)]
    for proc in procs:
        proc.communicate(timeout=300)
    assert [p.returncode for p in procs] == [0] * 16, procs[0].stderr
    seconds = time.monotonic() - started
    keys = range(17_000)  # 16 writers x 2,000, overlapping by 1,000: 17,000 distinct
    stored = every_record(tmp_path)
    assert all(json.loads(v) == value(int(k[1:])) for _, k, v in stored)
    assert {k for _, k, _ in stored} == {f"k{i}" for i in keys}
    cache = ResponseCache(tmp_path)
    found = cache.get_many([f"k{i}" for i in keys])
    assert len(cache) == 17_000 and cache.conflicts == 0 and cache.damaged == {}
    assert found == {f"k{i}": value(i) for i in keys}
    cache.close()
    merged = compact(tmp_path)
    pack = every_record(tmp_path)
    assert merged.answers == len(pack) == 17_000 and len({k for _, k, _ in pack}) == 17_000
    print(
        f"16 writers in {seconds:.1f} s: {len(stored):,} answer records written (32,000 put, the rest "
        f"already known to their writer), {len(found):,} of 17,000 keys found, lost 0; pack: {len(pack):,} "
        "records"
    )


@pytest.mark.slow
def test_a_writer_killed_in_the_middle_of_a_write_keeps_every_answer_it_finished(tmp_path, caplog):
    """The 5th record write cut in half, then SIGKILL: the 4 answers before it are found, the torn one is
    not, and the torn tail is counted and named in the log."""
    proc = writer("tear", tmp_path, 0, 10, 5)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    finished = [int(line) for line in out.split()]
    assert finished == [0, 1, 2, 3]
    [name] = os.listdir(tmp_path)
    with caplog.at_level("WARNING", logger="pragexp.generation.cache"):
        cache = ResponseCache(tmp_path)
        found = cache.get_many([f"k{i}" for i in range(10)])
    assert found == {f"k{i}": value(i, big=True) for i in finished}
    assert (
        [n for n, _ in cache.damaged] == [name] and f"{name}: " in caplog.text and "torn tail" in caplog.text
    )
    cache.close()
    print(f"torn write: {len(finished)} answers finished, {len(found)} found, lost 0; 1 torn tail skipped")


@pytest.mark.slow
def test_writers_killed_at_random_moments_lose_nothing_they_finished(tmp_path):
    """Writers of 1-4 MB answers killed with SIGKILL at random moments, 8 times into one folder: every answer
    a writer finished is found, every answer found is the one stored, torn tails are skipped."""
    rng, finished, torn = random.Random(1), [], 0
    for round_ in range(8):
        proc = writer("big", tmp_path, 1000 * round_, 40, round_)
        first = proc.stdout.readline()  # it has started writing
        time.sleep(rng.uniform(0.0, 0.2))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=60)
        finished += [int(line) for line in (first + out).split()]
        cache = ResponseCache(tmp_path)
        found = cache.get_many([f"k{i}" for i in range(1000 * round_, 1000 * round_ + 1000)])
        assert all(found[f"k{i}"] == value(i, big=True) for i in finished if i >= 1000 * round_)
        assert all(v == value(int(k[1:]), big=True) for k, v in found.items())
        torn = len(cache.damaged)
        cache.close()
    found = ResponseCache(tmp_path).get_many([f"k{i}" for i in finished])
    assert len(found) == len(finished)
    shutil.rmtree(tmp_path)  # up to a GB of answers
    print(
        f"8 writers killed: {len(finished)} answers finished, {len(found)} found, lost 0; {torn} torn tails"
    )


class Bulky(LLMBackend):
    """Replies of 20 kB, handed over one by one."""

    name = "bulky"

    def generate_samples(self, prompts, params, sample):
        self.calls += 1
        replies = [f"{p.text}:" + "r" * 20_000 for p in prompts]
        for i, reply in enumerate(replies):
            self.answer_arrived(i, reply)
        return replies


@pytest.mark.slow
def test_a_full_disk_stops_the_run_naming_the_folder_and_keeps_what_was_stored(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a 1 MiB tmpfs here ({made.stderr.decode().strip()}): needs root")
    try:
        folder, params, stored = mount / "llm" / "responses", GenerationParams(), []
        backend = CachedBackend(Bulky(), folder)
        with pytest.raises(CacheWriteError) as error:
            for batch in range(200):  # 200 x 4 x 20 kB: far more than 1 MiB
                prompts = [Prompt(f"p{batch}-{j}") for j in range(4)]
                backend.generate_samples(prompts, params, 0)
                stored += prompts
        assert str(folder) in str(error.value) and "No space left on device" in str(error.value)
        close_caches()
        again = CachedBackend(Bulky(), folder)
        replies = again.generate_samples(stored, params, 0)
        assert replies == [f"{p.text}:" + "r" * 20_000 for p in stored] and again.model_calls == 0
        close_caches()
        print(f"full disk: {len(stored)} answers stored before it, {len(replies)} found after, lost 0")
    finally:
        subprocess.run(["umount", str(mount)], check=False)


ASKS = r"""
import sys
from pragexp.generation.backends.base import GenerationParams, Prompt
from pragexp.generation.cache.cached_backend import cached
from pragexp.generation.backends.openai import OpenAIBackend

url, cache_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
backend = cached(OpenAIBackend(model="m", base_url=url, api_key_env=None, concurrency=8), cache_dir)
backend.generate([Prompt(f"question {i}") for i in range(n)], GenerationParams())
"""


@pytest.mark.slow
def test_a_job_killed_before_its_call_returns_keeps_what_its_server_answered(tmp_path):
    """One generation call of 151 prompts; the server answers 150 and holds the last: the 150 are in the
    cache while the call is still under way; the job is killed (SIGKILL); the rerun asks the server only the
    one it never answered."""
    release = threading.Event()

    def reply(body) -> str:
        text = body["messages"][-1]["content"]
        if text == "question 150":
            release.wait(120)
        return f"reply to {text}"

    script = Script(reply=reply)
    with openai_server(script) as url:
        proc = subprocess.Popen(
            [sys.executable, "-c", ASKS, url, str(tmp_path), "151"], stderr=subprocess.PIPE
        )
        try:
            folder, deadline = tmp_path / "llm" / "responses", time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if folder.is_dir() and len(ResponseCache(folder)) >= 150:
                    break
                time.sleep(0.2)
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
        finally:
            release.set()
            proc.kill()
        asked = len(script.requests)
        backend = cached(OpenAIBackend(model="m", base_url=url, api_key_env=None), tmp_path)
        replies = backend.generate([Prompt(f"question {i}") for i in range(151)], GenerationParams())
        close_caches()
    again = [body["messages"][-1]["content"] for path, _, body in script.requests[asked:] if "chat" in path]
    assert replies == [[f"reply to question {i}"] for i in range(151)] and again == ["question 150"]
    print(f"killed job: 150 answered by the server, 150 found by the rerun, lost 0; asked again: {again}")
