"""BIG-bench's `implicatures` task in the hub's format: a local JSON-lines copy, or the hub via `datasets`.

The hub copy that `datasets` users load is `tasksource/bigbench`, config `implicatures` (parquet, splits
`train` and `validation`; the default split here, `train+validation`, is the whole task. The older
`google/bigbench` is a loading script needing the `bigbench` package, which `datasets` 4+ no longer runs.)
Records:

    {"inputs": "Does Speaker 2's answer mean yes or no? \\n\\nQ: Speaker 1: '...' Speaker 2: '...' \\nA:",
     "targets": ["no"], "multiple_choice_targets": ["yes", "no"], "multiple_choice_scores": [0, 1], "idx": 7}

A local file holds the same records, one JSON object per line. Per example: the context (`inputs`, as
given), the options (`multiple_choice_targets`, usually "yes"/"no") and the index of the true one: the
one option whose score is 1, all others 0. A record that breaks this (a missing field, scores that do not
pick exactly one option, `targets` that disagree with the scores) is a `DataFormatError` naming the file,
the line (or the hub record) and the field.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl
from pragexp.utils.errors import DataFormatError

HUB_NAME = "tasksource/bigbench"
HUB_CONFIG = "implicatures"
HUB_SPLIT = "train+validation"  # the hub copy splits BIG-bench's one set of examples in two
REQUIRED = ("inputs", "multiple_choice_targets", "multiple_choice_scores")
LOCAL_HINT = (
    "data.path=<a local JSON-lines copy> (one record per line: inputs, multiple_choice_targets, "
    "multiple_choice_scores)"
)


@dataclass(frozen=True)
class ImplicatureExample:
    idx: int  # the record's idx (when it has none: its line in a local file, its number on the hub)
    context: str  # `inputs` as given
    options: tuple[str, ...]
    true_index: int  # 0-based, into options

    @property
    def true_option(self) -> str:
        return self.options[self.true_index]


@dataclass
class ReadReport:
    source: str
    rows_read: int = 0


def read_jsonl(path) -> tuple[list[ImplicatureExample], ReadReport]:
    """Every example of a local JSON-lines copy of the task (blank lines are skipped)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"BIG-bench implicatures file not found: {path} (set {LOCAL_HINT})")
    return _collect(((n, record, {"line": n}) for n, record in iter_jsonl(path)), path)


def load_hub(
    name: str = HUB_NAME, config: str = HUB_CONFIG, split: str = HUB_SPLIT
) -> tuple[list[ImplicatureExample], ReadReport]:
    """The task from the hub through `datasets.load_dataset(name, config, split=split)`. Raises RuntimeError
    naming the setting to use instead when it cannot be loaded (offline, not cached, unknown name)."""
    try:
        import datasets

        data = datasets.load_dataset(name, config, split=split)
    except Exception as err:  # offline, not cached, unknown name or config: all end the same way for the user
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else ""
        offline = " (HF_DATASETS_OFFLINE is set and it is not in the local cache)" if _offline() else ""
        raise RuntimeError(
            f"the hub dataset {name!r}, config {config!r}, split {split!r} could not be loaded{offline} "
            f"({type(err).__name__}: {first_line}); set {LOCAL_HINT}"
        ) from err
    source = f"hub:{name}/{config}[{split}]"
    return _collect(((i, record, {"where": f"record {i}"}) for i, record in enumerate(data)), source)


def _offline() -> bool:
    return os.environ.get("HF_DATASETS_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _collect(
    records: Iterable[tuple[int, Mapping, dict]], source
) -> tuple[list[ImplicatureExample], ReadReport]:
    report, examples = ReadReport(source=str(source)), []
    for position, record, place in records:
        report.rows_read += 1
        examples.append(_example(record, position, source, place))
    return examples, report


def _example(record: Mapping, position: int, source, place: dict) -> ImplicatureExample:
    def fail(name: str, message: str):
        where = f"{place['where']}, field {name!r}" if "where" in place else f"field {name!r}"
        raise DataFormatError(source, message, line=place.get("line"), where=where)

    for name in REQUIRED:
        if record.get(name) is None:
            fail(name, "missing")
    context, options, scores = (record[name] for name in REQUIRED)
    if not isinstance(context, str) or not context.strip():
        fail("inputs", "expected a non-empty text")
    if (
        not isinstance(options, list)
        or len(options) < 2
        or not all(isinstance(o, str) and o for o in options)
    ):
        fail("multiple_choice_targets", f"expected two or more non-empty texts, found {options!r}")
    if not isinstance(scores, list) or len(scores) != len(options):
        fail("multiple_choice_scores", f"expected {len(options)} scores, one per option, found {scores!r}")
    numbers = all(isinstance(s, int | float) and not isinstance(s, bool) for s in scores)
    if not numbers or sorted(scores) != [0] * (len(options) - 1) + [1]:
        fail(
            "multiple_choice_scores",
            f"expected one score 1 (the true option) and the others 0, found {scores}",
        )
    true_index = scores.index(1)
    targets = record.get("targets") or []
    if targets and options[true_index] not in targets:
        fail("targets", f"{targets!r} do not hold the option scored 1 ({options[true_index]!r})")
    idx = record.get("idx", position)
    if not isinstance(idx, int) or isinstance(idx, bool):
        fail("idx", f"expected a whole number, found {idx!r}")
    return ImplicatureExample(idx=idx, context=context, options=tuple(options), true_index=true_index)
