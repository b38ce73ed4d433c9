"""Where each annotated DOM element of the archive landed among the corpus's passages.

An element is named by its UUID (the keys of the release's spans); the map is a sorted array of (UUID, page,
first passage, last passage), stored as `elements.npy` beside the corpus's `passages.jsonl`.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from pragexp.data.pragmaticqa.io import Span

ELEMENT_DTYPE = np.dtype([("uuid", "S16"), ("page", "<i4"), ("first", "<i4"), ("last", "<i4")])


def uuid_bytes(key: str) -> bytes:
    return uuidlib.UUID(key).bytes


class ElementMap:
    """UUID -> the passages its element's text falls in (a contiguous range on one page)."""

    def __init__(self, table: np.ndarray):
        self.table = np.sort(table, order="uuid")

    @classmethod
    def from_rows(cls, rows: Iterable[tuple[bytes, int, int, int]]) -> ElementMap:
        return cls(np.array(list(rows), dtype=ELEMENT_DTYPE))

    def __len__(self) -> int:
        return len(self.table)

    def find(self, key: str) -> tuple[int, int, int] | None:
        """(page, first passage, last passage) of an element, or None when the corpus has no such element."""
        # numpy's fixed-width bytes drop trailing zero bytes when read back: compare without them.
        target = uuid_bytes(key).rstrip(b"\0")
        i = int(np.searchsorted(self.table["uuid"], target))
        if i < len(self.table) and self.table["uuid"][i] == target:
            row = self.table[i]
            return int(row["page"]), int(row["first"]), int(row["last"])
        return None

    def span_passages(self, span: Span) -> set[int] | None:
        """The passages holding a span: from its start element's first passage to its end element's last
        when both are on one page, else the passages of whichever elements are found. None when the span
        points at no element, or none of its elements is in the corpus."""
        found = [self.find(k) for k in span.keys]
        found = [f for f in found if f is not None]
        if not found:
            return None
        if len({page for page, _, _ in found}) == 1:  # a selection may run backwards: take the whole stretch
            return set(range(min(f for _, f, _ in found), max(last for _, _, last in found) + 1))
        return {p for _, first, last in found for p in range(first, last + 1)}

    def save(self, path: Path) -> None:
        with path.open("wb") as f:
            np.save(f, self.table)

    @classmethod
    def load(cls, path: Path) -> ElementMap:
        return cls(np.load(path))
