"""Reading the intention-resolution release, `hu_gpt4augmented_turn2_data.csv` (Yerukola et al.
2024, built on Hu et al. 2022), as it is.

One row per item: a scenario (`context_without_dialog_prefix`, `dialog_prefix`), a non-literal
utterance (`dialog`, U1^N) by `person1`, its true and literal intentions, and the reference replies
of `person2` under each (`turn2_response_from_true_intention` = U2^T,
`turn2_response_from_literal_intention` = U2^L). The header ends in unnamed columns that are empty.

Known quirks, handled here and counted in the `ReadReport`:
- broken quoting (maxims item 19 of the release) splits a field on its commas, so the two turn-2
  replies land in the unnamed trailing columns. Where the shift is unambiguous (the trailing values
  are exactly the two replies and the named columns before the stray pieces are intact) the replies
  are taken from the end of the row and the stray pieces dropped; otherwise the row is skipped;
- mojibake: an apostrophe saved as Mac Roman and read back as Latin-1 (`ThatÕs`) is repaired;
- a missing column is an error naming the file and the column; undecodable bytes name the line.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.common.files.csv_files import decode_utf8
from pragexp.utils.errors import DataFormatError

REQUIRED = (
    "item_id",
    "task",
    "context_without_dialog_prefix",
    "dialog_prefix",
    "dialog",
    "true_intention",
    "incorrect_literal_intention",
    "original_prompt_str",
    "person1",
    "person2",
    "intention_pronoun",
    "turn2_response_from_literal_intention",
    "turn2_response_from_true_intention",
)
REPLY_COLUMNS = ("turn2_response_from_literal_intention", "turn2_response_from_true_intention")
# The release's phenomena, in the paper's order (`prompt_items` says how prompts ask about and name each).
PHENOMENA = ("indirectspeech", "irony", "maxims", "metaphor")
# Mac Roman punctuation read back as Latin-1, between letters (That\u00d5s): the release's one mojibake.
_MOJIBAKE = re.compile(r"(?<=[A-Za-z])[\u00d5\u00d4](?=[A-Za-z])")
_FOUR_OPTIONS = re.compile(r"1, 2, 3,? or 4")
_QUESTION = re.compile(r"([A-Z][^.!?\"]*\?)\s*$")


@dataclass  # not frozen: Lightning moves batches with dataclasses.replace-like copies
class IntentionItem:
    item_id: str
    phenomenon: str
    context: str  # the scenario before the utterance
    dialog_prefix: str  # "Simon answers:"
    utterance: str  # U1^N, the non-literal utterance
    speaker: str  # person1, who says U1^N
    listener: str  # person2, who replies
    pronoun: str
    true_intention: str
    literal_intention: str
    reply_true: str  # U2^T
    reply_literal: str  # U2^L
    utterance_true: str  # U1^T, the direct utterance of the true intention (empty if the file has none)
    utterance_literal: str  # U1^L
    question: str  # Hu et al.'s question about the utterance ("What did Simon want to convey?")
    task_line: str  # Hu et al.'s task instruction, for two options ("The answer options are 1 or 2.")
    line: int = 0

    @property
    def scenario(self) -> str:
        """The context and the utterance as one passage, as the prompts show them."""
        return f"{self.context.strip()}\n{self.dialog_prefix.strip()} {self.utterance.strip()}"


@dataclass
class ReadReport:
    source: str
    rows_read: int = 0
    repaired: list[dict] = field(default_factory=list)  # {"line", "item", "what"}
    skipped: list[dict] = field(default_factory=list)  # {"line", "reason"}
    mojibake_fixed: list[dict] = field(default_factory=list)  # {"line", "field"}

    def summary(self) -> dict:
        return {
            "source": self.source,
            "rows_read": self.rows_read,
            "repaired": len(self.repaired),
            "skipped": len(self.skipped),
            "mojibake_fixed": len(self.mojibake_fixed),
            "repaired_rows": self.repaired,
            "skipped_rows": self.skipped,
            "mojibake_rows": self.mojibake_fixed,
        }


def _records(text: str):
    """(first line of the record, fields) for every CSV record; quoted fields may span lines."""
    reader = csv.reader(io.StringIO(text, newline=""))
    start = 1
    for fields in reader:
        yield start, fields
        start = reader.line_num + 1


def _question(prompt: str, pronoun: str) -> str:
    """The question Hu et al. asked after the scenario; a generic one when the prompt has none."""
    for line in prompt.splitlines():
        if line.startswith("Scenario:"):
            found = _QUESTION.search(line.strip())
            if found:
                return found.group(1).strip()
    return f"What might {pronoun} be trying to convey?"


def _task_line(prompt: str) -> str:
    """Hu et al.'s "Task: ..." line, saying there are two options instead of four ("" when absent)."""
    for line in prompt.splitlines():
        if line.startswith("Task:"):
            return _FOUR_OPTIONS.sub("1 or 2", line.strip())
    return ""


def read_intentions_csv(path) -> tuple[list[IntentionItem], ReadReport]:
    """Every usable item of the file and what was repaired or skipped. Raises for a missing file or column."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"intentions file not found: {path} (set data.path=/path/to/hu_gpt4augmented_turn2_data.csv)"
        )
    records = _records(decode_utf8(path))
    try:
        _, header = next(records)
    except StopIteration:
        raise DataFormatError(path, "empty file; expected a header", line=1) from None
    header = [h.strip() for h in header]
    absent = [c for c in REQUIRED if c not in header]
    if absent:
        raise DataFormatError(
            path, f"missing column(s) {', '.join(absent)}", line=1, where=f"header, column {absent[0]!r}"
        )
    col = {name: header.index(name) for name in header if name}
    named = max(i for i, h in enumerate(header) if h) + 1  # the unnamed trailing columns follow
    report, items = ReadReport(source=str(path)), []
    for line, fields in records:
        if not any(f.strip() for f in fields):
            continue
        report.rows_read += 1
        row = _row(fields, header, named, col, line, report)
        if row is None:
            continue
        for name, value in row.items():
            fixed = _MOJIBAKE.sub("'", value)
            if fixed != value:
                report.mojibake_fixed.append({"line": line, "field": name})
                row[name] = fixed
        missing = [c for c in ("task", "dialog", *REPLY_COLUMNS) if not row[c].strip()]
        if missing:
            report.skipped.append({"line": line, "reason": f"field {missing[0]!r} is empty"})
            continue
        items.append(
            IntentionItem(
                item_id=row["item_id"].strip(),
                phenomenon=row["task"].strip(),
                context=row["context_without_dialog_prefix"].strip(),
                dialog_prefix=row["dialog_prefix"].strip(),
                utterance=row["dialog"].strip(),
                speaker=row["person1"].strip(),
                listener=row["person2"].strip(),
                pronoun=row["intention_pronoun"].strip(),
                true_intention=row["true_intention"].strip(),
                literal_intention=row["incorrect_literal_intention"].strip(),
                reply_true=_unquote(row["turn2_response_from_true_intention"]),
                reply_literal=_unquote(row["turn2_response_from_literal_intention"]),
                utterance_true=_unquote(row.get("turn1_true_intention_dialog", "")),
                utterance_literal=_unquote(row.get("turn1_literal_intention_dialog", "")),
                question=_question(row["original_prompt_str"], row["intention_pronoun"].strip()),
                task_line=_task_line(row["original_prompt_str"]),
                line=line,
            )
        )
    return items, report


def _unquote(text: str) -> str:
    """A reply as said: the release wraps most replies in quotes, some not."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def _row(fields, header, named, col, line, report) -> dict | None:
    """The named fields of one record, with a shifted tail repaired; None (counted) when unusable."""
    if len(fields) < named:
        report.skipped.append({"line": line, "reason": f"expected {named} fields, found {len(fields)}"})
        return None
    trailing = [f for f in fields[named:] if f.strip()]
    values = {name: fields[i] for i, name in enumerate(header[:named]) if name}
    if not trailing:
        return values
    # A field with stray quotes was cut at its commas: everything after it moved right. The row can be
    # mended only when the named columns are all in their usual order before the replies (the last
    # two named columns), and the row's last values are exactly those two replies.
    reply_cols = [col[c] for c in REPLY_COLUMNS]
    if sorted(reply_cols) != [named - 2, named - 1] or len(trailing) != len(REPLY_COLUMNS):
        report.skipped.append({"line": line, "reason": "shifted columns, cannot tell where they belong"})
        return None
    at = [i for i in range(named, len(fields)) if fields[i].strip()]
    if at != list(range(at[0], at[0] + len(at))):
        report.skipped.append({"line": line, "reason": "shifted columns with gaps, cannot repair"})
        return None
    tail = [fields[i] for i in at]
    stray = fields[named - 2 : at[0]]
    for name, value in zip(sorted(REPLY_COLUMNS, key=col.get), tail, strict=True):
        values[name] = value
    report.repaired.append(
        {
            "line": line,
            "item": f"{values['task'].strip()} {values['item_id'].strip()}",
            "what": f"turn-2 replies taken from the {len(tail)} trailing columns; "
            f"dropped stray text {','.join(stray)!r}",
        }
    )
    return values
