"""Reading ToMATO's released question files (`dataset/tomato.json`, `tomato_first.json`, `tomato_second.json`,
`tomato_fb.json`): each a JSON list of questions with the same keys.

Per question: `conversation` (the transcript, one `Name: "utterance"` per line), `q`, the options `a0`..`a3`,
`a_idx` (the gold option, 0-3; `a_str` its text), `mental_state` (belief, intention, desire, emotion,
knowledge), `order` (1 or 2), `false_belief`, `big_five` (the asked-about speaker's personality: "Openness to
Experience - High; Conscientiousness - Low; ..."), `q_id` ("<kind>_<combo>_<u_id>"), `u_id`, `sotopia_agents`
and `sotopia_environment`. A question that breaks this (a missing key, `a_idx` not 0-3, `a_str` not the gold
option's text, an unknown mental state or order, a personality not of five traits) is a `DataFormatError`
naming the file, the record (its position in the list and its q_id) and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import read_json
from pragexp.data.common.files.records import require_fields
from pragexp.utils.errors import DataFormatError

FILES = {
    "all": "tomato.json",
    "first": "tomato_first.json",
    "second": "tomato_second.json",
    "fb": "tomato_fb.json",
}
STATES = ("belief", "intention", "desire", "emotion", "knowledge")
TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
OPTION_KEYS = ("a0", "a1", "a2", "a3")
REQUIRED = (
    *OPTION_KEYS,
    "a_idx",
    "a_str",
    "big_five",
    "conversation",
    "false_belief",
    "mental_state",
    "order",
)
REQUIRED += ("q", "q_id")


@dataclass(frozen=True)
class Question:
    q_id: str
    conversation: str
    question: str
    options: tuple[str, ...]
    true_index: int
    mental_state: str
    order: int
    false_belief: bool
    personality: tuple[tuple[str, str], ...]  # (trait, "high" | "low") for the five traits, in TRAITS' order


def read_questions(path) -> list[Question]:
    path = Path(path)
    records = read_json(path, "ToMATO", "data.path: the dataset/ folder or a file")
    if not isinstance(records, list):
        raise DataFormatError(path, f"expected a JSON list of questions, found {type(records).__name__}")
    return [_question(record, n, path) for n, record in enumerate(records)]


def _question(record, n: int, path: Path) -> Question:
    q_id = record.get("q_id") if isinstance(record, dict) else None

    def fail(field: str, message: str):
        raise DataFormatError(path, message, where=f"record {n} (q_id {q_id!r}), field {field!r}")

    require_fields(record, dict.fromkeys(REQUIRED), fail)
    options = tuple(record[k] for k in OPTION_KEYS)
    for key, option in zip(OPTION_KEYS, options, strict=True):
        if not isinstance(option, str) or not option.strip():
            fail(key, "expected a non-empty text")
    gold = record["a_idx"]
    if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < len(options):
        fail("a_idx", f"expected an option's index 0-3, found {gold!r}")
    if record["a_str"] != options[gold]:
        fail("a_str", f"is not option a{gold}'s text (a_idx {gold})")
    if record["mental_state"] not in STATES:
        fail("mental_state", f"expected one of {', '.join(STATES)}, found {record['mental_state']!r}")
    if record["order"] not in (1, 2) or isinstance(record["order"], bool):
        fail("order", f"expected 1 or 2, found {record['order']!r}")
    if not isinstance(record["false_belief"], bool):
        fail("false_belief", f"expected true or false, found {record['false_belief']!r}")
    personality = _personality(record["big_five"])
    if personality is None:
        fail("big_five", f"expected five 'Trait - High|Low' parts, found {record['big_five']!r}")
    for key in ("conversation", "q"):
        if not isinstance(record[key], str) or not record[key].strip():
            fail(key, "expected a non-empty text")
    return Question(
        str(q_id),
        record["conversation"],
        record["q"],
        options,
        gold,
        record["mental_state"],
        record["order"],
        record["false_belief"],
        personality,
    )


def _personality(text) -> tuple[tuple[str, str], ...] | None:
    """("openness", "high"), ... in TRAITS' order, from "Openness to Experience - High; ..."; None if not
    so."""
    if not isinstance(text, str):
        return None
    found = {}
    for part in text.split(";"):
        trait, _, level = part.partition(" - ")
        name, level = trait.strip().split(" ")[0].lower(), level.strip().lower()
        if name not in TRAITS or level not in ("high", "low"):
            return None
        found[name] = level
    return tuple((t, found[t]) for t in TRAITS) if len(found) == len(TRAITS) else None
