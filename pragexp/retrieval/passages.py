"""Passages: the units a dense index retrieves, kept as JSON lines (one passage a line, ids 0..n-1 in order).

A passage has a title (its page's), its text (DPR-style: about 100 words), the group it belongs to (for
PragmatiCQA the Fandom community, which `retrieval.scope=community` restricts a search to) and its source
(the page it was cut from). Encoders read it as the text pair (title, text), as DPR's context encoder does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from pragexp.utils.io import atomic_output


@dataclass(frozen=True)
class Passage:
    id: int
    title: str
    text: str
    group: str = ""
    source: str = ""


def write_passages(path: Path, passages: Iterable[Passage]) -> int:
    """Writes the passages (ids must run 0, 1, ...) atomically; returns how many."""
    count = 0
    with atomic_output(path) as f:
        for passage in passages:
            if passage.id != count:
                raise ValueError(
                    f"passage ids must run 0..n-1 in order; found {passage.id} at position {count}"
                )
            f.write(json.dumps(asdict(passage), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_passages(path: Path) -> list[Passage]:
    with Path(path).open(encoding="utf-8") as f:
        passages = [Passage(**json.loads(line)) for line in f if line.strip()]
    for i, passage in enumerate(passages):
        if passage.id != i:
            raise ValueError(f"{path}: passage ids must run 0..n-1; line {i + 1} holds id {passage.id}")
    return passages
