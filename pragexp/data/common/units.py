"""Sampling-unit ids: each row's unit (a dialogue, a question, a premise) as a small int, units numbered in
the order they first appear, so the ids are the same whatever the batch size or the order batches are seen
in."""

from __future__ import annotations

from collections.abc import Hashable, Iterable


def unit_ids(keys: Iterable[Hashable]) -> list[int]:
    """One id per key: equal keys (rows of one unit) share an id."""
    numbers: dict[Hashable, int] = {}
    return [numbers.setdefault(key, len(numbers)) for key in keys]
