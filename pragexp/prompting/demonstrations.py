"""The demonstrations of a k-shot prompt: drawn once from the training items with a seed, the same for every
evaluated item (so that they form one shared prefix, computed once), whatever the batch or the order."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from pragexp.prompting.items import PromptItem


def pick_demonstrations(
    items: Sequence[PromptItem], shots: int, seed: int = 0, balanced: bool = False
) -> list[PromptItem]:
    """`shots` training items drawn with `seed` (Python's Mersenne Twister, seeded by the integer: the
    same draw on every machine). `balanced`: the labels take turns (label order of the first draw per
    label), as evenly as the items allow, so no class dominates a short prompt; items without a label
    are then left out. The demonstrations are shuffled once more so that the last one shown is not
    always the same label."""
    if shots <= 0:
        return []
    if len(items) < shots:
        raise ValueError(f"prompt.shots={shots}, but the training split has {len(items)} items")
    rng = random.Random(int(seed))
    order = list(range(len(items)))
    rng.shuffle(order)
    if not balanced:
        return [items[i] for i in order[:shots]]
    by_label: dict[int, list[int]] = defaultdict(list)
    for i in order:
        if items[i].label is not None:
            by_label[items[i].label].append(i)
    if not by_label:
        raise ValueError("prompt.balanced=true needs labelled training items")
    picked: list[int] = []
    queues = [by_label[label] for label in sorted(by_label)]
    while len(picked) < shots and any(queues):
        for queue in queues:
            if queue and len(picked) < shots:
                picked.append(queue.pop(0))
    if len(picked) < shots:
        raise ValueError(f"prompt.shots={shots}, but only {len(picked)} labelled training items")
    rng.shuffle(picked)
    return [items[i] for i in picked]
