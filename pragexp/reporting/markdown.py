"""Markdown tables and their cells, as every report of the project writes them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def markdown_table(header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    """The lines of a Markdown table (each cell as str)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def table_section(title: str | None, header: Sequence[str], rows: Iterable[Sequence]) -> list[str]:
    """`### title`, a blank line, the table and the blank line after it (no heading for a None title)."""
    return [*([f"### {title}", ""] if title else []), *markdown_table(header, rows), ""]


def stats_text(
    mean: float | None,
    std: float | None = None,
    span: tuple[float, float] | None = None,
    n: int | None = None,
) -> str:
    """A cell: `0.812`, `0.812 ± 0.010`, `0.812 ± 0.010 [0.800, 0.825]`, `0.812 ± 0.010 (3)`; "" for None."""
    if mean is None:
        return ""
    text = f"{mean:.3f}"
    if std is not None:
        text += f" ± {std:.3f}"
    if span is not None:
        text += f" [{span[0]:.3f}, {span[1]:.3f}]"
    if n is not None and n > 1:
        text += f" ({n})"
    return text


def estimate_text(
    mean: float, stderr: float | None = None, items=None, digits: int = 3, units: str | None = None
) -> str:
    """A mean with its uncertainty, as every table of the project writes it: `0.337 ± 0.021 (n=67
    conversations)` (± the standard error, clustered by the data's sampling unit; n the units, named where
    known: `units`, a plural), `0.337 (n=1)` without a standard error, `0.337` without either."""
    text = f"{mean:.{digits}f}"
    if stderr is not None and math.isfinite(stderr):
        text += f" ± {stderr:.{digits}f}"
    if items is None:
        return text
    return text + f" (n={items}{f' {units}' if units else ''})"
