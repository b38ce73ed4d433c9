"""Shipping answers (issue 53.4, pragexp/generation/cache/packs.py): `pack` takes only the answers some runs
used, with the identities they were keyed under; `unpack` adds them to another cache, where the runs replay
with no server, metrics key for key; a damaged or foreign pack is refused, naming what is wrong, and adds
nothing."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile

import pytest
from openai_server import Script, openai_server
from replay_runs import ludwig_overrides, run_at

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.cache import ResponseCache, answers
from pragexp.generation.cache.__main__ import main
from pragexp.generation.cache.cached_backend import CachedBackend, close_caches
from pragexp.generation.cache.identities import IdentityBook
from pragexp.generation.cache.packs import PackError, pack, unpack

RUNS = {  # three runs: two templates scored, one generated
    "t0": ["prompt.template=0"],
    "t1": ["prompt.template=1"],
    "gen": ["prompt.template=0", "prompt.scoring=generate"],
}


@pytest.mark.slow
def test_packed_runs_replay_from_another_cache_with_no_server(tmp_path, capsys):
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere" / "cache"
    served = {}
    with openai_server(Script()) as url:
        for name, extra in RUNS.items():
            served[name] = run_at(tmp_path / name, ludwig_overrides(url, cache, *extra))
        run_at(tmp_path / "unpacked", ludwig_overrides(url, cache, "prompt.template=2"))  # not packed
    out = tmp_path / "answers.tar"
    assert main(["pack", *(str(tmp_path / n) for n in RUNS), "--out", str(out)]) == 0
    used = set().union(*(u.keys for n in RUNS for u in answers.read(tmp_path / n)))
    manifest = json.loads(tarfile.open(out).extractfile("manifest.json").read())
    assert manifest["answers"] == len(used) < len(ResponseCache(cache / "llm" / "responses"))
    assert main(["unpack", str(out), "--cache-dir", str(elsewhere)]) == 0
    assert f"{len(used):,} answers added" in capsys.readouterr().out
    for name, extra in RUNS.items():  # the server is gone: each run answered from the unpacked cache alone
        assert run_at(tmp_path / f"{name}-replayed", ludwig_overrides(url, elsewhere, *extra)) == served[name]
    replayed = run_at(tmp_path / "asked", ludwig_overrides(url, elsewhere, *RUNS["t1"], "llm.replay=true"))
    assert replayed == served["t1"]
    assert main(["unpack", str(out), "--cache-dir", str(elsewhere)]) == 0  # again: nothing new
    assert f"0 answers added to {elsewhere / 'llm' / 'responses'}, {len(used):,} already there" in (
        capsys.readouterr().out
    )


class Echo(LLMBackend):
    name = "echo"

    def generate_samples(self, prompts, params, sample):
        return [f"{p.text}!" for p in prompts]


def small_pack(tmp_path):
    """A run's answers.json over three answers of a backend without a model, and its pack."""
    answers.forget()
    backend = CachedBackend(Echo(), tmp_path / "cache" / "llm" / "responses")
    backend.generate([Prompt("a"), Prompt("b"), Prompt("c")], GenerationParams())
    close_caches()
    (tmp_path / "run").mkdir()
    answers.write(tmp_path / "run")
    answers.forget()
    pack([tmp_path / "run"], tmp_path / "answers.tar")
    return tmp_path / "answers.tar"


def rewritten(tar_path, out, changes: dict[str, bytes | None]):
    """The tar with some members replaced (None: left out) or added."""
    with tarfile.open(tar_path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    members.update(changes)
    with tarfile.open(out, "w") as tar:
        for name, data in members.items():
            if data is not None:
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return out


def test_a_pack_unpacks_into_an_empty_cache_with_its_identities(tmp_path):
    tar_path = small_pack(tmp_path)
    pack([tmp_path / "run"], tmp_path / "again.tar")
    assert (tmp_path / "again.tar").read_bytes() == tar_path.read_bytes()  # the same runs, the same bytes
    (tmp_path / "scorecard.md").write_text("a sweep's own file, no run")
    pack([tmp_path], tmp_path / "sweep.tar")  # a sweep's (a suite's) folder: the runs in it
    assert (tmp_path / "sweep.tar").read_bytes() == tar_path.read_bytes()
    assert unpack(tar_path, tmp_path / "other").startswith("3 answers added")
    (record,) = IdentityBook(tmp_path / "other" / "llm" / "identities").all()
    assert record.identity == {"backend": "echo"}
    found = ResponseCache(tmp_path / "other" / "llm" / "responses")
    assert sorted(found.get_many(sorted(answers.read(tmp_path / "run")[0].keys)).values()) == [
        "a!",
        "b!",
        "c!",
    ]


def test_a_damaged_or_foreign_pack_is_refused_and_adds_nothing(tmp_path):
    tar_path = small_pack(tmp_path)
    with tarfile.open(tar_path) as tar:
        lines = tar.extractfile("answers.jsonl").read()
        manifest = json.loads(tar.extractfile("manifest.json").read())
    cases = {
        "answers.jsonl: SHA-256 ": {"answers.jsonl": lines.replace(b"a!", b"z!")},
        "no manifest.json": {"manifest.json": None},
        "field 'format' is 'other/1'": {
            "manifest.json": json.dumps({**manifest, "format": "other/1"}).encode()
        },
        "members the manifest does not list: extra.txt": {"extra.txt": b"hello"},
        "the member identities.json is missing": {"identities.json": None},
    }
    for i, (said, change) in enumerate(cases.items()):
        bad = rewritten(tar_path, tmp_path / f"bad{i}.tar", change)
        with pytest.raises(PackError, match=said) as caught:
            unpack(bad, tmp_path / "other")
        assert str(bad) in str(caught.value)
    (tmp_path / "not.tar").write_bytes(b"no tar at all" * 100)
    with pytest.raises(PackError, match="not a tar archive"):
        unpack(tmp_path / "not.tar", tmp_path / "other")
    assert not (tmp_path / "other").exists()  # nothing was added


def test_a_line_that_is_no_answer_is_named(tmp_path):
    tar_path = small_pack(tmp_path)
    with tarfile.open(tar_path) as tar:
        lines = tar.extractfile("answers.jsonl").read().splitlines(keepends=True)
        manifest = json.loads(tar.extractfile("manifest.json").read())
    lines[1] = b'{"key": "abc", "identity": "x", "value": 1}\n'
    changed = b"".join(lines)
    manifest["members"]["answers.jsonl"]["sha256"] = hashlib.sha256(changed).hexdigest()
    bad = rewritten(
        tar_path,
        tmp_path / "bad.tar",
        {"answers.jsonl": changed, "manifest.json": json.dumps(manifest).encode()},
    )
    with pytest.raises(PackError, match="answers.jsonl line 2: field 'key' is not a 64-digit hex key"):
        unpack(bad, tmp_path / "other")


def test_pack_refuses_a_run_without_its_record_or_its_answers(tmp_path, capsys):
    (tmp_path / "old").mkdir()
    assert main(["pack", str(tmp_path / "old"), "--out", str(tmp_path / "x.tar")]) == 2
    assert f"{tmp_path / 'old'}: no answers.json" in capsys.readouterr().err
    small_pack(tmp_path)
    for path in (tmp_path / "cache" / "llm" / "responses").iterdir():
        path.unlink()  # the answers are gone from the cache the run recorded
    with pytest.raises(PackError, match="3 of the 3 answers the runs used under echo"):
        pack([tmp_path / "run"], tmp_path / "y.tar")
    assert not (tmp_path / "y.tar").exists()
