"""Reading LUDWIG's released files (Ruis et al. 2023; github.com/LauraRuis/do-pigs-fly, data/) as they are.

Pairs, `dev_conversational_implicatures.csv` (118) and `test_conversational_implicatures.csv` (600), columns
`Context utterance,Response utterance,Implicature`: one utterance, its indirect response, and "Yes."/"No."
possibly followed by an explanation ("Yes. But it does not arrive on time.").

- Text: the release has quoted fields with line breaks (`\\n`, some `\\r\\n`), trailing line breaks and
  spaces inside fields ("Did he pass the exam?\\r\\n") and curly quotes. By default a field's surrounding
  whitespace is stripped and `\\r\\n` becomes `\\n`; the text inside (curly quotes, an indented line break)
  is kept as released. The authors' code (src/dataset.py, `_process_text`) strips only `\\n` from the ends
  of the utterance and response, so their models read a trailing `\\r` or space in a few pairs:
  `as_authors_read=True` gives that text instead. Either way a pair whose text was trimmed is counted.
- Label: the authors' rule (`_filter_examples` in src/dataset.py): "yes" where "yes" is in the first five
  characters of the implicature as released (lower-cased), else "no" where "no" is in its first four, else the
  pair is skipped and counted with its line. So "Not now." (row 209 of the released test file) is "no", and
  all 600 test pairs are kept, as theirs are. The explanation is what follows a leading yes/no word and its
  punctuation ("" when nothing), or the whole implicature when it starts with another word ("Not now.").
- A pair with an empty field is skipped and counted with its line (the authors drop only an empty implicature;
  none in the released files). Each pair keeps its `row`: its index among the records the authors' code keeps
  (their `test_data[row]`), the row of the release when all are kept: the authors' demonstrations are drawn
  per row.

Templates, `prompt_templates.txt` and `two_prompt_templates.txt` (the contrastive setting): not CSV. The
first line holds the `;`-separated column names; each later line holds `;`-separated values, each in
double quotes that the text itself may contain unescaped (`"Esther asked "%s" and ..."`). The authors'
`read_prompt_file` (src/prompting.py) splits on `;`, takes what lies between a value's first and last
quote, and turns a literal backslash-n into a newline; so does this reader (it splits only on a `;`
between quotes). A template needs three `%s` (utterance, response, implicature) and its mask phrase one
`%s` inside the template, or it is a `DataFormatError` naming the file, line and field.

Type labels, `type_labels.csv` (columns Utterance,Response,Implicature,Type,Factual knowledge), two ways:

- `authors_types` (the default): as the authors' `type_label_analysis` (src/error_analysis.py) looks them up:
  by the utterance alone, the label file read with Python's universal newlines (its `\\r\\n` a `\\n`), the
  pair's utterance with `\\n` stripped from its ends and every `\\r` removed, the last label row of an
  utterance winning; a pair found under no utterance is "Other". A quoted utterance that ends in a line break
  therefore matches nothing there: such pairs are "Other" in the paper's per-type figures.
- `match_types` (`data.types=matched`): by utterance and response, ignoring whitespace and curly-vs-straight
  quotes: each label finds the pair it was written for; a pair no label names has no type.

A missing file or column is an error naming it; undecodable bytes name the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.common.files.csv_files import csv_records, decode_utf8
from pragexp.utils.errors import DataFormatError

PAIR_COLUMNS = ("Context utterance", "Response utterance", "Implicature")
TEMPLATE_COLUMNS = (
    "example_template_text",
    "phrase_to_split_on_for_bias_prediction",
    "phrase_to_put_mask",
    "example_instruction_text",
    "prompt_instruction_text",
)
TYPE_COLUMNS = ("Utterance", "Response", "Implicature", "Type", "Factual knowledge")
DEV_FILE = "dev_conversational_implicatures.csv"
TEST_FILE = "test_conversational_implicatures.csv"
TEMPLATES_FILE = "prompt_templates.txt"
CONTRASTIVE_TEMPLATES_FILE = "two_prompt_templates.txt"
SLOT = "%s"
OTHER = "Other"  # the authors' type of a pair their lookup finds under no label

_YES_NO = re.compile(r"^(yes|no)(?![a-z])[\s.,;:!]*(.*)$", re.IGNORECASE | re.DOTALL)
_BETWEEN_QUOTED = re.compile(r'(?<=")\s*;\s*(?=")')  # a separator between two quoted values
_QUOTED = re.compile(r'^\s*"(.*)"\s*$', re.DOTALL)
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@dataclass(frozen=True)
class ImplicaturePair:
    utterance: str
    response: str
    implicature: str  # the full text: "Yes. But it does not arrive on time."
    label: str  # "yes" or "no"
    explanation: str  # what follows yes/no: "But it does not arrive on time." ("" when nothing)
    source: str = ""  # the file name
    line: int = 0  # first line of the record
    row: int = 0  # index among the records the authors' code keeps (their `test_data[row]`)
    type_key: str = ""  # the utterance as the authors' type lookup reads it (`authors_types`)


@dataclass
class PairReadReport:
    source: str
    rows_read: int = 0
    authors_rows: int = 0  # the records the authors' code keeps
    skipped: list[dict] = field(default_factory=list)  # {"line", "reason"}
    trimmed: list[dict] = field(default_factory=list)  # {"line", "field"}: kept, surrounding text changed

    def summary(self) -> dict:
        return {
            "source": self.source,
            "rows_read": self.rows_read,
            "authors_rows": self.authors_rows,
            "skipped": len(self.skipped),
            "trimmed": len(self.trimmed),
            "skipped_rows": self.skipped,
        }


@dataclass(frozen=True)
class LudwigTemplate:
    example_template: str  # three %s: utterance, response, implicature
    bias_split_phrase: str  # phrase_to_split_on_for_bias_prediction
    mask_phrase: str  # phrase_to_put_mask: the template's piece around the implicature's %s
    example_instruction: str
    prompt_instruction: str
    line: int = 0

    def fill(self, utterance: str, response: str, implicature: str) -> str:
        """The template with its three slots filled (other `%` signs stay as they are)."""
        pieces = self.example_template.split(SLOT)
        return (
            "".join(p + v for p, v in zip(pieces, (utterance, response, implicature), strict=False))
            + pieces[-1]
        )


@dataclass(frozen=True)
class TypeLabel:
    utterance: str
    response: str
    implicature: str
    type: str  # Particularised, Generalised, Idiom, World knowledge, Rhetorical question, Hyperbole, ...
    factual_knowledge: str  # as released ("Yes", "No"; a few typos such as "Np")
    line: int = 0
    type_key: str = ""  # the utterance as the authors' type lookup keys it (`authors_types`)


@dataclass(frozen=True)
class LudwigRelease:
    dev: tuple[ImplicaturePair, ...]
    test: tuple[ImplicaturePair, ...]
    templates: tuple[LudwigTemplate, ...]
    contrastive_templates: tuple[LudwigTemplate, ...]
    dev_report: PairReadReport
    test_report: PairReadReport


# -- shared reading -----------------------------------------------------------------------------------
def _release_file(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(
            f"LUDWIG file not found: {path} (set data.path to the folder data/ of the release)"
        )
    return path


def _csv_rows(path: Path, required: tuple[str, ...]):
    """The records of one of the release's CSV files (`csv_files.csv_records`), a missing file named."""
    return csv_records(_release_file(path), required)


def clean_text(text: str) -> str:
    """A field without its surrounding whitespace, its line breaks as `\\n`."""
    return text.replace("\r\n", "\n").strip()


def authors_text(text: str) -> str:
    """A field as the authors' code fed it to their models: only `\\n` stripped from its ends."""
    return text.strip("\n")


def split_implicature(text: str) -> tuple[str, str] | None:
    """("yes"|"no", explanation) from an implicature's start, or None when it starts with neither."""
    match = _YES_NO.match(text.strip())
    return (match[1].lower(), match[2].strip()) if match else None


def authors_label(implicature: str) -> str | None:
    """The label the authors' code gives an implicature as released: "yes" if "yes" is in its first five
    characters (lower-cased), else "no" if "no" is in its first four, else None (they drop the pair)."""
    text = implicature.lower()
    if "yes" in text[:5]:
        return "yes"
    return "no" if "no" in text[:4] else None


def _label_type_key(utterance: str) -> str:
    """A label row's utterance as the authors' `open(file, "r")` reads it: universal newlines."""
    return utterance.replace("\r\n", "\n").replace("\r", "\n")


def _pair_type_key(utterance: str) -> str:
    """A pair's utterance as the authors' error analysis keys it: `\\n` stripped from its ends, `\\r`
    removed."""
    return utterance.strip("\n").replace("\r", "")


# -- pairs --------------------------------------------------------------------------------------------
def read_pairs(path, as_authors_read: bool = False) -> tuple[list[ImplicaturePair], PairReadReport]:
    """Every usable pair of one LUDWIG CSV, and what was skipped (an implicature the authors' rule labels
    neither yes nor no, an empty field) or trimmed."""
    path = Path(path)
    report, pairs = PairReadReport(source=str(path)), []
    for line, row in _csv_rows(path, PAIR_COLUMNS):
        report.rows_read += 1
        label = authors_label(row["Implicature"])
        if label is None:
            reason = f"field 'Implicature' is neither yes nor no: {row['Implicature'][:40]!r}"
            report.skipped.append({"line": line, "reason": reason})
            continue
        report.authors_rows += 1  # the authors keep it: their index counts it, shown or not
        empty = [name for name in PAIR_COLUMNS if not row[name].strip()]
        if empty:
            report.skipped.append({"line": line, "reason": f"field {empty[0]!r} is empty"})
            continue
        parts = split_implicature(row["Implicature"])
        report.trimmed += [
            {"line": line, "field": name} for name in PAIR_COLUMNS if clean_text(row[name]) != row[name]
        ]
        text = authors_text if as_authors_read else clean_text
        pairs.append(
            ImplicaturePair(
                utterance=text(row["Context utterance"]),
                response=text(row["Response utterance"]),
                implicature=clean_text(row["Implicature"]),
                label=label,
                explanation=parts[1] if parts else clean_text(row["Implicature"]),
                source=path.name,
                line=line,
                row=report.authors_rows - 1,
                type_key=_pair_type_key(row["Context utterance"]),
            )
        )
    return pairs, report


# -- templates ----------------------------------------------------------------------------------------
def read_templates(path) -> list[LudwigTemplate]:
    """The prompt templates of a `;`-separated, quoted template file, checked (see the module docstring)."""
    path = Path(path)
    lines = [
        (n, text.rstrip("\r"))
        for n, text in enumerate(decode_utf8(_release_file(path)).split("\n"), start=1)
        if text.strip()
    ]
    if not lines:
        raise DataFormatError(path, "empty file; expected a header line", line=1)
    header = [key.strip() for key in lines[0][1].split(";")]
    absent = [c for c in TEMPLATE_COLUMNS if c not in header]
    if absent:
        raise DataFormatError(
            path,
            f"missing column(s) {', '.join(absent)}",
            line=lines[0][0],
            where=f"header, column {absent[0]!r}",
        )
    return [
        _template(dict(zip(header, _quoted_values(path, n, text, header), strict=True)), path, n)
        for n, text in lines[1:]
    ]


def _quoted_values(path: Path, line: int, text: str, header: list[str]) -> list[str]:
    values = _BETWEEN_QUOTED.split(text)
    if len(values) != len(header):
        raise DataFormatError(
            path, f"expected {len(header)} ';'-separated quoted values, found {len(values)}", line=line
        )
    unquoted = []
    for name, value in zip(header, values, strict=True):
        match = _QUOTED.match(value)
        if not match:
            raise DataFormatError(
                path, f"value not in double quotes: {value[:40]!r}", line=line, where=f"field {name!r}"
            )
        unquoted.append(match[1].replace("\\n", "\n"))  # the release writes a newline as backslash-n
    return unquoted


def _template(values: dict[str, str], path: Path, line: int) -> LudwigTemplate:
    template, mask, split_on = (
        values["example_template_text"],
        values["phrase_to_put_mask"],
        values["phrase_to_split_on_for_bias_prediction"],
    )
    if template.count(SLOT) != 3:
        raise DataFormatError(
            path,
            f"needs three {SLOT} slots (utterance, response, implicature), found {template.count(SLOT)}",
            line=line,
            where="field 'example_template_text'",
        )
    if mask.count(SLOT) != 1 or mask not in template:
        raise DataFormatError(
            path,
            f"must hold one {SLOT} and be part of the template: {mask!r}",
            line=line,
            where="field 'phrase_to_put_mask'",
        )
    if not split_on or split_on not in template:
        raise DataFormatError(
            path,
            f"must be part of the template: {split_on!r}",
            line=line,
            where="field 'phrase_to_split_on_for_bias_prediction'",
        )
    return LudwigTemplate(
        example_template=template,
        bias_split_phrase=split_on,
        mask_phrase=mask,
        example_instruction=values["example_instruction_text"],
        prompt_instruction=values["prompt_instruction_text"],
        line=line,
    )


# -- implicature types --------------------------------------------------------------------------------
def read_type_labels(path) -> tuple[list[TypeLabel], PairReadReport]:
    """The implicature-type labels; a row with an empty utterance, response or type is skipped and counted."""
    path = Path(path)
    report, labels = PairReadReport(source=str(path)), []
    for line, row in _csv_rows(path, TYPE_COLUMNS):
        report.rows_read += 1
        empty = [name for name in ("Utterance", "Response", "Type") if not row[name].strip()]
        if empty:
            report.skipped.append({"line": line, "reason": f"field {empty[0]!r} is empty"})
            continue
        labels.append(
            TypeLabel(
                utterance=clean_text(row["Utterance"]),
                response=clean_text(row["Response"]),
                implicature=clean_text(row["Implicature"]),
                type=row["Type"].strip(),
                factual_knowledge=row["Factual knowledge"].strip(),
                line=line,
                type_key=_label_type_key(row["Utterance"]),
            )
        )
    return labels, report


def pair_key(utterance: str, response: str) -> tuple[str, str]:
    """What identifies a pair across the release's files: the text with whitespace collapsed and curly
    quotes made straight."""
    return tuple(" ".join(text.translate(_CURLY).split()) for text in (utterance, response))


def match_types(
    pairs: Iterable[ImplicaturePair], labels: Iterable[TypeLabel]
) -> tuple[dict[int, TypeLabel], list[TypeLabel]]:
    """{index of the pair in `pairs`: its type label}, and the labels that match no pair."""
    index: dict[tuple[str, str], int] = {}
    for i, pair in enumerate(pairs):
        index.setdefault(pair_key(pair.utterance, pair.response), i)
    typed, unmatched = {}, []
    for label in labels:
        i = index.get(pair_key(label.utterance, label.response))
        if i is None:
            unmatched.append(label)
        else:
            typed[i] = label
    return typed, unmatched


def authors_types(pairs: Iterable[ImplicaturePair], labels: Iterable[TypeLabel]) -> dict[int, str]:
    """{index of the pair in `pairs`: its type} as the authors' error analysis looks it up (see the module's
    docstring): every pair has one, "Other" where its utterance is under no label."""
    by_utterance = {label.type_key: label.type for label in labels}  # the last row of an utterance wins
    return {i: by_utterance.get(pair.type_key, OTHER) for i, pair in enumerate(pairs)}


# -- the release folder -------------------------------------------------------------------------------
def read_ludwig(
    folder, test_file: str = TEST_FILE, dev_file: str = DEV_FILE, as_authors_read: bool = False
) -> LudwigRelease:
    """The dev and test pairs and both template files of a LUDWIG data/ folder (a test file of another name,
    such as an excerpt, can be named)."""
    folder = Path(folder)
    if not (folder / test_file).is_file():
        others = sorted(p.name for p in folder.glob("test_*.csv"))
        raise FileNotFoundError(
            f"LUDWIG test file not found: {folder / test_file}; name it with test_file= "
            f"(test CSVs in that folder: {', '.join(others) or 'none'})"
        )
    dev, dev_report = read_pairs(folder / dev_file, as_authors_read)
    test, test_report = read_pairs(folder / test_file, as_authors_read)
    return LudwigRelease(
        dev=tuple(dev),
        test=tuple(test),
        templates=tuple(read_templates(folder / TEMPLATES_FILE)),
        contrastive_templates=tuple(read_templates(folder / CONTRASTIVE_TEMPLATES_FILE)),
        dev_report=dev_report,
        test_report=test_report,
    )
