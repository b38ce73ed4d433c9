"""What a run used of the response cache: per cache folder and identity, the keys its calls looked up, kept in
memory as they are computed and written once, at the end of the run, beside its metrics (`answers.json`; a
DDP rank other than 0 writes `answers.rank<N>.json`): what `pack` ships and what `llm.replay=<run folder>`
replays by. The file is written whole (a temporary file, then a rename)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.generation.cache.identities import Recorded
from pragexp.utils.io import atomic_write_text

ANSWERS = "answers.json"
FORMAT = "pragexp-answers/1"
KEY = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class Used:
    """The keys one backend looked up in one folder, and the identity they rest on."""

    folder: Path
    record: Recorded
    keys: set[str] = field(default_factory=set)


# This process's, by (pid, folder, identity): a forked process (a DDP rank) records its own.
_used: dict[tuple[int, str, str], Used] = {}


def note(folder: Path, record: Recorded, keys: Iterable[str]) -> None:
    """`keys` of `folder`, keyed under `record`'s identity, were used by this run."""
    folder = Path(folder).absolute()
    entry = _used.setdefault((os.getpid(), str(folder), record.digest), Used(folder, record))
    entry.keys.update(keys)


def forget() -> None:
    """A run begins or ends: nothing it used is counted in the next."""
    for key in [k for k in _used if k[0] == os.getpid()]:
        del _used[key]


def write(run_dir: str | Path, rank: int = 0) -> Path | None:
    """This process's record of what the run used, in `run_dir`; None where it used no cache."""
    used = [u for (pid, _, _), u in sorted(_used.items()) if pid == os.getpid()]
    if not used:
        return None
    caches = []
    for u in used:
        entry = {k: v for k, v in u.record.as_json().items() if k != "format"}
        caches.append({"folder": str(u.folder), **entry, "keys": sorted(u.keys)})
    path = Path(run_dir) / (ANSWERS if rank == 0 else f"answers.rank{rank}.json")
    atomic_write_text(path, json.dumps({"format": FORMAT, "caches": caches}, sort_keys=True) + "\n")
    return path


def read(run_dir: str | Path) -> list[Used]:
    """What a finished run used (every rank's file), checked: a missing file, another format or a malformed
    entry is refused naming the file and the field."""
    run_dir = Path(run_dir)
    if not (run_dir / ANSWERS).is_file():
        raise FileNotFoundError(
            f"{run_dir}: no {ANSWERS} (the run did not finish, used no response cache, or ran before pragexp "
            "recorded the answers a run used: run it again, it asks the model nothing the cache holds)"
        )
    used = []
    for path in [run_dir / ANSWERS, *sorted(run_dir.glob("answers.rank*.json"))]:
        used += _read_one(path)
    return used


def _read_one(path: Path) -> list[Used]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: unreadable ({err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{path}: field 'format' is {found!r}, not {FORMAT!r}")
    out = []
    for i, entry in enumerate(data.get("caches") or []):
        where = f"{path}: caches[{i}]"
        keys = entry.get("keys") if isinstance(entry, dict) else None
        if not isinstance(keys, list) or not all(isinstance(k, str) and KEY.match(k) for k in keys):
            raise ValueError(f"{where}: field 'keys' is not a list of 64-digit hex keys")
        if not isinstance(entry.get("folder"), str):
            raise ValueError(f"{where}: field 'folder' is not a path")
        out.append(Used(Path(entry["folder"]), Recorded.from_json(entry, where), set(keys)))
    return out
