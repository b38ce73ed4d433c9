"""Replay: a run answered by the response cache alone, keyed by an identity recorded before, never guessed.

Which identity a backend's keys rest on (`resolve`), as `llm.replay` says:
- `auto` (the default): the backend's own (`identity()`: a server is probed), recorded in the cache's book of
  identities (`identities`); where the server cannot be reached (`ServerUnreachable`: every retry failed),
  the identity recorded for the same settings at the same address, said in the log, and the run replays;
  with none recorded there (or several), the server's error stands;
- `true`: the identity recorded for the same settings at the same address (`IdentityBook.choose`): no server
  is asked, no model file read, no weights loaded (an in-process model's tokenizer still renders the
  prompts: a key is of the text the model read);
- a run folder: the identity that run recorded in its `answers.json` for the same settings (at any address);
- `false`: the backend's own, always (a server that cannot be reached stops the run).
A backend whose identity changes as it trains (`training.benchmarks.StepBackend`, no `named_by`) is keyed by
its own, unrecorded and never replayed.

A replay asks no model: a key not in the cache stops the run (`MissingAnswers`), naming the first request
that is not there and how many of the call's are missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pragexp.generation.backends.base import LLMBackend, ServerUnreachable
from pragexp.generation.cache import answers
from pragexp.generation.cache.identities import IdentityBook, Recorded, ReplayError, choose, recorded_now

log = logging.getLogger(__name__)
MODES = ("auto", "true", "false")
SHOWN = 80  # characters of a prompt an error shows


class MissingAnswers(RuntimeError):
    """A replay met a request whose answer is not in the cache; `task` is named when the run knows it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.task: str | None = None

    def __str__(self) -> str:
        message = super().__str__()
        return f"task={self.task}: {message}" if self.task else message


@dataclass(frozen=True)
class Keyed:
    """The identity a backend's keys rest on; `replaying`: taken from a record, the model never asked."""

    record: Recorded
    replaying: bool = False
    why: str = ""  # why it replays


def mode(value) -> str | Path:
    """`llm.replay` as `auto`, `true`, `false` or a run folder (one holding `answers.json`)."""
    if isinstance(value, bool) or value is None:
        return "auto" if value is None else str(value).lower()
    if str(value).lower() in MODES:
        return str(value).lower()
    folder = Path(str(value)).expanduser()
    if not (folder / answers.ANSWERS).is_file():
        raise ValueError(
            f"llm.replay={value}: auto, true, false, or a run folder holding {answers.ANSWERS} ({folder} "
            "holds none)"
        )
    return folder


def resolve(backend: LLMBackend, book: IdentityBook) -> Keyed:
    """The identity `backend`'s keys rest on, as the module docstring says."""
    how, address = mode(getattr(backend, "replay", "auto")), getattr(backend, "address", None)
    if not hasattr(backend, "named_by"):  # a wrapper whose identity changes as it trains: never replayed
        return Keyed(Recorded(backend.identity(), {}, address))
    name = backend.named_by()
    if how == "true":
        record = book.choose(name, address, _local(backend))
        return _replaying(record, "llm.replay=true")
    if isinstance(how, Path):
        candidates = [u.record for u in answers.read(how)]
        record = choose(candidates, name, address, _local(backend), False, str(how / answers.ANSWERS))
        return _replaying(record, f"llm.replay={how}: the identity that run recorded")
    try:
        identity = backend.identity()
    except ServerUnreachable as err:
        if how != "auto":
            raise
        try:
            record = book.choose(name, address)
        except ReplayError as why:
            log.warning("no replay from the response cache (%s)", why)
            raise err from None
        return _replaying(record, f"{address} cannot be reached ({err})")
    record = recorded_now(identity, name, address)
    book.record(record)
    return Keyed(record)


def _replaying(record: Recorded, why: str) -> Keyed:
    log.warning(
        "replay: %s; answering from the response cache under the recorded identity of %s: every answer the "
        "run needs must be there (a missing one stops it)",
        why,
        record.describe(),
    )
    return Keyed(record, True, why)


def _local(backend: LLMBackend) -> Callable[[], dict | None]:
    """The identity an in-process backend computes itself (its files' digest: no weights loaded), to pick
    among several recorded ones; none for a server (that would ask it)."""

    def local() -> dict | None:
        if backend.address is not None:
            return None
        try:
            return backend.identity()
        except (OSError, ValueError, ImportError) as err:  # the model's files are not on this machine
            log.info("replay: %s cannot name its own identity here (%s)", backend.name, err)
            return None

    return local


def missing(keyed: Keyed, folder: Path, first: str, count: int, asked: int) -> MissingAnswers:
    """The error of a replay that lacks `count` of a call's `asked` answers, `first` the first missing."""
    return MissingAnswers(
        f"replay ({keyed.why}): {count} of the {asked} answers of this call are not in the response cache "
        f"{folder} under {keyed.record.describe()}; the first: {first}. A replay asks no model: run with the "
        "model or server (llm.replay=false), or unpack the answers the run needs (python -m "
        "pragexp.generation.cache unpack <answers.tar> --cache-dir <paths.cache_dir>)"
    )


def shown(text: str) -> str:
    """A prompt in short: its end (where items differ), on one line."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= SHOWN else "..." + flat[-SHOWN:])
