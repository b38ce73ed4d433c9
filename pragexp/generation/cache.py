"""The response cache: every model call of an LLM task, keyed by what decides its answer.

A key is the hash of (backend identity: backend, model, revision, ...; method; prompt or texts;
parameters; sample index; seed). Values live in one SQLite file (`<cache_dir>/llm/responses.sqlite`):
a write is a transaction, so a run that dies mid-way (an API error, a kill) leaves every answer it
had stored and nothing half-written; several processes (DDP ranks) may share the file.

`CachedBackend` wraps any backend: it answers what the cache has and asks the model only for the
rest. Re-running with another judge therefore makes no generation call, and the `sample`-th draw
of a prompt is the same on every run. `CacheSlot` is the one way a model or a judge puts its backend
behind the cache: it opens the file on first use, in the process that uses it (a DDP rank, a sweep job).
"""

from __future__ import annotations

import hashlib
import json
import logging
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
    """The SQLite file; `hits` and `misses` count the keys looked up in it (`get_many`), by every backend it serves."""

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
        self._db.close()


class CachedBackend(LLMBackend):
    """`backend` behind `cache`; `hits` and `misses` count answers, `backend.calls` the model calls."""

    def __init__(self, backend: LLMBackend, cache: ResponseCache):
        super().__init__()
        self.backend, self.cache = backend, cache
        self.name = backend.name
        self.hits = self.misses = 0

    def identity(self) -> dict:
        return self.backend.identity()

    def chat_text(self, messages: list[dict]) -> str | None:
        return self.backend.chat_text(messages)  # local rendering: nothing to cache

    @property
    def model_calls(self) -> int:
        return self.backend.calls

    def _key(self, method: str, payload, params: dict | None = None, sample: int | None = None) -> str:
        return ResponseCache.key(self.backend.identity(), method, payload, params, sample)

    def _lookup(self, keys: list[str]) -> dict:
        found = self.cache.get_many(keys)
        hits = sum(k in found for k in keys)
        self.hits += hits
        self.misses += len(keys) - hits
        return found

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        if not self.backend.cacheable:
            return self.backend.generate_samples(prompts, params, sample)
        keys = [self._key("generate", _prompt_key(p), params.key(), sample) for p in prompts]
        found = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            answers = self.backend.generate_samples([prompts[i] for i in todo], params, sample)
            fresh = {keys[i]: a for i, a in zip(todo, answers, strict=True)}
            self.cache.put_many(fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """One key per (context, option, pairing): an option scored under one prompt answers for every request
        that asks it again (a content-free prompt, a re-run with more options); the backend scores the rest in
        one call, its requests reduced to the options it lacks. The key also names the scorer's recipe
        (`SCORING`), so that numbers from another recipe never answer."""
        if not self.backend.cacheable:
            return self.backend.loglikelihood_many(requests)
        keys = [
            [
                self._key("loglikelihood_many", [r.context, o], {"scoring": SCORING, "pairing": r.pairing})
                for o in r.options
            ]
            for r in requests
        ]
        found = self._lookup([k for row in keys for k in row])
        todo: dict[
            tuple[str, str], dict[str, str]
        ] = {}  # (context, pairing) -> {option: key}, first-asked order
        for request, row in zip(requests, keys, strict=True):
            for option, key in zip(request.options, row, strict=True):
                if key not in found:
                    todo.setdefault((request.context, request.pairing), {})[option] = key
        if todo:
            asked = [ChoiceRequest(c, tuple(options), pairing) for (c, pairing), options in todo.items()]
            answers = self.backend.loglikelihood_many(asked)
            fresh = {
                todo[(r.context, r.pairing)][o]: [float(s.loglik), int(s.tokens), int(s.bytes)]
                for r, scores in zip(asked, answers, strict=True)
                for o, s in zip(r.options, scores, strict=True)
            }
            self.cache.put_many(fresh)
            found.update(fresh)
        return [[OptionScore(*found[k]) for k in row] for row in keys]

    def embed(self, texts: list[str]) -> torch.Tensor:
        if not self.backend.cacheable:
            return self.backend.embed(texts)
        keys = [self._key("embed", t) for t in texts]
        found = self._lookup(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        if todo:
            vectors = self.backend.embed([texts[i] for i in todo])
            fresh = {keys[i]: v.tolist() for i, v in zip(todo, vectors, strict=True)}
            self.cache.put_many(fresh)
            found.update(fresh)
        return torch.tensor([found[k] for k in keys], dtype=torch.float)


def _prompt_key(prompt: Prompt):
    """A prompt as the cache keys it: a templated prompt is the model's text as it is, never the same request as a
    raw one, and its draws' stream is named by its `seed_text` when it has one."""
    if not prompt.templated:
        return prompt.text
    return ["templated", prompt.text] + ([prompt.seed_text] if prompt.seed_text is not None else [])


class CacheSlot:
    """Where a model's or a judge's backend meets the response cache (`<cache_dir>/llm/responses.sqlite`): `wrap`
    puts a backend behind it (or returns it as it is, with no cache dir or `use_cache` off); the file is opened on
    first use, in the process that uses it, and closed by `close` (a task's teardown), which logs how many answers
    came from the file and how many the model was asked for: a run's time means little without it."""

    def __init__(self, cache_dir: str | Path | None, use_cache: bool = True):
        self.path = Path(cache_dir) / CACHE_FILE if cache_dir and use_cache else None
        self._cache: ResponseCache | None = None

    def wrap(self, backend: LLMBackend) -> LLMBackend:
        if self.path is None:
            return backend
        if self._cache is None:
            self._cache = ResponseCache(self.path)
        return CachedBackend(backend, self._cache)

    def close(self) -> None:
        if self._cache is not None:
            cache, self._cache = self._cache, None
            log.info(
                "response cache %s: %d answers found there, %d asked of the model",
                cache.path,
                cache.hits,
                cache.misses,
            )
            cache.close()
