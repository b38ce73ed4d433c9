"""The response cache: every model call of an LLM task, keyed by what decides its answer.

A key is the hash of (backend identity: backend, model, revision, ...; method; prompt or texts;
parameters; sample index; seed). Answers live in a folder (`<cache_dir>/llm/responses/`) that any number of
processes on any number of hosts write at once, each to a file of its own, with no lock (this package's
storage: its guarantees, its format, its compaction). Answers are stored as they arrive: a backend hands each
answer (or each batch) over as it comes (`LLMBackend.answer_arrived`), and the cache writes it at once, so a
run killed before a call returns keeps what the model had answered.

`cached(backend, cache_dir, use_cache)` is the one place a backend is put behind the cache (as
lm-evaluation-harness's `CachingLM` wraps a model): the model (`model=llm`) and the judges call it with the
settings of their configs (`model.cache_dir`, `judge.cache_dir`, `use_cache`). `CachedBackend` answers what
the cache has and asks the model only for the rest, so re-running with another judge makes no generation call
and the `sample`-th draw of a prompt is the same on every run.

A process opens each folder once, on first use (in the process that uses it: a DDP rank, a sweep job), and the
model and the judge share it. The folder counts its own lookups: `close_caches()` (a task's teardown) logs,
per folder, how many answers were found there and how many were asked of the model (a run's time means little
without it), and `kept()` says what each open folder holds (a stopped job's message).

The identity the keys rest on is recorded beside the answers (`identities`), and the keys a run used go into
its folder (`answers`); `llm.replay` answers from the cache alone under a recorded identity (`replay`), and
`packs` ships the answers some runs used.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.generation.cache import ResponseCache, answers, replay
from pragexp.generation.cache.identities import IDENTITIES, RESPONSES, IdentityBook, Recorded
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore
from pragexp.generation.scoring.scorer import SCORING

CACHE_DIR = RESPONSES


# This process's open folders, shared by every backend behind one. Keyed by process too: a forked process (a
# DataLoader worker, a DDP rank) never uses nor closes its parent's (it writes a file of its own).
_open: dict[tuple[int, Path], ResponseCache] = {}


def open_cache(path: str | Path) -> ResponseCache:
    """The folder at `path` as this process uses it: opened on first use, then the same one."""
    key = (os.getpid(), Path(path).absolute())
    if key not in _open:
        _open[key] = ResponseCache(path)
    return _open[key]


def close_caches() -> None:
    """Close every folder this process opened, each saying how many answers it found and how many it asked of
    the model; a later call opens them again."""
    for key in [k for k in _open if k[0] == os.getpid()]:
        _open.pop(key).close()


def kept() -> list[str]:
    """What each folder this process has open holds, one phrase each (what a stopped job kept)."""
    return [
        f"{len(c):,} answers in the response cache {c.path}"
        for (pid, _), c in _open.items()
        if pid == os.getpid()
    ]


def cached(backend: LLMBackend, cache_dir: str | Path | None, use_cache: bool = True) -> LLMBackend:
    """`backend` behind the response cache `<cache_dir>/llm/responses/`; `backend` itself without a
    `cache_dir`, with `use_cache` off, for a backend that answers from the data (`cacheable` false: the
    reference backends) or one whose weights train (`finetune`: its answers change as they do). A replay
    (`llm.replay`: true or a run folder) needs the cache: refused without it."""
    if not (cache_dir and use_cache and backend.cacheable) or backend.finetune != "none":
        if replay.mode(getattr(backend, "replay", "auto")) not in ("auto", "false"):
            raise ValueError(
                f"llm.replay={backend.replay} answers from the response cache: give it one (a cache_dir, "
                "use_cache=true; a model that trains has none)"
            )
        return backend
    return CachedBackend(backend, Path(cache_dir) / CACHE_DIR)


class CachedBackend(LLMBackend):
    """`backend` behind the folder at `path` (opened on first use: `open_cache`); `backend.calls` counts the
    model calls (`model_calls`), the folder its lookups. The identity its keys rest on is resolved at the
    first call (`replay.resolve`: the backend's own, recorded beside the answers, or a recorded one that a
    replay answers under without asking the model), and the keys each call used are noted for the run's
    `answers.json` (`answers`)."""

    def __init__(self, backend: LLMBackend, path: str | Path):
        super().__init__()
        self.backend, self.path = backend, Path(path)
        self.name = backend.name
        self.book = IdentityBook(self.path.parent / Path(IDENTITIES).name)  # <cache_dir>/llm/identities
        self._keyed: replay.Keyed | None = None
        self._keying = threading.Lock()  # a backend's threads may ask at once: one probe

    @property
    def cache(self) -> ResponseCache:
        return open_cache(self.path)

    @property
    def keyed(self) -> replay.Keyed:
        with self._keying:
            if self._keyed is None:
                self._keyed = replay.resolve(self.backend, self.book)
        return self._keyed

    @property
    def replaying(self) -> bool:
        return self.keyed.replaying

    def identity(self) -> dict:
        return self.keyed.record.identity if self.replaying else self.backend.identity()

    def _current(self) -> Recorded:
        """The identity this call's keys rest on, as recorded: a backend's may change as it trains (the
        benchmark curves' `StepBackend` names the weights as they stand)."""
        keyed = self.keyed
        identity = keyed.record.identity if keyed.replaying else self.backend.identity()
        if identity is keyed.record.identity or identity == keyed.record.identity:
            return keyed.record
        return dataclasses.replace(keyed.record, identity=identity)

    def key_identity(self, method: str) -> dict:
        if not self.replaying:
            return self.backend.key_identity(method)
        unread = self.backend.not_read_by.get(method, ())
        return {k: v for k, v in self.identity().items() if k not in unread}

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
        return ResponseCache.key(self.key_identity(method), method, payload, params, sample)

    def _used(self, keys: list[str], found: dict, first: Callable[[], str]) -> None:
        """Note a call's keys for the run's record; a replay that lacks some of them stops, naming the first
        request without its answer (`first()`, in short)."""
        answers.note(self.path, self._current(), keys)
        missing = sum(k not in found for k in keys)
        if missing and self.replaying:
            raise replay.missing(self.keyed, self.path, first(), missing, len(keys))

    @contextmanager
    def _storing(
        self, stored: Callable[[int, object], dict[str, object]]
    ) -> Iterator[Callable[[list], None]]:
        """For one call of the backend: each answer it hands over as it arrives (`LLMBackend.answer_arrived`:
        the j-th of the call's) stored at once, as `stored(j, answer)` says (key -> value); yields the
        function that stores, once the call returns, the answers it did not hand over."""
        handed: set[int] = set()

        def one(j: int, answer) -> None:
            self.cache.put_many(stored(j, answer))
            handed.add(j)

        def rest(answers: list) -> None:
            self.cache.put_many(
                {k: v for j, a in enumerate(answers) if j not in handed for k, v in stored(j, a).items()}
            )

        # any backend: one that is no LLMBackend (a wrapper) just hands nothing over
        before = getattr(self.backend, "on_answer", None)
        self.backend.on_answer = one
        try:
            yield rest
        finally:
            self.backend.on_answer = before

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        keys = [self._key("generate", _prompt_key(p), params.key(), sample) for p in prompts]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        self._used(keys, found, lambda: f"generate (draw {sample}) {replay.shown(prompts[todo[0]].text)}")
        if todo:
            with self._storing(lambda j, reply: {keys[todo[j]]: reply}) as store_rest:
                answers = self.backend.generate_samples([prompts[i] for i in todo], params, sample)
                store_rest(answers)
            found.update((keys[i], a) for i, a in zip(todo, answers, strict=True))
        return [found[k] for k in keys]

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        """One key per (context, option, pairing, head): an option scored under one prompt answers for every
        request that asks it again (a content-free prompt, a re-run with more options); the backend scores the
        rest in one call, each request it lacks an option of asked whole (its options are scored together: the
        same numbers as a cold run's). The key also names the scorer's recipe (`SCORING`), so that numbers
        from another recipe never answer, and the head (`ChoiceRequest.head`: the part a scorer may run once
        for the prompt's items), part of the request."""
        keys = [
            [self._key("loglikelihood_many", [r.context, o], _choice_params(r)) for o in r.options]
            for r in requests
        ]
        flat = [k for row in keys for k in row]
        found = self.cache.get_many(flat)
        gaps = (r for r, row in zip(requests, keys, strict=True) if any(k not in found for k in row))
        self._used(
            flat, found, lambda: f"loglikelihood of the options after {replay.shown(next(gaps).context)}"
        )
        # (context, pairing, head) -> {option: key}, in first-asked order
        todo: dict[tuple[str, str, int], dict[str, str]] = {}
        for request, row in zip(requests, keys, strict=True):
            if any(key not in found for key in row):
                asked_as = (request.context, request.pairing, request.head)
                todo.setdefault(asked_as, {}).update(zip(request.options, row, strict=True))
        if todo:
            asked = [ChoiceRequest(c, tuple(options), p, h) for (c, p, h), options in todo.items()]
            option_keys = [list(keyed.values()) for keyed in todo.values()]

            def stored(j: int, scores: list[OptionScore]) -> dict[str, list]:
                return {  # answers stored before stand
                    key: [float(s.loglik), int(s.tokens), int(s.bytes)]
                    for key, s in zip(option_keys[j], scores, strict=True)
                    if key not in found
                }

            with self._storing(stored) as store_rest:
                answers = self.backend.loglikelihood_many(asked)
                store_rest(answers)
            for j, scores in enumerate(answers):
                found.update(stored(j, scores))
        return [[OptionScore(*found[k]) for k in row] for row in keys]

    def embed(self, texts: list[str]) -> torch.Tensor:
        keys = [self._key("embed", t) for t in texts]
        found = self.cache.get_many(keys)
        todo = [i for i, k in enumerate(keys) if k not in found]
        self._used(keys, found, lambda: f"embed {replay.shown(texts[todo[0]])}")
        if todo:
            with self._storing(lambda j, vector: {keys[todo[j]]: vector.tolist()}) as store_rest:
                vectors = self.backend.embed([texts[i] for i in todo])
                store_rest(list(vectors))
            found.update((keys[i], v.tolist()) for i, v in zip(todo, vectors, strict=True))
        return torch.tensor([found[k] for k in keys], dtype=torch.float)


def _choice_params(request: ChoiceRequest) -> dict:
    return {"scoring": SCORING, "pairing": request.pairing, "head": request.head}


def _prompt_key(prompt: Prompt) -> list:
    """A prompt as the cache keys it: its text; whether it is templated (the model's text as it is: never the
    same request as a raw one); the text its draws' stream is named by (`seed_text`); the `prefill` (the
    reply's start the model goes on from)."""
    return [prompt.text, prompt.templated, prompt.seed_text, prompt.prefill]
