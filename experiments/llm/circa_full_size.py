"""A stand-in for the full circa-data.tsv, for timing only: the sample's lines cycled until as many rows carry
a RELAXED label as in the released file (32,995, so that the matched split's test part has its 6,599 rows).

    python experiments/llm/circa_full_size.py ../shared/samples/circa/circa-sample.tsv circa-full-size.tsv

The released file is not on this machine. The stand-in has its size and its kind of text (the same questions
and answers, repeated), so a run over it measures how long `task=circa model=llm` takes on the full matched
test split; its accuracy means nothing (a test row's copies are in the training part too). Each copy's `id` is
made unique (copy number x 10^6 + id). Written to a temporary file and renamed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pragexp.data.circa.io import read_circa_tsv, select_labelled  # noqa: E402

RELAXED_ROWS = 32_995  # the released file's rows with a RELAXED label: 19,797 / 6,599 / 6,599 matched


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sample", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--relaxed-rows", type=int, default=RELAXED_ROWS)
    args = p.parse_args()

    rows, _ = read_circa_tsv(args.sample)
    labelled = {row.id for row, _ in select_labelled(rows, "relaxed")[0]}
    header, *lines = args.sample.read_text(encoding="utf-8").rstrip("\n").split("\n")
    columns = header.split("\t")
    id_col = columns.index("id")
    # Only the lines that read as one row each (the sample's quirky lines are left out of the stand-in).
    readable = [line.split("\t") for line in lines if len(line.split("\t")) == len(columns)]
    readable = [fields for fields in readable if fields[id_col].isdigit()]
    if not any(f[id_col] in labelled for f in readable):
        raise SystemExit(f"{args.sample}: no line with a RELAXED label read as one row")

    out, kept, copy = [header], 0, 0
    while kept < args.relaxed_rows:
        for fields in readable:
            if kept >= args.relaxed_rows:
                break
            kept += fields[id_col] in labelled
            out.append(
                "\t".join([*fields[:id_col], str(copy * 10**6 + int(fields[id_col])), *fields[id_col + 1 :]])
            )
        copy += 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, args.out)
    print(
        f"{args.out}: {len(out) - 1} rows, {kept} with a RELAXED label ({copy} copies of {args.sample.name})"
    )


if __name__ == "__main__":
    main()
