"""The house in figures: rooms, files and lines per room, and what is over the size rules, for a checkout.

    python experiments/house/layout.py [REPO]     # default: this repository

Rooms are the folders of `pragexp/` that hold Python (a sub-folder counts in its room, and is shown beside
it); the size rules are the house's (docs/house.md, read by tests/test_sizes.py), applied here to every folder
the tests cover, so that two commits' figures compare (issue 47: before and after).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

FOLDERS = ("pragexp", "tests", "bench", "experiments", "hydra_plugins")
MODULE, FUNCTION = 400, 60


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def rooms(repo: Path) -> tuple[Counter, Counter]:
    """files and lines per room (and per sub-room, as 'room/sub')."""
    files, counted = Counter(), Counter()
    for path in (repo / "pragexp").rglob("*.py"):
        parts = path.relative_to(repo / "pragexp").parts
        if len(parts) == 1:
            continue  # the entry points and pragexp/__init__.py: no room
        names = [parts[0]] + ([f"{parts[0]}/{parts[1]}"] if len(parts) > 2 else [])
        for name in names:
            files[name] += 1
            counted[name] += lines(path)
    return files, counted


def oversized(repo: Path, folder: str) -> tuple[int, int]:
    """(modules over 400 lines, functions over 60) under one folder."""
    modules = functions = 0
    for path in (repo / folder).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        modules += len(text.splitlines()) > MODULE
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                functions += node.end_lineno - start + 1 > FUNCTION
    return modules, functions


def main(repo: Path) -> None:
    files, counted = rooms(repo)
    top = sorted(n for n in files if "/" not in n)
    print(f"{len(top)} rooms")
    for name in sorted(files, key=lambda n: (n.split("/")[0], n)):
        indent = "    " if "/" in name else "  "
        print(f"{indent}{name:<28} {files[name]:>4} files {counted[name]:>7,} lines")
    for folder in FOLDERS:
        if (repo / folder).is_dir():
            modules, functions = oversized(repo, folder)
            print(f"{folder}: {modules} modules over {MODULE} lines, {functions} functions over {FUNCTION}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
