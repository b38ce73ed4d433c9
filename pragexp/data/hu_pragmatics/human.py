"""Hu et al. 2022's human answers as released (github.com/jennhu/lm-pragmatics).

Human files, `human_data/fj/Human_<Phenomenon>.csv` (columns "", pKey, itemNum, Correct, Task,
OptionChosen): one row per participant and item. `OptionChosen` is "Answer<k>", k the original option
(the authors' analysis/main.ipynb indexes `original_labels_complex` with it); the CoherenceInference file
says "Coherent"/"Incoherent" instead, which the notebook maps to Answer1/Answer2 (the original order
lists the coherent reading first). `human_distribution_in_seed_order` puts an item's answers in a seed's
option order, so that a model's option probabilities there can be compared with people's.

The no-story experiment's people (`human_data/no_story/`, `read_no_story_answers`): `human_data_30ppts.csv`, a
Qualtrics export (column ppt, then one column `<item>_<Phenomenon>` per item, "PoliteDeceits" for Deceits,
each answer a field code `${lm://Field/k}`), and `codes/*_complex.csv` (per row `X<item>_<Phenomenon>`, per
field code the label of the option it showed); an answer is right where its label starts with "Correct", as
the notebook reads it. They give per item people's proportion correct, not the options' shares (the codes name
no order).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.common.files.csv_files import csv_records
from pragexp.data.hu_pragmatics.io import HuItem
from pragexp.utils.errors import DataFormatError

HUMAN_COLUMNS = ("pKey", "itemNum", "Correct", "Task", "OptionChosen")
HUMAN_FILE = re.compile(r"^Human_(?P<phenomenon>[A-Za-z]+)\.csv$")
_ANSWER = re.compile(r"^Answer(\d+)$")
NAMED_ANSWERS = {"Coherent": 1, "Incoherent": 2}  # CoherenceInference's human file names the option
NO_STORY_ANSWERS = "human_data_30ppts.csv"
NO_STORY_NAMES = {
    "PoliteDeceits": "Deceits"
}  # the export's phenomenon names that differ from the prompt files'
_NO_STORY_ITEM = re.compile(r"^X?(?P<item>\d+)_(?P<phenomenon>[A-Za-z]+)$")


@dataclass(frozen=True)
class HumanItem:
    phenomenon: str
    item_id: int
    counts: tuple[int, ...]  # people who chose original option k+1 (the order of original_labels_complex)
    correct: int  # people the file marks Correct

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def distribution(self) -> tuple[float, ...]:
        return tuple(c / self.n for c in self.counts) if self.n else tuple(0.0 for _ in self.counts)


@dataclass
class HumanReadReport:
    source: str
    rows_read: int = 0
    participants: int = 0
    skipped: list[dict] = field(default_factory=list)  # {"line", "reason"}


def _human_dir(root: Path) -> Path:
    """The human_data/fj/ folder: given itself or the repository root that holds it."""
    return root / "human_data" / "fj" if (root / "human_data" / "fj").is_dir() else root


def read_human_answers(path) -> tuple[dict[int, HumanItem], HumanReadReport]:
    """Per item of one `Human_<Phenomenon>.csv`, how many people chose each original option, and what was
    skipped (a row whose item, answer or Correct flag cannot be read), with its line."""
    path = Path(path)
    match = HUMAN_FILE.match(path.name)
    if not match:
        raise ValueError(f"not a human answer file name (Human_<Phenomenon>.csv): {path}")
    report = HumanReadReport(source=str(path))
    chosen: dict[int, Counter] = defaultdict(Counter)
    correct: Counter = Counter()
    people = set()
    for line, row in csv_records(path, HUMAN_COLUMNS):
        report.rows_read += 1
        answer = _human_answer(row["OptionChosen"].strip())
        item, flag = row["itemNum"].strip(), row["Correct"].strip()
        problem = (
            "field 'itemNum': not a whole number"
            if not (item.isascii() and item.isdigit())
            else "field 'Correct': not 0 or 1"
            if flag not in ("0", "1")
            else f"field 'OptionChosen': unknown answer {row['OptionChosen'][:30]!r}"
            if answer is None
            else None
        )
        if problem:
            report.skipped.append({"line": line, "reason": problem})
            continue
        chosen[int(item)][answer] += 1
        correct[int(item)] += flag == "1"
        people.add(row["pKey"].strip())
    report.participants = len(people)
    width = max((max(c) for c in chosen.values()), default=0)  # options of the phenomenon, as far as answered
    items = {
        item: HumanItem(
            phenomenon=match["phenomenon"],
            item_id=item,
            counts=tuple(counts[k] for k in range(1, width + 1)),
            correct=correct[item],
        )
        for item, counts in sorted(chosen.items())
    }
    return items, report


def _human_answer(value: str) -> int | None:
    """The original option number an OptionChosen value names (1-based), or None."""
    match = _ANSWER.match(value)
    if match and int(match[1]) >= 1:
        return int(match[1])
    return NAMED_ANSWERS.get(value)


def read_human_data(
    root, phenomena: Iterable[str] | None = None
) -> dict[str, tuple[dict[int, HumanItem], HumanReadReport]]:
    """The human answers of the selected phenomena (None = every Human_<Phenomenon>.csv found)."""
    folder = _human_dir(Path(root))
    if not folder.is_dir():
        raise FileNotFoundError(f"Hu et al. human data folder not found: {folder} (expected human_data/fj)")
    found = {m["phenomenon"]: p for p in folder.iterdir() if (m := HUMAN_FILE.match(p.name))}
    wanted = sorted(found) if phenomena is None else list(phenomena)
    unknown = [p for p in wanted if p not in found]
    if unknown:
        raise ValueError(
            f"no human answers for {', '.join(unknown)} in {folder}; found: {', '.join(sorted(found))}"
        )
    return {name: read_human_answers(found[name]) for name in wanted}


def human_accuracy(items: Iterable[HumanItem]) -> float:
    """The share of answers the file marks Correct."""
    items = list(items)
    total = sum(i.n for i in items)
    return sum(i.correct for i in items) / total if total else float("nan")


def human_distribution_in_seed_order(human: HumanItem, item: HuItem) -> tuple[float, ...]:
    """People's answer shares in `item`'s option order (the order of its prompt, its seed):
    position i shows original option item.option_order[i]."""
    if (human.phenomenon, human.item_id) != (item.phenomenon, item.item_id):
        raise ValueError(
            f"human answers of {human.phenomenon} item {human.item_id} do not belong to "
            f"{item.phenomenon} item {item.item_id}"
        )
    n = len(item.options)
    if any(human.counts[n:]):
        raise ValueError(
            f"{human.phenomenon} item {human.item_id}: people chose option {len(human.counts)}, "
            f"but the prompt has {n} options"
        )
    shares = (human.distribution + (0.0,) * n)[:n]
    return tuple(shares[original - 1] for original in item.option_order)


@dataclass(frozen=True)
class PeopleCorrect:
    """How many people answered an item and how many of them rightly."""

    answered: int
    correct: int

    @property
    def share(self) -> float:
        return self.correct / self.answered if self.answered else float("nan")


def read_no_story_answers(folder) -> tuple[dict[tuple[str, int], PeopleCorrect], HumanReadReport]:
    """Per (phenomenon, item) of the no-story experiment, people's answers and right answers; what was skipped
    (an empty answer, a code the codes files do not name) with its line."""
    folder = Path(folder)
    answers = folder / NO_STORY_ANSWERS
    if not answers.is_file():
        raise FileNotFoundError(f"no {NO_STORY_ANSWERS} in {folder} (Hu et al.'s human_data/no_story)")
    labels = _no_story_codes(folder / "codes")
    report = HumanReadReport(source=str(answers))
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for line, row in csv_records(answers, ("ppt",)):
        report.rows_read += 1
        report.participants += 1
        for column, code in row.items():
            key = _no_story_item(column)
            if key is None:
                continue
            label = labels.get((*key, code.strip()))
            if label is None:
                reason = (
                    "no answer" if not code.strip() else f"code {code.strip()[:30]!r} not in the codes files"
                )
                report.skipped.append({"line": line, "reason": f"field {column!r}: {reason}"})
                continue
            counts[key][0] += 1
            counts[key][1] += label.startswith("Correct")
    return {key: PeopleCorrect(*c) for key, c in sorted(counts.items())}, report


def _no_story_item(column: str) -> tuple[str, int] | None:
    """(phenomenon as the prompt files name it, item) of an export column or a codes row; None for another."""
    match = _NO_STORY_ITEM.match(column.strip())
    if not match:
        return None
    return NO_STORY_NAMES.get(match["phenomenon"], match["phenomenon"]), int(match["item"])


def _no_story_codes(folder: Path) -> dict[tuple[str, int, str], str]:
    """(phenomenon, item, field code) -> the label of the option that code showed, from every
    codes/*_complex.csv."""
    files = sorted(folder.glob("*_complex.csv"))
    if not files:
        raise FileNotFoundError(
            f"no codes/*_complex.csv in {folder.parent} (Hu et al.'s human_data/no_story)"
        )
    labels = {}
    for path in files:
        for line, row in csv_records(path, ("Question",)):
            key = _no_story_item(row["Question"])
            if key is None:
                raise DataFormatError(
                    path, f"not an item name: {row['Question'][:40]!r}", line=line, where="field 'Question'"
                )
            labels.update(
                {(*key, code.strip()): label.strip() for code, label in row.items() if code != "Question"}
            )
    return labels
