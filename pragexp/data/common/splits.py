"""Seeded splits of a data set's rows, the one implementation every data module uses.

A split is drawn with `random.Random(seed)` (independent of the training seed and of
PYTHONHASHSEED), so the same rows and seed always give the same split on any machine.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

SPLITS = ("train", "val", "test")  # a dataset's parts (not Lightning's stages: fit, validate, test)


def seeded_split(items: Sequence[int], sizes: dict[str, int | None], seed: int) -> dict[str, list[int]]:
    """Shuffle `items` with `seed`, then cut consecutive parts of the given sizes, in the order the
    dict lists them; one size may be None and takes what the others leave. Each part is returned
    sorted, so rows keep their file order within a split."""
    order = list(items)
    random.Random(seed).shuffle(order)
    open_ended = [name for name, size in sizes.items() if size is None]
    if len(open_ended) > 1:
        raise ValueError(f"only one part may take the rest, got {open_ended}")
    fixed = sum(size for size in sizes.values() if size is not None)
    if fixed > len(order) or any(size is not None and size < 0 for size in sizes.values()):
        raise ValueError(f"cannot cut parts of sizes {sizes} out of {len(order)} rows")
    parts, start = {}, 0
    for name, size in sizes.items():
        size = len(order) - fixed if size is None else size
        parts[name] = sorted(order[start : start + size])
        start += size
    return parts


def matched_split_sizes(n: int) -> tuple[int, int, int]:
    """The Circa paper's 60/20/20: train = floor(0.6 n), dev = test = half of the rest (test takes an odd
    one)."""
    train = n * 6 // 10
    dev = (n - train) // 2
    return train, dev, n - train - dev


def matched_split(n: int, seed: int) -> dict[str, list[int]]:
    """A random 60/20/20 train/val/test split of n rows."""
    train, dev, _ = matched_split_sizes(n)
    return seeded_split(range(n), {"train": train, "val": dev, "test": None}, seed)


def carve_dev(n: int, fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(train indices, dev indices): round(fraction * n) rows for dev, at least one, drawn with `seed`."""
    if n < 2:
        raise ValueError(f"cannot carve a dev split out of {n} training row(s): set data.val_path")
    if not 0 < fraction < 1:
        raise ValueError(f"data.dev_fraction must be between 0 and 1, got {fraction}")
    dev = min(n - 1, max(1, round(fraction * n)))
    parts = seeded_split(range(n), {"val": dev, "train": None}, seed)
    return parts["train"], parts["val"]


def leave_one_group_out(
    groups: Sequence[str], fold: int, seed: int, dev_fraction: float = 0.2, kind: str = "groups"
) -> tuple[dict[str, list[int]], str]:
    """Test = every row of the `fold`-th group (groups in alphabetical order); the other rows are
    shuffled into train and dev (`dev_fraction` of them). Returns the split and the held-out group;
    `kind` names the groups in messages (Circa's are scenarios)."""
    names = sorted(set(groups))
    if not 0 <= fold < len(names):
        raise ValueError(
            f"data.fold={fold} is out of range: the data has {len(names)} {kind} (0..{len(names) - 1})"
        )
    held_out = names[fold]
    rest = [i for i, g in enumerate(groups) if g != held_out]
    parts = seeded_split(rest, {"val": int(round(dev_fraction * len(rest))), "train": None}, seed)
    parts["test"] = [i for i, g in enumerate(groups) if g == held_out]
    return {s: parts[s] for s in SPLITS}, held_out


def carve_groups(
    groups: Sequence[str],
    fractions: dict[str, float],
    seed: int,
    weights: Sequence[int] | None = None,
) -> dict[str, list[int]]:
    """Rows split so that each group (a topic, say) lies in one part: the groups, shuffled with `seed`,
    fill the parts of `fractions` in turn, each until it holds at least its fraction of the total weight
    (rows count 1 each unless `weights` says otherwise); the remaining groups form "train". Every part gets
    at least one group. Returns row indices per part, each in row order."""
    names = sorted(set(groups))
    if len(names) < len(fractions) + 1:
        raise ValueError(f"cannot carve {len(fractions) + 1} parts out of {len(names)} group(s)")
    weights = [1] * len(groups) if weights is None else list(weights)
    weight_of: dict[str, int] = {}
    for group, weight in zip(groups, weights, strict=True):
        weight_of[group] = weight_of.get(group, 0) + weight
    total = sum(weights)
    random.Random(seed).shuffle(names)
    part_of, i = {}, 0
    for part, fraction in fractions.items():
        taken = 0
        while i < len(names) - 1 and (taken == 0 or taken < fraction * total):
            part_of[names[i]], taken = part, taken + weight_of[names[i]]
            i += 1
    for name in names[i:]:
        part_of[name] = "train"
    out: dict[str, list[int]] = {part: [] for part in [*fractions, "train"]}
    for row, group in enumerate(groups):
        out[part_of[group]].append(row)
    return out
