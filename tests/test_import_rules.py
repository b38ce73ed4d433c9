"""The arrows of the layout point one way: models and retrieval import nothing from tasks or data, tasks nothing
from data (what a task reads from its data module is a Protocol beside the task). Every import statement
counts, those inside functions too."""

import ast

import pytest
from conftest import ROOT

PACKAGE = ROOT / "pragexp"
RULES = {
    "models": ("pragexp.tasks", "pragexp.data"),
    "retrieval": ("pragexp.tasks", "pragexp.data"),
    "metrics": ("pragexp.tasks", "pragexp.data"),
    "tasks": ("pragexp.data",),
}


def imported_modules(path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("package", sorted(RULES))
def test_a_package_imports_nothing_it_must_not(package):
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((PACKAGE / package).rglob("*.py"))
        for name in imported_modules(path)
        if name.startswith(RULES[package])
    ]
    assert found == []


def test_the_rule_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from pragexp.data.common import tokenization\n", encoding="utf-8")
    assert imported_modules(module) == ["pragexp.data.common"]
