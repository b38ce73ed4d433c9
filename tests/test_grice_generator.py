"""The GRICE generator's files (pragexp.data.grice): the same seed writes the same bytes (across hash seeds
too), writes are atomic, bad arguments are refused, and the command line. Its rounds, splits and lexicon have
their own modules (test_grice_generator_rounds, _splits, _lexicon)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from grice_cases import GEN, REPO, seeds, shipped_lexicon, splits
from hypothesis import HealthCheck, given, settings

from pragexp.data.grice.generator import (
    GriceGenerator,
    load_lexicon,
    write_dataset,
)
from pragexp.data.grice.generator.writer import write_records


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(split=splits, seed=seeds)
def test_same_seed_byte_identical_files(tmp_path, split, seed):
    a, b = tmp_path / f"a{seed}.json", tmp_path / f"b{seed}.json"
    write_dataset(a, split, 12, seed)
    write_dataset(b, split, 12, seed)
    assert a.read_bytes() == b.read_bytes()
    data = json.loads(a.read_text())
    assert data["split"] == split and data["version"] == "v0.1" and len(data["data"]["dialogs"]) == 12


def test_different_seeds_differ_and_dialog_k_independent_of_n(tmp_path):
    write_dataset(tmp_path / "a.json", "train", 8, 1)
    write_dataset(tmp_path / "b.json", "train", 8, 2)
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "b.json").read_bytes()
    short = list(GEN.dialogs("test", 4, 9))
    long = list(GEN.dialogs("test", 9, 9))
    assert long[:4] == short


def test_deterministic_across_hash_seeds(tmp_path):
    code = (
        "import sys; from pragexp.data.grice.generator import write_dataset; "
        "write_dataset(sys.argv[1], 'dev', 6, 3)"
    )
    outs = []
    for hs in ("1", "2"):
        out = tmp_path / f"h{hs}.json"
        env = dict(os.environ, PYTHONHASHSEED=hs, PYTHONPATH=str(REPO))
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env, cwd=tmp_path)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_write_counts(tmp_path):
    counts = write_dataset(tmp_path / "t.json", "test", 10, 0)
    assert counts["dialogs"] == 10
    assert counts["test_condition"] == {"cb": 2, "ig": 2, "li": 2, "re": 2, "st": 2}
    data = json.loads((tmp_path / "t.json").read_text())
    assert sum(counts["rounds"].values()) == sum(len(d["dialog"]) for d in data["data"]["dialogs"])


def test_atomic_write_leaves_nothing_on_error(tmp_path):
    target = tmp_path / "out.json"

    def records():
        yield from GEN.dialogs("train", 3, 0)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        write_records(target, records(), "train")
    assert list(tmp_path.iterdir()) == []
    # an existing file survives a failed rewrite untouched
    target.write_text("old")
    with pytest.raises(RuntimeError):
        write_records(target, records(), "train")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_atomic_write_on_keyboard_interrupt(tmp_path):
    def records():
        yield from GEN.dialogs("dev", 2, 0)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_records(tmp_path / "x.json", records(), "dev")
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="split"):
        GEN.dialogue("validation", 0, 0)
    with pytest.raises(ValueError, match="split"):
        write_dataset(tmp_path / "x.json", "nope", 1, 0)
    with pytest.raises(ValueError, match="sum to 1"):
        GriceGenerator(implicature_mix={"explicit": 0.5, "relevance": 0.2})
    with pytest.raises(ValueError, match="sarcasm"):
        GriceGenerator(implicature_mix={"explicit": 0.5, "sarcasm": 0.5})
    raw = shipped_lexicon()
    del raw["colours"]
    bad = tmp_path / "bad_lex.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="colours") as err:
        load_lexicon(bad)
    assert str(bad) in str(err.value)
    with pytest.raises(ValueError, match="not found"):
        load_lexicon(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="seed"):
        write_dataset(tmp_path / "x.json", "train", 1, "0")
    with pytest.raises(ValueError, match="n_dialogs"):
        write_dataset(tmp_path / "x.json", "train", -1, 0)
    assert not (tmp_path / "x.json").exists()


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pragexp.data.grice", *args], capture_output=True, text=True, env=env, cwd=cwd
    )


def test_cli_writes_valid_file(tmp_path):
    out = tmp_path / "sub" / "test.json"
    res = _cli("--split", "test", "--dialogs", "10", "--seed", "3", "--out", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "wrote 10 test dialogues" in res.stdout and str(out) in res.stdout
    data = json.loads(out.read_text())
    assert len(data["data"]["dialogs"]) == 10 and data["split"] == "test"
    assert [p.name for p in out.parent.iterdir()] == ["test.json"]


def test_cli_mix(tmp_path):
    out = tmp_path / "dev.json"
    res = _cli(
        "--split",
        "dev",
        "--dialogs",
        "20",
        "--mix",
        "explicit=0.5,ignorance=0.5",
        "--quiet",
        "--out",
        str(out),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    kinds = {r["implicature"] for d in json.loads(out.read_text())["data"]["dialogs"] for r in d["dialog"]}
    assert kinds == {"explicit", "ignorance"}
    res = _cli("--split", "dev", "--mix", "explicit=0.5,irony=0.5", "--out", str(out), cwd=tmp_path)
    assert res.returncode == 2 and "irony" in res.stderr


def test_cli_errors(tmp_path):
    res = _cli("--split", "bogus", "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert res.returncode == 2 and "invalid choice" in res.stderr
    res = _cli("--split", "train", "--dialogs", "-3", "--out", str(tmp_path / "x.json"), cwd=tmp_path)
    assert res.returncode == 2 and "non-negative" in res.stderr
    res = _cli(
        "--split",
        "train",
        "--dialogs",
        "1",
        "--out",
        str(tmp_path / "x.json"),
        "--lexicon",
        str(tmp_path / "nope.json"),
        cwd=tmp_path,
    )
    assert res.returncode == 2 and "nope.json" in res.stderr
    assert not (tmp_path / "x.json").exists()
