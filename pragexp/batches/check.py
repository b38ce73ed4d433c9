"""A batch checked against the kinds its task reads, naming the keys that are missing or unknown and the data
module that made it (instead of a KeyError deep in a step)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class BatchError(TypeError):
    pass


def key_mismatch(batch: Mapping, kind: type) -> tuple[list[str], list[str]]:
    """The keys `kind` (a TypedDict) requires that `batch` lacks, and those `batch` holds that `kind` does not
    know."""
    keys = set(batch)
    missing = sorted(kind.__required_keys__ - keys)
    unknown = sorted(keys - kind.__required_keys__ - kind.__optional_keys__)
    return missing, unknown


def check_batch(batch: Mapping, kinds: Sequence[type], source: str) -> type:
    """The first of `kinds` whose keys `batch` has (every required one, no other); a `BatchError` naming
    `source` (the data module) and, per kind, what is missing and unknown, when none fits."""
    reasons = []
    for kind in kinds:
        missing, unknown = key_mismatch(batch, kind)
        if not missing and not unknown:
            return kind
        said = ([f"lacks {', '.join(missing)}"] if missing else []) + (
            [f"has unknown {', '.join(unknown)}"] if unknown else []
        )
        reasons.append(f"read as {kind.__name__}, it {' and '.join(said)}")
    raise BatchError(f"a batch of {source} is none of the kinds its task reads: {'; '.join(reasons)}")
