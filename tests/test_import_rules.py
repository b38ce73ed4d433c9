"""The arrows of the layout point one way: the room table of the documentation (docs/house.md, "What each room
may import"), read from the page and enforced on every import statement of pragexp/, those inside functions
too. The test names the file and the line of each import that breaks a rule or closes a cycle.

- a room imports only itself and the rooms the table lets it (`MAY_IMPORT`); the entry points
  (`pragexp.train`, `pragexp.eval`, `pragexp.report.__main__`) and `pragexp.run` may import any room;
- the package's own `pragexp/__init__.py` (the version, CONFIG_DIR) is no room: every room may import it;
- a folder of pragexp/ that holds Python and is not in the table is reported (a new room joins the table
  first);
- nothing imports an entry point;
- no import cycle between modules anywhere in pragexp/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT
from house_page import room_table

PACKAGE = ROOT / "pragexp"
# The house's table (docs/house.md): room -> the other rooms it may import.
MAY_IMPORT = room_table()
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()  # (room, module) allowed against the table: none today
ENTRY_POINTS = ("pragexp.train", "pragexp.eval", "pragexp.report.__main__")
FREE_MODULES = ("pragexp.train", "pragexp.eval", "pragexp.run", "pragexp.report.__main__")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> list[tuple[str, int]]:
    """(imported pragexp module, line) for every import statement of a file; `from a import b` names the
    submodule a.b where b is one, else a."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = _file_of(sub, root) is not None
                found.append((sub if is_module else node.module, node.lineno))
    return [(name, line) for name, line in found if name == root.name or name.startswith(root.name + ".")]


def _file_of(module: str, root: Path) -> Path | None:
    base = root.parent.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def graph(root: Path) -> dict[str, list[tuple[str, int]]]:
    """module -> [(imported module, line)] over every .py file under `root`."""
    return {module_name(p, root): imports(p, root) for p in sorted(root.rglob("*.py"))}


def broken_arrows(root: Path, exceptions=frozenset()) -> list[str]:
    found, unknown = [], set()
    for path in sorted(root.rglob("*.py")):
        rel, module = path.relative_to(root.parent), module_name(path, root)
        room = rel.parts[1] if len(rel.parts) > 2 else ""
        if room and room not in MAY_IMPORT and module not in FREE_MODULES:
            if room not in unknown:
                found.append(
                    f"{rel.parts[0]}/{room}/: a room that the house's table (docs/house.md) does not name"
                )
            unknown.add(room)
            continue
        for name, line in imports(path, root):
            if name in ENTRY_POINTS and module != name:
                found.append(f"{rel}:{line} imports the entry point {name}")
                continue
            target = name.split(".")[1] if "." in name else ""
            if module in FREE_MODULES or not room or target in ("", room) or (room, name) in exceptions:
                continue
            if target not in MAY_IMPORT[room]:
                allowed = ", ".join(MAY_IMPORT[room]) or "nothing else of pragexp"
                found.append(f"{rel}:{line} imports {name} ({room} may import {allowed})")
    return found


def cycles(root: Path) -> list[str]:
    """Every import cycle between modules, as the files and lines that close it (Tarjan's strongly connected
    components; a module importing itself counts)."""
    edges = graph(root)
    index, low, stack, on_stack, components, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _ in edges.get(v, []):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or any(w == v for w, _ in edges[v]):
                components.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    out = []
    for component in components:
        members = set(component)
        links = [
            f"{_file_of(v, root).relative_to(root.parent)}:{line} imports {w}"
            for v in component
            for w, line in edges[v]
            if w in members
        ]
        out.append("cycle: " + "; ".join(links))
    return out


def test_the_house_table_names_each_room_of_pragexp_and_only_those():
    """Every folder of pragexp/ that holds Python is a row of the table (broken_arrows reports one that is
    not), and every row is such a folder: a room that is gone leaves the table with it."""
    rooms = {p.parent.relative_to(PACKAGE).parts[0] for p in PACKAGE.glob("*/**/*.py")}
    assert set(MAY_IMPORT) == rooms
    assert all(set(allowed) <= set(MAY_IMPORT) for allowed in MAY_IMPORT.values())


def test_a_row_of_the_room_table_that_does_not_parse_is_named_with_its_line(tmp_path):
    page = tmp_path / "house.md"
    rows = "| `utils` | nothing else of pragexp | x |\n| `data` | `utils` and a word | x |\n"
    page.write_text(f"# The house\n\n| room | may import | what |\n|---|---|---|\n{rows}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"house\.md:6: a room row"):
        room_table(page)
    page.write_text(
        "| room | may import |\n|---|---|\n| `utils` | nothing else of pragexp |\n", encoding="utf-8"
    )
    assert room_table(page) == {"utils": ()}


def test_no_import_breaks_an_arrow_of_the_layout():
    assert broken_arrows(PACKAGE, KNOWN_EXCEPTIONS) == []


def test_each_known_exception_is_still_an_import():
    """An exception whose import is gone is deleted with it, so it cannot hide a new arrow."""
    found = {
        (room, name) for room, name in KNOWN_EXCEPTIONS if any(name in a for a in broken_arrows(PACKAGE))
    }
    assert found == KNOWN_EXCEPTIONS


def test_there_is_no_import_cycle_in_pragexp():
    assert cycles(PACKAGE) == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pragexp"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_cycle_is_reported_with_the_files_and_lines_that_close_it(tmp_path):
    root = _package(
        tmp_path,
        {
            "__init__.py": "",
            "generation/__init__.py": "",
            "generation/backend.py": "def f():\n    from pragexp.generation import choices\n",
            "generation/choices.py": "from pragexp.generation.backend import f\n",
            "utils/__init__.py": "",
            "utils/io.py": "import json\n",
        },
    )
    assert cycles(root) == [
        "cycle: pragexp/generation/backend.py:2 imports pragexp.generation.choices; "
        "pragexp/generation/choices.py:1 imports pragexp.generation.backend"
    ]


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        (
            "generation/hf.py",
            "from pragexp.models.bert import Bert\n",
            "generation may import prompting, pretrained, runs, utils",
        ),
        ("prompting/items.py", "import pragexp.data.circa\n", "prompting may import utils"),
        ("utils/io.py", "from pragexp.prompting import items\n", "utils may import nothing else of pragexp"),
        (
            "retrieval/store.py",
            "from pragexp.models.bert import Bert\n",
            "retrieval may import pretrained, utils",
        ),
        (
            "metrics/q.py",
            "from pragexp.models.bert import Bert\n",
            "metrics may import reporting, batches, prompting, pretrained, utils",
        ),
        ("models/llm.py", "def f():\n    from pragexp.tasks import base\n", "models may import generation"),
        (
            "data/circa.py",
            "from pragexp.tasks.contracts import TaskData\n",
            "data may import reporting, retrieval",
        ),
        (
            "training/cb.py",
            "import pragexp.generation.cache\n",
            "training may import tasks, metrics, runs, utils",
        ),
        ("report/x.py", "from pragexp.models.bert import Bert\n", "report may import data, metrics"),
        ("tasks/base.py", "from pragexp.train import main\n", "imports the entry point pragexp.train"),
        ("extras/x.py", "import json\n", "a room that the house's table (docs/house.md) does not name"),
    ],
)
def test_a_forbidden_arrow_is_reported_with_its_file_and_line(tmp_path, file, text, message):
    files = {"__init__.py": "", "train.py": "", "utils/__init__.py": "", "utils/io.py": "", file: text}
    for package in {Path(file).parts[0], "models", "tasks", "data", "prompting"}:
        files.setdefault(f"{package}/__init__.py", "")
    files.setdefault("models/bert.py", "")
    files.setdefault("tasks/base.py", "")
    files.setdefault("prompting/items.py", "")
    (found,) = broken_arrows(_package(tmp_path, files))
    where = (
        f"pragexp/{file}:{text.count(chr(10), 0, text.index('pragexp.')) + 1}" if "pragexp." in text else ""
    )
    assert found.startswith(where or f"pragexp/{Path(file).parts[0]}/") and message in found


def test_the_entry_points_and_run_may_import_any_room_and_a_known_exception_passes(tmp_path):
    text = "from pragexp.models import bert\nfrom pragexp.data import circa\n"
    files = {
        "__init__.py": "",
        "run.py": text,
        "train.py": text,
        "models/__init__.py": "",
        "models/bert.py": "",
    }
    files |= {"data/__init__.py": "", "data/circa.py": "", "report/__init__.py": "", "report/x.py": text}
    root = _package(tmp_path, files)
    assert broken_arrows(root, {("report", "pragexp.models.bert")}) == []
    assert broken_arrows(root) == [
        "pragexp/report/x.py:1 imports pragexp.models.bert (report may import data, "
        "metrics, reporting, prompting, runs, utils)"
    ]
