"""CLI: python -m pragexp.data.grice --split train --dialogs 6000 --seed 0 --out train.json"""

from __future__ import annotations

import argparse
import sys

from .generator import SPLIT_PRESETS, write_dataset


def _non_negative(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def _mix(text):
    """ "explicit=0.5,ignorance=0.5" -> dict (validated later by the generator)."""
    mix = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            mix[name.strip()] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected TYPE=PROBABILITY, got {part!r}") from None
        if not sep:
            raise argparse.ArgumentTypeError(f"expected TYPE=PROBABILITY, got {part!r}")
    return mix


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pragexp.data.grice",
        description="Generate GRICE dialogues in the official JSON schema.",
    )
    p.add_argument("--split", required=True, choices=sorted(SPLIT_PRESETS))
    p.add_argument(
        "--dialogs",
        type=_non_negative,
        default=None,
        metavar="N",
        help="number of dialogues (test: the total over the 5 types); default: the split preset",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="output JSON file (written atomically)")
    p.add_argument("--lexicon", default=None, help="lexicon JSON (default: the official release's)")
    p.add_argument(
        "--mix",
        type=_mix,
        default=None,
        metavar="TYPE=P,...",
        help="per-round implicature mix, e.g. explicit=0.5,ignorance=0.5 (default: paper Table 4)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    n = args.dialogs if args.dialogs is not None else SPLIT_PRESETS[args.split]["n_dialogs"]
    try:
        counts = write_dataset(
            args.out,
            args.split,
            n,
            args.seed,
            lexicon=args.lexicon,
            implicature_mix=args.mix,
            progress=not args.quiet and sys.stderr.isatty(),
        )
    except ValueError as err:
        p.error(str(err))
    except KeyboardInterrupt:
        print(f"interrupted; {args.out} was not written", file=sys.stderr)
        return 130
    per_type = " ".join(f"{k}={v}" for k, v in counts["rounds"].items())
    extra = (
        " conditions: " + " ".join(f"{k}={v}" for k, v in counts["test_condition"].items())
        if counts["test_condition"]
        else ""
    )
    print(f"wrote {counts['dialogs']} {args.split} dialogues to {counts['path']}; rounds: {per_type}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
