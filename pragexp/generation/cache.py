"""The response cache: every model call of an LLM task, keyed by what decides its answer.

A key is the hash of (backend identity: backend, model, revision, ...; method; prompt or texts;
parameters; sample index; seed). Values live in one SQLite file (`<cache_dir>/llm/responses.sqlite`):
a write is a transaction, so a run that dies mid-way (an API error, a kill) leaves every answer it
had stored and nothing half-written; several processes (DDP ranks) may share the file.

`cached(backend, cache_dir, use_cache)` is the one place a backend is put behind the cache (as
lm-evaluation-harness's `CachingLM` wraps a model): the model (`model=llm`) and the judges call it with the
settings of their configs (`model.cache_dir`, `judge.cache_dir`, `use_cache`). `CachedBackend` answers what
the cache has and asks the model only for the rest, so re-running with another judge makes no generation call
and the `sample`-th draw of a prompt is the same on every run.

A process opens each file once, on first use (in the process that uses it: a DDP rank, a sweep job), and the
model and the judge share it. The file counts its own lookups: `close_caches()` (a task's teardown) logs, per
file, how many answers were found there and how many were asked of the model (a run's time means little
without it), and `kept()` says what each open file holds (a stopped job's message).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
from pathlib import Path

import torch

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt
from pragexp.generation.requests import ChoiceRequest, OptionScore
from pragexp.generation.scorer import SCORING

CACHE_FILE = "llm/responses.sqlite"
log = logging.getLogger(__name__)


class ResponseCache:
    """The SQLite file; `hits` and `misses` count the keys looked up in it (`get_many`), by every backend it
    serves, and `close` says them."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.hits = self.misses = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._set_up()

    def _set_up(self, attempts: int = 50) -> None:
        # Two ranks opening a new file at once: switching it to WAL takes an exclusive lock, and SQLite
        # answers "database is locked" at once there (its busy timeout does not cover it), so retry.
        for attempt in range(attempts):
            try:
                if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
                )
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))

    @staticmethod
    def key(*parts) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, object]:
        found: dict[str, object] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):  # SQLite's bound-parameter limit
            chunk = unique[start : start + 500]
            rows = self._db.execute(
                f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})", chunk
            )
            found.update((k, json.loads(v)) for k, v in rows)
        hits = sum(k in found for k in keys)
        self.hits += hits
        self.misses += len(keys) - hits
        return found

    def put_many(self, values: dict[str, object]) -> None:
        with self._db:  # one transaction: all of it or none of it
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in values.items()],
            )

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        if self.hits or self.misses:
            log.info(
                "response cache %s: %d answers found there, %d asked of the model",
                self.path,
                self.hits,
                self.misses,
            )
        self._db.close()


# This process's open files, one connection each, shared by every backend behind one. Keyed by process too: a
# forked process (a DataLoader worker, a DDP rank) never uses nor closes its parent's connections.
_open: dict[tuple[int, Path], ResponseCache] = {}


def open_cache(path: str | Path) -> ResponseCache:
    """The file at `path` as this process uses it: opened on first use, then the same connection."""
    key = (os.getpid(), Path(path).absolute())
    if key not in _open:
        _open[key] = ResponseCache(path)
    return _open[key]


def close_caches() -> None:
    """Close every file this process opened, each saying how many answers it found and how many it asked of the
    model; a later call opens them again."""
    for key in [k for k in _open if k[0] == os.getpid()]:
        _open.pop(key).close()


def kept() -> list[str]:
    """What each file this process has open holds, one phrase each (what a stopped job kept)."""
    return [
        f"{len(c):,} answers in the response cache {c.path}"
        for (pid, _), c in _open.items()
        if pid == os.getpid()
    ]


def cached(backend: LLMBackend, cache_dir: str | Path | None, use_cache: bool = True) -> LLMBackend:
    """`backend` behind the response cache `<cache_dir>/llm/responses.sqlite`; `backend` itself without a
    `cache_dir`, with `use_cache` off, for a backend that answers from the data (`cacheable` false: the reference
    backends) or one whose weights train (`finetune`: its answers change as they do)."""
    if not (cache_dir and use_cache and backend.cacheable) or backend.finetune != "none":
        return backend
    return CachedBackend(backend, Path(cache_dir) / CACHE_FILE)


class CachedBackend(LLMBackend):
    """`backend` behind the file at `path` (opened on first use: `open_cache`); `backend.calls` counts the model
    calls (`model_calls`), the file its lookups."""

    def __init__(self, backend: LLMBackend, path: str | Path):
        super().__init__()
        self.backend, self.path = backend, Path(path)
        self.name = backend.name

    @property
    def cache(self) -> ResponseCache:
        return open_cache(self.path)

    def identity(self) -> dict:
        return self.backend.identity()

    def key_identity(self, method: str) -> dict:
        return self.backend.key_identity(method)

    def chat_text(self, messages: list[dict]) -> str | None:
        return self.backend.chat_text(messages)  # local rendering: nothing to cache

    def count_tokens(self, text: str) -> int:
        return self.backend.count_tokens(text)

    def first_tokens(self, text: str, n: int) -> str:
        return self.backend.first_tokens(text, n)

    @property
    def model_calls(self) -> int:
        return self.backend.calls

    def _key(self, method: str, payload, params: dict | None = None, sample: int | None = None) -> str:
        return ResponseCache.key(self.backend.key_identity(method), method, payload, params, sample)

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        keys = [self._key("generate", _prompt_key(p), params.key(), sample) for p in prompts]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            answers = self.backend.generate_samples([prompts[i] for i in todo], params, sample)
            fresh = {keys[i]: a for i, a in zip(todo, answers, strict=True)}
            self.cache.put_many(fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """One key per (context, option, pairing, head): an option scored under one prompt answers for every
        request that asks it again (a content-free prompt, a re-run with more options); the backend scores the rest
        in one call, each request it lacks an option of asked whole (its options are scored together: the same
        numbers as a cold run's). The key also names the scorer's recipe (`SCORING`), so that numbers from another
        recipe never answer, and the head (`ChoiceRequest.head`: the part a scorer may run once for the prompt's
        items), part of the request."""
        keys = [
            [self._key("loglikelihood_many", [r.context, o], _choice_params(r)) for o in r.options]
            for r in requests
        ]
        found = self.cache.get_many([k for row in keys for k in row])
        # (context, pairing, head) -> {option: key}, in first-asked order
        todo: dict[tuple[str, str, int], dict[str, str]] = {}
        for request, row in zip(requests, keys, strict=True):
            if any(key not in found for key in row):
                asked_as = (request.context, request.pairing, request.head)
                todo.setdefault(asked_as, {}).update(zip(request.options, row, strict=True))
        if todo:
            asked = [ChoiceRequest(c, tuple(options), p, h) for (c, p, h), options in todo.items()]
            answers = self.backend.loglikelihood_many(asked)
            fresh = {
                key: [float(s.loglik), int(s.tokens), int(s.bytes)]
                for keyed, scores in zip(todo.values(), answers, strict=True)
                for key, s in zip(keyed.values(), scores, strict=True)
            }
            fresh = {key: value for key, value in fresh.items() if key not in found}  # stored answers stand
            self.cache.put_many(fresh)
            found.update(fresh)
        return [[OptionScore(*found[k]) for k in row] for row in keys]

    def embed(self, texts: list[str]) -> torch.Tensor:
        keys = [self._key("embed", t) for t in texts]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            vectors = self.backend.embed([texts[i] for i in todo])
            fresh = {keys[i]: v.tolist() for i, v in zip(todo, vectors, strict=True)}
            self.cache.put_many(fresh)
            found.update(fresh)
        return torch.tensor([found[k] for k in keys], dtype=torch.float)


def _choice_params(request: ChoiceRequest) -> dict:
    return {"scoring": SCORING, "pairing": request.pairing, "head": request.head}


def _prompt_key(prompt: Prompt):
    """A prompt as the cache keys it: a templated prompt is the model's text as it is, never the same request as a
    raw one, and its draws' stream is named by its `seed_text` when it has one; a `prefill` (the reply's start
    the model goes on from) is part of it."""
    prefill = [["prefill", prompt.prefill]] if prompt.prefill else []  # keys without one stay as they were
    if not prompt.templated:
        return [prompt.text, *prefill] if prefill else prompt.text
    return ["templated", prompt.text] + ([prompt.seed_text] if prompt.seed_text is not None else []) + prefill
