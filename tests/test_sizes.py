"""Small modules with one job: no module of pragexp/, tests/, bench/, experiments/ or hydra_plugins/ over 400
lines, no function over 60 (its decorators, signature, docstring and body; a nested function counts in its own
right and in its parent's), the limits read from the house's size table (docs/house.md, "Size"). The test
names the file and line of each, with its size."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT
from house_page import size_limits

# Every folder of the repository that holds Python: the package, its tests, benchmarks, studies and Hydra
# plugins
CHECKED = ("pragexp", "tests", "bench", "experiments", "hydra_plugins")
LIMITS = size_limits()  # the house's size table: unit -> the most lines it may have
MAX_MODULE_LINES = LIMITS["module"]
MAX_FUNCTION_LINES = LIMITS["function"]


def oversized(root: Path, exempt: tuple[str, ...] = ()) -> list[str]:
    """'file:line name (n lines)' for every module and function over its limit under `root`, paths relative
    to root's parent; files whose path starts with one of `exempt` are skipped."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith(exempt):
            continue
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{rel}:1 module ({lines} lines > {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                size = node.end_lineno - start + 1
                if size > MAX_FUNCTION_LINES:
                    found.append(f"{rel}:{start} {node.name} ({size} lines > {MAX_FUNCTION_LINES})")
    return found


@pytest.mark.parametrize("folder", CHECKED)
def test_no_module_or_function_is_over_its_limit(folder):
    assert oversized(ROOT / folder) == []


def test_the_house_page_states_the_limits_in_lines():
    assert LIMITS == {"module": MAX_MODULE_LINES, "function": MAX_FUNCTION_LINES}
    assert all(limit > 0 for limit in LIMITS.values())


def test_an_oversized_module_and_function_are_named_with_file_and_line(tmp_path):
    root = tmp_path / "pragexp"
    (root / "data").mkdir(parents=True)

    def body(n: int) -> str:
        return "".join(f"    x{i} = {i}\n" for i in range(n))

    # f: a decorator, its def and 60 statements (62 lines); g: its def and 59 (60 lines, the limit)
    (root / "data" / "long.py").write_text(f'"""doc"""\n\n\n@staticmethod\ndef f():\n{body(60)}')
    (root / "data" / "short.py").write_text(f"def g():\n{body(59)}")
    (root / "big.py").write_text("x = 1\n" * 401)
    (root / "skipped.py").write_text("x = 1\n" * 401)
    assert oversized(root, ("pragexp/skipped.py",)) == [
        "pragexp/big.py:1 module (401 lines > 400)",
        "pragexp/data/long.py:4 f (62 lines > 60)",
    ]
