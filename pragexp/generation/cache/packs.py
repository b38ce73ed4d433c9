"""The answers some runs used, shipped as one file: `python -m pragexp.generation.cache pack RUN_DIR... --out
answers.tar` and `... unpack answers.tar --cache-dir DIR`.

`pack` reads what each run used (its `answers.json`: per cache folder and identity, the keys it looked up),
takes those answers from the cache folders (all of them, or it refuses naming the first missing) and writes a
tar (whole, by a rename; the same runs give the same bytes) of three members:
- `identities.json`: each identity the answers were keyed under, with the settings and address it was recorded
  under (what a replay finds it by);
- `answers.jsonl`: one answer a line, `{"key", "identity", "value"}`, sorted by key;
- `manifest.json`: the format (`FORMAT`), the runs, the counts, and each other member's size and SHA-256.

`unpack` checks the whole tar before it adds anything: a file that is no tar, a manifest of another format,
a member missing, unlisted or not a plain file, a digest that differs, or a line that is not an answer is
refused naming the member, line and field. It then adds the answers the cache lacks to
`<DIR>/llm/responses/` as the cache adds any (a file of this process's own: no lock; each answer a whole,
checked record, so a stopped unpack leaves whole answers and a second one adds the rest) and records the
identities in `<DIR>/llm/identities/`. An answer already there with another value stays as the cache
settles it (counted).

The digests find damage, not forgery: a pack is trusted as much as where it came from. `pack` prints the
SHA-256 of the tar to publish beside it.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import logging
import sys
import tarfile
from pathlib import Path

import pragexp
from pragexp.generation.cache import answers
from pragexp.generation.cache.identities import IDENTITIES, RESPONSES, IdentityBook, Recorded
from pragexp.generation.cache.store import ResponseCache
from pragexp.utils.io import atomic_output

log = logging.getLogger(__name__)
FORMAT = "pragexp-answer-pack/1"
MANIFEST, IDENTITY_MEMBER, ANSWER_MEMBER = "manifest.json", "identities.json", "answers.jsonl"
CHUNK = 2000  # answers per write when unpacking


class PackError(ValueError):
    """A pack that cannot be made or read: what is wrong, named."""


def _runs(path: Path) -> list[Path]:
    """The run folders a path names: itself, or the runs of a sweep's (a suite's) folder that recorded
    answers."""
    if (path / answers.ANSWERS).is_file() or not path.is_dir():
        return [path]
    runs = sorted(run for run in path.iterdir() if (run / answers.ANSWERS).is_file())
    return runs or [path]


def pack(run_dirs: list[Path], out: Path, cache_dir: Path | None = None) -> str:
    """Write the answers `run_dirs` used to the tar `out`; `cache_dir`: read them there instead of the
    folders the runs recorded (a cache moved since). Returns what it wrote, in a line."""
    run_dirs = [run for path in run_dirs for run in _runs(Path(path))]
    groups: dict[tuple[str, str], answers.Used] = {}
    for run_dir in run_dirs:
        for used in answers.read(run_dir):
            folder = Path(cache_dir) / RESPONSES if cache_dir else used.folder
            group = groups.setdefault((str(folder), used.record.digest), answers.Used(folder, used.record))
            group.keys |= used.keys
    rows: dict[str, tuple[str, object]] = {}
    for group in groups.values():
        found = _read(group.folder, sorted(group.keys))
        lost = sorted(group.keys - found.keys())
        if lost:
            raise PackError(
                f"{group.folder}: {len(lost)} of the {len(group.keys)} answers the runs used under "
                f"{group.record.describe()} are not there (the first: key {lost[0]}); give the folder that "
                "holds them with --cache-dir"
            )
        rows.update((k, (group.record.digest, v)) for k, v in found.items())
    identities = {g.record.digest: g.record for g in groups.values()}
    members = {
        IDENTITY_MEMBER: _identities_blob(identities.values()),
        ANSWER_MEMBER: "".join(
            json.dumps({"key": k, "identity": d, "value": v}, ensure_ascii=False, sort_keys=True) + "\n"
            for k, (d, v) in sorted(rows.items())
        ).encode("utf-8"),
    }
    manifest = {
        "format": FORMAT,
        "pragexp": pragexp.__version__,
        "runs": [Path(r).name for r in run_dirs],
        "answers": len(rows),
        "identities": len(identities),
        "members": {
            n: {"bytes": len(b), "sha256": hashlib.sha256(b).hexdigest()} for n, b in members.items()
        },
    }
    blob = json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8") + b"\n"
    _write_tar(out, {MANIFEST: blob, **members})
    digest = hashlib.sha256(Path(out).read_bytes()).hexdigest()
    return f"{len(rows):,} answers under {_count(len(identities))} of {len(run_dirs)} runs (SHA-256 {digest})"


def _count(identities: int) -> str:
    return f"{identities} identit{'y' if identities == 1 else 'ies'}"


def _read(folder: Path, keys: list[str]) -> dict[str, object]:
    cache = ResponseCache(folder)
    try:
        return cache.get_many(keys)
    finally:
        cache.hits = cache.misses = 0  # read for the pack, not asked of a model: nothing to say
        cache.close()


def _identities_blob(records) -> bytes:
    listed = [{k: v for k, v in r.as_json().items() if k != "format"} for r in records]
    return json.dumps(sorted(listed, key=lambda r: r["digest"]), indent=1, sort_keys=True).encode() + b"\n"


def _write_tar(out: Path, members: dict[str, bytes]) -> None:
    """The tar, whole or not at all; no times, owners or modes of this machine in it."""
    with (
        atomic_output(Path(out), binary=True) as f,
        tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))


def unpack(tar_path: Path, cache_dir: Path) -> str:
    """Add the answers of the pack `tar_path` to the cache `cache_dir` (the module docstring's checks first).
    Returns what it did, in a line."""
    members = _verified(Path(tar_path))
    records = _read_identities(members[IDENTITY_MEMBER], f"{tar_path}: {IDENTITY_MEMBER}")
    rows = _read_answers(members[ANSWER_MEMBER], f"{tar_path}: {ANSWER_MEMBER}", {r.digest for r in records})
    cache = ResponseCache(Path(cache_dir) / RESPONSES)
    try:
        present = cache.get_many(list(rows))
        new = sorted(k for k in rows if k not in present)
        for start in range(0, len(new), CHUNK):
            cache.put_many({k: rows[k] for k in new[start : start + CHUNK]})
    finally:
        cache.hits = cache.misses = 0
        cache.close()
    book = IdentityBook(Path(cache_dir) / IDENTITIES)
    for record in records:
        book.record(record)
    differ = sum(present[k] != rows[k] for k in present)
    note = f"; {differ} held another answer there, which stands" if differ else ""
    return (
        f"{len(new):,} answers added to {cache.path}, {len(present):,} already there{note}; "
        f"{_count(len(records))} recorded"
    )


def _verified(tar_path: Path) -> dict[str, bytes]:
    """The pack's members, each checked against the manifest."""
    try:
        tar = tarfile.open(tar_path, mode="r:*")
    except (tarfile.TarError, OSError) as err:
        raise PackError(f"{tar_path}: not a tar archive ({err})") from err
    with tar:
        found = {m.name: m for m in tar.getmembers()}
        if MANIFEST not in found:
            raise PackError(f"{tar_path}: no {MANIFEST}: not a pragexp answer pack")
        manifest = _json(_member(tar, found[MANIFEST], tar_path), f"{tar_path}: {MANIFEST}")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            shown = manifest.get("format") if isinstance(manifest, dict) else None
            raise PackError(f"{tar_path}: {MANIFEST}: field 'format' is {shown!r}, not {FORMAT!r}")
        listed = manifest.get("members")
        expected = {IDENTITY_MEMBER, ANSWER_MEMBER}
        if not isinstance(listed, dict) or set(listed) != expected:
            raise PackError(f"{tar_path}: {MANIFEST}: field 'members' must list {sorted(expected)}")
        unlisted = sorted(set(found) - expected - {MANIFEST})
        if unlisted:
            raise PackError(f"{tar_path}: members the manifest does not list: {', '.join(unlisted)}")
        members = {}
        for name in sorted(expected):
            if name not in found:
                raise PackError(f"{tar_path}: the member {name} is missing")
            data = _member(tar, found[name], tar_path)
            digest, want = hashlib.sha256(data).hexdigest(), (listed[name] or {}).get("sha256")
            if digest != want:
                raise PackError(
                    f"{tar_path}: {name}: SHA-256 {digest}, the manifest says {want}: the pack is damaged; "
                    "nothing was added"
                )
            members[name] = data
    return members


def _member(tar: tarfile.TarFile, member: tarfile.TarInfo, tar_path: Path) -> bytes:
    if not member.isfile():
        raise PackError(f"{tar_path}: {member.name} is not a plain file")
    handle = tar.extractfile(member)
    try:
        return handle.read()
    except (tarfile.TarError, OSError, EOFError) as err:
        raise PackError(f"{tar_path}: {member.name}: cut short ({err})") from err


def _json(data: bytes, where: str):
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise PackError(f"{where}: not JSON ({err})") from err


def _read_identities(data: bytes, where: str) -> list[Recorded]:
    listed = _json(data, where)
    if not isinstance(listed, list):
        raise PackError(f"{where}: not a list of identities")
    try:
        return [Recorded.from_json(entry, f"{where}[{i}]") for i, entry in enumerate(listed)]
    except ValueError as err:
        raise PackError(str(err)) from err


def _read_answers(data: bytes, where: str, digests: set[str]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        row = _json(line.encode("utf-8"), f"{where} line {number}")
        if not isinstance(row, dict) or not answers.KEY.match(str(row.get("key", ""))):
            raise PackError(f"{where} line {number}: field 'key' is not a 64-digit hex key")
        if row.get("identity") not in digests:
            raise PackError(f"{where} line {number}: field 'identity' names no identity of the pack")
        if "value" not in row:
            raise PackError(f"{where} line {number}: no field 'value'")
        if row["key"] in rows:
            raise PackError(f"{where} line {number}: key {row['key']} a second time")
        rows[row["key"]] = row["value"]
    return rows


def main(argv: list[str]) -> int:
    """`pack RUN_DIR... --out answers.tar [--cache-dir DIR]` | `unpack answers.tar --cache-dir DIR`."""
    parser = argparse.ArgumentParser(prog="python -m pragexp.generation.cache", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="the answers some runs used, in one tar")
    packing.add_argument("runs", type=Path, nargs="+", help="run folders (each holds answers.json)")
    packing.add_argument("--out", type=Path, required=True, help="the tar to write")
    packing.add_argument("--cache-dir", type=Path, help="read the answers here (a paths.cache_dir)")
    unpacking = commands.add_parser("unpack", help="add a pack's answers to a cache")
    unpacking.add_argument("tar", type=Path)
    unpacking.add_argument("--cache-dir", type=Path, required=True, help="the paths.cache_dir to add to")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.command == "pack":
            print(f"{args.out}: {pack(args.runs, args.out, args.cache_dir)}")
        else:
            print(f"{args.tar}: {unpack(args.tar, args.cache_dir)}")
    except (PackError, FileNotFoundError, ValueError) as err:
        print(f"{args.command}: {err}", file=sys.stderr)
        return 2
    return 0
