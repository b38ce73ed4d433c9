"""The identities the response cache's answers were keyed under, recorded beside them: what a replay keys by.

A key is a hash: it cannot say which model answered. So each backend that uses a cache folder records, once,
the identity its keys rest on (`<cache_dir>/llm/identities/<file>.json`: the identity, the settings that name
it (`LLMBackend.named_by`) and the address a server was asked at), and a replay (`replay`) takes the identity
from there instead of computing it: no server is probed, no model file read. A file is written whole (a
temporary file, then a rename) and only where it is missing: any number of jobs on any hosts record at once
with no lock, and a damaged file is named in the log and never matched.

Which recorded identity a replay takes (`IdentityBook.choose`): the one recorded under the same settings and
at the same address (a server's; an in-process model has none); of several, the one this backend computes
itself where it can without a server (an in-process model: its files' digest); else none, refused with the
candidates listed (what was recorded for the model at other addresses, too: a replay never takes another
address's answers unasked). A run folder (`llm.replay=<run folder>`) gives the identity that run recorded.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)
RESPONSES = "llm/responses"  # in a cache_dir: the answers
IDENTITIES = "llm/identities"  # beside them: the identities they were keyed under
FORMAT = "pragexp-identity/1"
Local = Callable[[], "dict | None"] | None


class ReplayError(RuntimeError):
    """No recorded identity to replay, or more than one: the settings and the candidates are named."""


def digest(identity: dict) -> str:
    """A short name for an identity (64 bits of the SHA-256 of its JSON)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Recorded:
    """An identity and what it was recorded under."""

    identity: dict
    name: dict
    address: str | None = None
    recorded: str = ""  # when (UTC, ISO 8601)

    @property
    def digest(self) -> str:
        return digest(self.identity)

    def as_json(self) -> dict:
        return {
            "format": FORMAT,
            "digest": self.digest,
            "name": self.name,
            "address": self.address,
            "identity": self.identity,
            "recorded": self.recorded,
        }

    @classmethod
    def from_json(cls, data: dict, where: str) -> Recorded:
        """A record read back, checked: its identity must be the one its digest names."""
        if not isinstance(data, dict) or not all(isinstance(data.get(k), dict) for k in ("identity", "name")):
            raise ValueError(f"{where}: no 'identity' and 'name' objects")
        found = cls(data["identity"], data["name"], data.get("address"), str(data.get("recorded") or ""))
        if data.get("digest") not in (None, found.digest):
            raise ValueError(f"{where}: field 'digest' is {data['digest']}, the identity's is {found.digest}")
        return found

    def describe(self) -> str:
        model = self.identity.get("model") or self.identity.get("backend", "?")
        at = f" at {self.address}" if self.address else ""
        when = f", recorded {self.recorded}" if self.recorded else ""
        return f"{model} (identity {self.digest}{at}{when})"


def recorded_now(identity: dict, name: dict, address: str | None) -> Recorded:
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return Recorded(identity, name, address, stamp)


class IdentityBook:
    """The identities recorded in `folder` (`<cache_dir>/llm/identities`)."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def _path(self, record: Recorded) -> Path:
        under = hashlib.sha256(json.dumps([record.name, record.address], sort_keys=True).encode())
        return self.folder / f"{record.digest}-{under.hexdigest()[:8]}.json"

    def record(self, record: Recorded) -> None:
        """Keep `record` unless the same identity is recorded under the same settings and address."""
        path = self._path(record)
        if not path.exists():
            atomic_write_text(path, json.dumps(record.as_json(), indent=1, sort_keys=True) + "\n")

    def all(self) -> list[Recorded]:
        found = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                found.append(Recorded.from_json(json.loads(path.read_text(encoding="utf-8")), str(path)))
            except (OSError, ValueError) as err:
                log.warning("skipping the damaged identity record %s (%s)", path, err)
        return found

    def choose(self, name: dict, address: str | None, local: Local = None) -> Recorded:
        """The identity to replay for a backend named `name` at `address` (the module docstring's rule);
        `local()`: the identity the backend computes without a server, where it can (asked only to pick among
        several)."""
        return choose(self.all(), name, address, local, True, str(self.folder))


def choose(
    candidates: list[Recorded],
    name: dict,
    address: str | None,
    local: Local,
    same_address: bool,
    where: str,
) -> Recorded:
    """One of `candidates` as `IdentityBook.choose` says (`same_address`: at `address` only; a run's own
    record is one run's, at any address), or a `ReplayError` naming what was found."""
    everywhere = [c for c in candidates if c.name == name]
    unique = _distinct(c for c in everywhere if c.address == address or not same_address)
    own = local() if len(unique) > 1 and local is not None else None
    if own is not None:
        unique = [c for c in unique if c.digest == digest(own)] or unique
    if len(unique) == 1:
        return unique[0]
    at = f" at {address}" if same_address and address else ""
    if not unique:
        others = sorted({c.describe() for c in candidates if c.name.get("model") == name.get("model")})
        also = f"; recorded for that model: {'; '.join(others)}" if others else ""
        pick = (
            " (replay one with its llm.base_url, or llm.replay=<a run folder that used it>)" if others else ""
        )
        raise ReplayError(f"{where}: no identity recorded for {_settings(name)}{at}{also}{pick}")
    raise ReplayError(
        f"{where}: {len(unique)} identities recorded for {_settings(name)}{at}: "
        f"{'; '.join(c.describe() for c in unique)}; pick the one a run used with llm.replay=<its run folder>"
    )


def _distinct(records) -> list[Recorded]:
    """One record per identity (the first: one model recorded at several addresses is one model)."""
    kept: dict[str, Recorded] = {}
    for record in records:
        kept.setdefault(record.digest, record)
    return list(kept.values())


def _settings(name: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(name.items()) if v not in (None, {}, []))
