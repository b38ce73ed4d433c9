"""The house's rules as the documentation states them (docs/house.md): the room table and the size limits. The
tests that enforce them read them from the page, so the page and the tests cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

HOUSE_PAGE = ROOT / "docs" / "house.md"
_CODE = re.compile(r"`([^`]+)`")


def markdown_table(path: Path, header: tuple[str, ...]) -> list[tuple[int, list[str]]]:
    """(line number, cells) for each row of the table of `path` whose header row starts with the cells
    `header`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for start, line in enumerate(lines):
        cells = _cells(line)
        if cells[: len(header)] == list(header) and start + 1 < len(lines) and _cells(lines[start + 1]):
            rows = []
            for number in range(start + 2, len(lines)):
                if not lines[number].startswith("|"):
                    break
                rows.append((number + 1, _cells(lines[number])))
            return rows
    raise ValueError(f"{path}: no table whose header starts with {' | '.join(header)}")


def _cells(line: str) -> list[str]:
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return []
    return [cell.strip() for cell in line[1:-1].split("|")]


def room_table(path: Path = HOUSE_PAGE) -> dict[str, tuple[str, ...]]:
    """room -> the other rooms it may import, in the table's order: a room is a code span (`tasks`), its
    second cell the code spans of the rooms it may import, or "nothing else of pragexp"."""
    table = {}
    for number, cells in markdown_table(path, ("room", "may import")):
        room, allowed = _CODE.fullmatch(cells[0]), cells[1]
        targets = tuple(_CODE.findall(allowed))
        only_rooms = targets and not _CODE.sub("", allowed).replace(",", "").strip()
        if room is None or not (only_rooms or allowed == "nothing else of pragexp"):
            raise ValueError(
                f"{path}:{number}: a room row is `room` | `room`, ... or nothing else of pragexp"
            )
        table[room.group(1)] = targets
    return table


def size_limits(path: Path = HOUSE_PAGE) -> dict[str, int]:
    """unit (module, function) -> the most lines it may have, from the size table."""
    limits = {}
    for number, cells in markdown_table(path, ("unit", "at most")):
        match = re.fullmatch(r"(\d+) lines", cells[1])
        if match is None:
            raise ValueError(f"{path}:{number}: a limit is written as `N lines`, not {cells[1]!r}")
        limits[cells[0]] = int(match.group(1))
    return limits
