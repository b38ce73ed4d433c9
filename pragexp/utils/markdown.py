"""Markdown tables, as every report of the project writes them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    """The lines of a Markdown table (each cell as str)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
