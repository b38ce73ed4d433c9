"""The arrows of the layout point one way (DESIGN.md): every import statement of pragexp/ counts, those inside
functions too, and the test names the file and the line of each import that breaks a rule or closes a cycle.

- models, retrieval and metrics import nothing from tasks or data; tasks nothing from data (what a task reads from
  its data module is a Protocol beside the task); data nothing from tasks;
- generation imports only generation, prompting and utils (no models, tasks, data); prompting only itself;
- nothing imports an entry point (pragexp.train, pragexp.eval, pragexp.report.__main__);
- no import cycle between modules anywhere in pragexp/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "pragexp"
# package -> prefixes it must not import
FORBIDDEN = {
    "models": ("pragexp.tasks", "pragexp.data"),
    "retrieval": ("pragexp.tasks", "pragexp.data"),
    "metrics": ("pragexp.tasks", "pragexp.data"),
    "tasks": ("pragexp.data",),
    "data": ("pragexp.tasks",),
}
# package -> the only pragexp prefixes it may import
ONLY = {
    "generation": ("pragexp.generation", "pragexp.prompting", "pragexp.utils"),
    "prompting": ("pragexp.prompting",),
}
ENTRY_POINTS = ("pragexp.train", "pragexp.eval", "pragexp.report.__main__")


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


def broken_arrows(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        package = rel.parts[1] if len(rel.parts) > 2 else ""
        for name, line in imports(path, root):
            if name.startswith(FORBIDDEN.get(package, ("-",))):
                found.append(f"{rel}:{line} imports {name} ({package} must not import it)")
            if package in ONLY and not name.startswith(ONLY[package]):
                found.append(
                    f"{rel}:{line} imports {name} ({package} imports only {', '.join(ONLY[package])})"
                )
            if name in ENTRY_POINTS and module_name(path, root) != name:
                found.append(f"{rel}:{line} imports the entry point {name}")
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


def test_no_import_breaks_an_arrow_of_the_layout():
    assert broken_arrows(PACKAGE) == []


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
            "from pragexp.models.pretrained import masked_mean\n",
            "generation imports only",
        ),
        ("prompting/items.py", "import pragexp.utils.io\n", "prompting imports only"),
        ("models/llm.py", "def f():\n    from pragexp.tasks import base\n", "models must not import"),
        ("data/circa.py", "from pragexp.tasks.base import TaskData\n", "data must not import"),
        ("tasks/base.py", "from pragexp.train import main\n", "imports the entry point pragexp.train"),
    ],
)
def test_a_forbidden_arrow_is_reported_with_its_file_and_line(tmp_path, file, text, message):
    files = {"__init__.py": "", "train.py": "", "utils/__init__.py": "", "utils/io.py": "", file: text}
    for package in {Path(file).parts[0], "models", "tasks", "data"}:
        files.setdefault(f"{package}/__init__.py", "")
    files.setdefault("models/pretrained.py", "")
    files.setdefault("tasks/base.py", "")
    (found,) = broken_arrows(_package(tmp_path, files))
    line = text.count("\n", 0, text.index("pragexp.")) + 1
    assert found.startswith(f"pragexp/{file}:{line} imports") and message in found
