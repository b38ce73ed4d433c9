"""Two run directories of the same command side by side (e.g. before and after a change of code): the same
decisions, and the numbers within a tolerance?

    python experiments/llm/compare_runs.py BEFORE_RUN_DIR AFTER_RUN_DIR [--tol 1e-4]

`predictions.jsonl`: records are paired in file order (a run writes one record per example in the data's
order) and walked field by field: a number is compared by its absolute difference (the largest kept per field
name, e.g. `loglik`), any other value (a choice, a reply, a verdict, a prompt) must be equal. `metrics.json`:
every shared metric's difference. Fields or metrics that only one side has are listed, not compared. Prints a
summary (a line per field with --fields) and exits 1 when a decision or a text differs or a log-likelihood is
off by more than --tol.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def leaves(value, path=()):
    """(path, value) of every number, string, bool or null in a nested record; lists index their items."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    else:
        yield path, value


def field_name(path: tuple) -> str:
    """A leaf's field: its path without list positions (`orders.loglik`, not `orders.1.loglik.0`)."""
    return ".".join(str(p) for p in path if not isinstance(p, int)) or "<value>"


def compare(before: list[dict], after: list[dict]) -> tuple[dict, dict, dict, set, set]:
    """Per field: the largest |difference| of numbers, the count of unequal other values, the count compared;
    and the fields found on one side only."""
    max_diff, unequal, compared = defaultdict(float), defaultdict(int), defaultdict(int)
    only_before, only_after = set(), set()
    for old, new in zip(before, after, strict=True):
        a, b = dict(leaves(old)), dict(leaves(new))
        only_before |= {field_name(p) for p in a.keys() - b.keys()}
        only_after |= {field_name(p) for p in b.keys() - a.keys()}
        for path in a.keys() & b.keys():
            name, x, y = field_name(path), a[path], b[path]
            compared[name] += 1
            numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y))
            if numbers and not (isinstance(x, int) and isinstance(y, int) and name.endswith("choice")):
                max_diff[name] = max(max_diff[name], abs(float(x) - float(y)))
            elif x != y:
                unequal[name] += 1
    return max_diff, unequal, compared, only_before, only_after


def compare_metrics(before: Path, after: Path) -> str:
    a, b = (json.loads((run / "metrics.json").read_text(encoding="utf-8")) for run in (before, after))
    shared = [k for k in a if k in b and all(isinstance(m[k], int | float) for m in (a, b))]
    line = f"metrics.json: {len(shared)} shared"
    if shared:
        worst = max(shared, key=lambda k: abs(a[k] - b[k]))
        line += f", max |d| {abs(a[worst] - b[worst]):.2e} ({worst})"
    for side, keys in (("before", a.keys() - b.keys()), ("after", b.keys() - a.keys())):
        if keys:
            line += f"; only {side}: {', '.join(sorted(keys))}"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="a run directory (predictions.jsonl, metrics.json)")
    parser.add_argument("after", type=Path)
    parser.add_argument("--fields", action="store_true", help="a line per field, not only the summary")
    parser.add_argument(
        "--tol", type=float, default=1e-4, help="largest |difference| allowed for loglik fields"
    )
    args = parser.parse_args()
    print(compare_metrics(args.before, args.after))
    before, after = read(args.before / "predictions.jsonl"), read(args.after / "predictions.jsonl")
    if len(before) != len(after):
        print(f"{args.before}: {len(before)} records, {args.after}: {len(after)}: not the same examples")
        return 1
    max_diff, unequal, compared, only_before, only_after = compare(before, after)
    bad = [n for n in compared if n in max_diff and "loglik" in n and max_diff[n] > args.tol]
    bad += [n for n in compared if n not in max_diff and unequal[n]]
    for name in sorted(compared) if args.fields else ():
        if name in max_diff:
            print(f"  {name}: {compared[name]} numbers, max |d| {max_diff[name]:.2e}")
        else:
            print(f"  {name}: {compared[name] - unequal[name]}/{compared[name]} equal")
    for side, names in (("before", only_before), ("after", only_after)):
        if names:
            print(f"fields only {side}: {', '.join(sorted(names))}")
    logliks = [max_diff[n] for n in max_diff if "loglik" in n]
    texts = "every text and decision equal" if not any(unequal.values()) else "texts or decisions DIFFER"
    loglik = f"max |d loglik| {max(logliks):.2e}" if logliks else "no log-likelihoods"
    verdict = "OK" if not bad else "DIFFERENT: " + ", ".join(sorted(bad))
    print(f"predictions.jsonl: {len(before)} records, {len(compared)} fields; {texts}; {loglik}; {verdict}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
