"""Reading Hu et al. 2022's released files (github.com/jennhu/lm-pragmatics) as they are.

Prompt files, `prompts/<Phenomenon>[_no-story]_prompts_seed<k>_examples<n>.csv`: one row per item, with the
columns phenomenon (a code: IV, ISV, ...), item_id, content, randomized_option_order,
randomized_labels_complex, randomized_true_answer, original_labels_complex, is_example, prompt, seed (the
Maxims files add randomized_violated_maxims and original_violated_maxims). Files are found by that pattern:
no phenomenon, variant or seed is hard-coded.

- `prompt` is the text the authors' models read, kept byte for byte (it ends in "Answer: "). The options
  are parsed from its numbered lines ("1) ...") and must be as many as the labels.
- `randomized_option_order[i]` is the original option (1-based, the order of `original_labels_complex`)
  shown at position i of this seed's prompt; `randomized_true_answer` is 1-based in the file, 0-based here.
- Rows dropped, as the authors' query_hf.py and query_openai.py drop them (`pd.read_csv(...).dropna()`):
  a row with any field empty or spelled as one of pandas' missing values ("NA", "nan", "null", ...). They
  are counted with their line. The scripts do not drop `is_example` rows (the examples0 files hold none):
  they are kept, flagged and counted.
- Anything else that is wrong (a missing column, a label list that is not a list literal, a true answer
  out of range, options that do not match the labels) is a `DataFormatError` naming the file, line and
  field; undecodable bytes name the line.

People's answers (`human_data/fj/`) are read by human.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.common.files.csv_files import csv_records
from pragexp.utils.errors import DataFormatError

PROMPT_COLUMNS = (
    "phenomenon",
    "item_id",
    "content",
    "randomized_option_order",
    "randomized_labels_complex",
    "randomized_true_answer",
    "original_labels_complex",
    "is_example",
    "prompt",
    "seed",
)
VARIANTS = ("story", "no-story")
PROMPT_FILE = re.compile(
    r"^(?P<phenomenon>[A-Za-z]+?)(?P<no_story>_no-story)?_prompts"
    r"_seed(?P<seed>\d+)_examples(?P<examples>\d+)\.csv$"
)
# What pandas.read_csv reads as missing by default: the authors' `.dropna()` drops rows holding any of them.
PANDAS_MISSING = frozenset(
    ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A")
    + ("NA", "NULL", "NaN", "None", "n/a", "nan", "null")
)
_OPTION_LINE = re.compile(r"^(\d+)\)[ \t]?(.*)$")


@dataclass(frozen=True)
class HuItem:
    phenomenon: str  # from the file name: "Irony"
    variant: str  # "story" or "no-story"
    seed: int
    item_id: int
    code: str  # the file's phenomenon column: "IV"
    content: str  # the scenario and its question, as in the file's `content` column
    prompt: str  # exactly as in the file
    options: tuple[str, ...]  # in prompt order, without "k) " and surrounding spaces
    option_kinds: tuple[str, ...]  # randomized_labels_complex: "CorrectNonLiteral", "IncorrectLiteral", ...
    true_index: int  # 0-based position of the true option in the prompt
    option_order: tuple[int, ...]  # position i shows original option option_order[i] (1-based)
    original_kinds: tuple[str, ...]  # original_labels_complex
    is_example: bool
    violated_maxims: tuple[str, ...] = ()  # Maxims files only, in prompt order
    source: str = ""  # the file name
    line: int = 0  # first line of the row in the file

    @property
    def true_option(self) -> str:
        return self.options[self.true_index]


@dataclass
class PromptReadReport:
    files: list[str] = field(default_factory=list)
    rows_read: int = 0
    dropped: list[dict] = field(default_factory=list)  # {"file", "line", "reason"}: a missing field
    examples: int = 0  # is_example rows: kept, as the authors' scripts keep them

    def summary(self) -> dict:
        return {
            "files": len(self.files),
            "rows_read": self.rows_read,
            "dropped": len(self.dropped),
            "examples": self.examples,
            "dropped_rows": self.dropped,
        }


# -- prompt files -------------------------------------------------------------------------------------
def _prompts_dir(root: Path) -> Path:
    """The prompts/ folder: given itself or the repository root that holds it."""
    return root / "prompts" if (root / "prompts").is_dir() else root


def find_prompt_files(
    root,
    phenomena: Iterable[str] | None = None,
    variant: str = "story",
    seeds: Iterable[int] | None = None,
    examples: int = 0,
) -> list[tuple[Path, str, int]]:
    """(path, phenomenon, seed) of the selected prompt files, sorted. None selects all found; a phenomenon or
    seed asked for and not found is an error listing what is there."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    folder = _prompts_dir(Path(root))
    if not folder.is_dir():
        raise FileNotFoundError(
            f"Hu et al. prompts folder not found: {folder} (set data.path=/path/to/prompts)"
        )
    found = {}
    for path in folder.iterdir():
        match = PROMPT_FILE.match(path.name)
        if (
            match
            and bool(match["no_story"]) == (variant == "no-story")
            and int(match["examples"]) == examples
        ):
            found[match["phenomenon"], int(match["seed"])] = path
    if not found:
        raise FileNotFoundError(f"no {variant} prompt files with examples{examples} in {folder}")
    names = sorted({p for p, _ in found})
    wanted = names if phenomena is None else list(phenomena)
    unknown = [p for p in wanted if p not in names]
    if unknown:
        raise ValueError(
            f"no {variant} prompt files for {', '.join(unknown)} in {folder}; found: {', '.join(names)}"
        )
    selected = []
    for name in wanted:
        have = sorted(s for p, s in found if p == name)
        want = have if seeds is None else sorted(set(seeds))
        missing = [s for s in want if s not in have]
        if missing:
            raise ValueError(f"{name} ({variant}) has no seed {missing} in {folder}; found seeds {have}")
        selected += [(found[name, s], name, s) for s in want]
    return selected


def read_prompts(
    root,
    phenomena: Iterable[str] | None = None,
    variant: str = "story",
    seeds: Iterable[int] | None = None,
    examples: int = 0,
) -> tuple[list[HuItem], PromptReadReport]:
    """Every item of the selected prompt files (by phenomenon, seed, file order), and what was dropped."""
    report, items = PromptReadReport(), []
    for path, phenomenon, seed in find_prompt_files(root, phenomena, variant, seeds, examples):
        report.files.append(path.name)
        items += _read_prompt_file(path, phenomenon, variant, seed, report)
    return items, report


def read_prompt_file(path) -> tuple[list[HuItem], PromptReadReport]:
    """One prompt file; its phenomenon, variant and seed come from its name."""
    path = Path(path)
    match = PROMPT_FILE.match(path.name)
    if not match:
        raise ValueError(
            f"not a prompt file name (<Phenomenon>[_no-story]_prompts_seed<k>_examples<n>.csv): {path}"
        )
    report = PromptReadReport(files=[path.name])
    variant = "no-story" if match["no_story"] else "story"
    return _read_prompt_file(path, match["phenomenon"], variant, int(match["seed"]), report), report


def _read_prompt_file(path: Path, phenomenon: str, variant: str, seed: int, report) -> list[HuItem]:
    items = []
    for line, row in csv_records(path, PROMPT_COLUMNS):
        report.rows_read += 1
        missing = [name for name, value in row.items() if value in PANDAS_MISSING]
        if missing:
            report.dropped.append(
                {"file": path.name, "line": line, "reason": f"field {missing[0]!r} is missing"}
            )
            continue
        item = _prompt_item(row, path, line, phenomenon, variant, seed)
        report.examples += item.is_example
        items.append(item)
    return items


def _prompt_item(row: dict, path: Path, line: int, phenomenon: str, variant: str, seed: int) -> HuItem:
    def fail(name: str, message: str):
        raise DataFormatError(path, message, line=line, where=f"field {name!r}")

    kinds = _literal_list(row, "randomized_labels_complex", str, fail)
    original = _literal_list(row, "original_labels_complex", str, fail)
    order = _literal_list(row, "randomized_option_order", int, fail)
    n = len(kinds)
    if len(original) != n:
        fail("original_labels_complex", f"{len(original)} labels, but randomized_labels_complex has {n}")
    if sorted(order) != list(range(1, n + 1)):
        fail(
            "randomized_option_order", f"not an order of the options 1..{n}: {row['randomized_option_order']}"
        )
    true_answer = _whole_number(row, "randomized_true_answer", fail)
    if not 1 <= true_answer <= n:
        fail("randomized_true_answer", f"{true_answer} is out of range: the item has options 1..{n}")
    file_seed = _whole_number(row, "seed", fail)
    if file_seed != seed:
        fail("seed", f"{file_seed}, but the file name says seed {seed}")
    flag = row["is_example"].strip().lower()
    if flag not in ("true", "false"):
        fail("is_example", f"expected True or False, found {row['is_example']!r}")
    options = _options(row["prompt"])
    if len(options) != n:
        fail("prompt", f"{len(options)} numbered options ('1) ...') before 'Answer', but {n} labels")
    maxims = (
        _literal_list(row, "randomized_violated_maxims", str, fail)
        if "randomized_violated_maxims" in row
        else ()
    )
    if maxims and len(maxims) != n:
        fail("randomized_violated_maxims", f"{len(maxims)} entries, but {n} options")
    return HuItem(
        phenomenon=phenomenon,
        variant=variant,
        seed=seed,
        item_id=_whole_number(row, "item_id", fail),
        code=row["phenomenon"].strip(),
        content=row["content"],
        prompt=row["prompt"],
        options=options,
        option_kinds=kinds,
        true_index=true_answer - 1,
        option_order=order,
        original_kinds=original,
        is_example=flag == "true",
        violated_maxims=maxims,
        source=path.name,
        line=line,
    )


def _literal_list(row: dict, name: str, kind: type, fail) -> tuple:
    """A Python list literal ("['A', 'B']", "[3, 1, 2]"), read safely (never eval)."""
    try:
        value = ast.literal_eval(row[name].strip())
    except (ValueError, SyntaxError, TypeError, RecursionError):
        fail(name, f"not a Python list literal: {row[name][:60]!r}")
    if not isinstance(value, list) or not value or not all(type(v) is kind for v in value):
        fail(name, f"expected a non-empty list of {kind.__name__}, found {row[name][:60]!r}")
    return tuple(value)


def _whole_number(row: dict, name: str, fail) -> int:
    text = row[name].strip()
    if not (text.isascii() and text.isdigit()):
        fail(name, f"not a whole number: {row[name][:40]!r}")
    return int(text)


def _options(prompt: str) -> tuple[str, ...]:
    """The numbered option lines just before the prompt's last "Answer" line, in order; () when they are not
    numbered 1..n."""
    lines = prompt.split("\n")
    answer = max((i for i, text in enumerate(lines) if text.strip().startswith("Answer")), default=None)
    if answer is None:
        return ()
    found = []
    for text in reversed(lines[:answer]):
        match = _OPTION_LINE.match(text)
        if not match:
            break
        found.append((int(match[1]), match[2].strip()))
    found.reverse()
    if [number for number, _ in found] != list(range(1, len(found) + 1)):
        return ()
    return tuple(text for _, text in found)
