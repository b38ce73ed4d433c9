"""`python -m pragexp.data.grice.fidelity`: the report as markdown (stdout or --out) and its figures as
JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pragexp.utils.io import atomic_write_text

from .compare import compare
from .markdown import render_markdown


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pragexp.data.grice.fidelity",
        description="Template coverage of generated GRICE files against official ones.",
    )
    p.add_argument("--official", nargs="+", required=True, metavar="FILE", help="official impl_dial files")
    p.add_argument(
        "--generated", nargs="+", required=True, metavar="FILE", help="generated files, same schema"
    )
    p.add_argument("--lexicon", default=None, help="lexicon JSON for the slots (default: the generator's)")
    p.add_argument("--top", type=int, default=10, help="misses listed per field and side")
    p.add_argument("--out", default=None, help="write the markdown report here (default: stdout)")
    p.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    try:
        rep = compare(
            [Path(x) for x in args.official], [Path(x) for x in args.generated], args.lexicon, args.top
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    text = render_markdown(rep)
    if args.out:
        atomic_write_text(Path(args.out), text + "\n")
    else:
        print(text)
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(rep.to_json(), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
