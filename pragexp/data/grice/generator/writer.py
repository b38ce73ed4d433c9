"""Streaming, atomic JSON writer in the official GRICE schema.

Dialogues are serialised one at a time (memory stays flat in N) into a temporary file in the target
directory, which is renamed over the target only after the last byte is written. On any error, or
Ctrl-C, the temporary file is removed, so a reader sees either the old file or the complete new one.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pragexp.data.grice.schema import IMPLICATURE_TYPES
from pragexp.utils.io import atomic_output

from .dialogue import GriceGenerator, check_seed, check_split

VERSION = "v0.1"

# one encoder for the whole file (json.dumps with non-default options builds a new one per call)
_encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def write_records(
    path, records: Iterable[dict], split: str, total: int | None = None, progress: bool = False
) -> dict:
    """Stream already-built dialogue records to ``path`` atomically; returns counts."""
    path = Path(path)
    rounds = Counter({t: 0 for t in IMPLICATURE_TYPES})
    conditions = Counter()
    n = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="dlg", file=sys.stderr, desc=f"grice {split}")
    try:
        with atomic_output(path) as fh:
            fh.write('{"data": {"dialogs": [')
            for rec in records:
                fh.write(",\n" if n else "\n")
                fh.write(_encode(rec))
                n += 1
                for r in rec["dialog"]:
                    rounds[r.get("implicature", "explicit")] += 1
                if "test_condition" in rec:
                    conditions[rec["test_condition"]] += 1
                if bar is not None:
                    bar.update(1)
            fh.write("\n]}, " + f'"split": {json.dumps(split)}, "version": {json.dumps(VERSION)}' + "}\n")
    finally:
        if bar is not None:
            bar.close()
    return {
        "path": str(path),
        "split": split,
        "dialogs": n,
        "rounds": dict(rounds),
        "test_condition": dict(sorted(conditions.items())),
    }


def write_dataset(
    path, split: str, n_dialogs: int, seed: int, lexicon=None, implicature_mix=None, progress: bool = False
) -> dict:
    """Generate ``n_dialogs`` dialogues of ``split`` with ``seed`` and write them to ``path``.

    For the test split ``n_dialogs`` is the total; dialogue k has implicature type k mod 5.
    """
    check_split(split)
    check_seed(seed)
    if not isinstance(n_dialogs, int) or isinstance(n_dialogs, bool) or n_dialogs < 0:
        raise ValueError(f"n_dialogs must be a non-negative int, got {n_dialogs!r}")
    gen = GriceGenerator(lexicon=lexicon, implicature_mix=implicature_mix)
    return write_records(path, gen.dialogs(split, n_dialogs, seed), split, total=n_dialogs, progress=progress)
