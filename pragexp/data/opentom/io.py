"""Reading OpenToM's release (`data/opentom_data/` of github.com/seacowx/OpenToM): the stories' metadata and
the question files of each genre, which the authors' own code reads (`src/run_baseline.py`).

- `meta_data.json` (and `meta_data_long.json`, the 100 stories that also have a long narrative): story key
  (eight digits) -> `plot_info` {mover, eoi, original_place, move_to_place, observer}, `narrative`
  (`long_narrative`), `observed`, preferences, personality and more, not read here.
- Question files, story key -> [{question, answer, type}]: `location_cg_fo.json`, `location_cg_so.json` (is
  the entity in its initial location? Yes / No), `location_fg_fo_new.json`, `location_fg_so_new.json` (where
  precisely: a container's name; the release renamed them from `location_fg_fo.json` and
  `location_fg_so.json`, which the authors' code names and which are read where the new names are not there),
  `multihop_fo.json`, `multihop_so.json` (fullness: more / equally / less full; accessibility: more / equally
  / less accessible) and `attitude.json` (positive / neutral / negative).

Each question gets its genre (by its file, and for a multi-hop question by the word "fullness" or
"accessibility" in it, as the authors' evaluator tells them apart), its order (the file's fo or so; attitude
has none) and its options in the order of the authors' class labels (`src/evaluate/opentom_evaluator.py`): No,
Yes; the original place, the new one; less, more, equally full; more, less, equally accessible; positive,
negative, neutral. Answers are read as their evaluator reads them: an accessibility answer "a | b" or a list
is "equally accessible", or the list's one answer other than "corrupted". A fine location answer is matched to
a place as their `check_answer_for_fg_location` matches it (a leading "a", "an" or "the" cut by their
`remove_determinant`, then lower case: a word that merely starts with one of those letters loses them too, as
theirs does); an answer that is neither place has no label in their evaluator, which drops it: it is skipped
here and counted.

A question file's story that is not in meta_data.json, a question missing a key, an answer that is none of its
genre's labels, a story without its plot_info or narrative: a `DataFormatError` naming the file, the record
(story key and the question's position) and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import read_json
from pragexp.data.common.files.records import require_fields
from pragexp.utils.errors import DataFormatError

META, META_LONG = "meta_data.json", "meta_data_long.json"
# (file, its old name or None, genre, order): the release's question files, in the order the authors' code
# reads them with both location granularities (run_baseline.py's valid_q_types)
QUESTION_FILES = (
    ("location_cg_fo.json", None, "location_coarse", 1),
    ("location_fg_fo_new.json", "location_fg_fo.json", "location_fine", 1),
    ("location_cg_so.json", None, "location_coarse", 2),
    ("location_fg_so_new.json", "location_fg_so.json", "location_fine", 2),
    ("multihop_fo.json", None, "multihop", 1),
    ("multihop_so.json", None, "multihop", 2),
    ("attitude.json", None, "attitude", None),
)
LABELS = {
    "location_coarse": ("No", "Yes"),
    "fullness": ("less full", "more full", "equally full"),
    "accessibility": ("more accessible", "less accessible", "equally accessible"),
    "attitude": ("positive", "negative", "neutral"),
}
PLOT_KEYS = ("mover", "eoi", "original_place", "move_to_place", "observer")


@dataclass(frozen=True)
class Story:
    key: str
    number: int  # its position in the metadata file
    mover: str
    observer: str
    entity: str
    original_place: str
    move_to_place: str
    narrative: str


@dataclass(frozen=True)
class Question:
    story: str  # the story's key
    file: str
    position: int  # in the story's list of its file
    genre: str  # location_coarse, location_fine, fullness, accessibility or attitude
    order: int | None  # 1, 2; None for attitude
    question: str
    answer: str
    options: tuple[str, ...]
    true_index: int


def read_stories(path, narrative: str = "narrative") -> dict[str, Story]:
    """The metadata file's stories by key, with the `narrative` (or `long_narrative`) field as their text."""
    path = Path(path)
    document = _json(path)
    if not isinstance(document, dict):
        raise DataFormatError(path, "expected an object of stories by key")
    return {key: _story(key, n, raw, path, narrative) for n, (key, raw) in enumerate(document.items())}


def _story(key: str, n: int, raw, path: Path, narrative: str) -> Story:
    def fail(field: str, message: str):
        raise DataFormatError(path, message, where=f"story {key!r}, field {field!r}")

    info = raw.get("plot_info") if isinstance(raw, dict) else None
    if not isinstance(info, dict):
        fail("plot_info", "missing (or not an object)")
    for name in PLOT_KEYS:
        if not isinstance(info.get(name), str) or not info[name].strip():
            fail(f"plot_info.{name}", "expected a non-empty text")
    if not isinstance(raw.get(narrative), str) or not raw[narrative].strip():
        fail(narrative, "expected a non-empty text")
    return Story(
        key,
        n,
        info["mover"],
        info["observer"],
        info["eoi"],
        info["original_place"],
        info["move_to_place"],
        raw[narrative],
    )


def _json(path: Path):
    return read_json(path, "OpenToM", "data.path: the release's opentom_data/ folder")


def question_file(folder: Path, name: str, old: str | None) -> Path:
    """The release's file, or its old name (the authors' code's) where only that is there."""
    if not (folder / name).is_file() and old and (folder / old).is_file():
        return folder / old
    return folder / name


def read_questions(
    path, genre: str, order: int | None, stories: Mapping[str, Story]
) -> tuple[list[Question], int]:
    """A question file's questions (story by story, in the file's order) and how many were skipped (a fine
    location answer that is neither place)."""
    path = Path(path)
    document = _json(path)
    if not isinstance(document, dict):
        raise DataFormatError(path, "expected an object: story key -> its questions")
    out, skipped = [], 0
    for key, questions in document.items():
        if not isinstance(questions, list):
            raise DataFormatError(path, "expected a list of questions", where=f"story {key!r}")
        for n, raw in enumerate(questions):
            question = _question(raw, key, n, path, genre, order, stories)
            skipped += question is None
            out += [question] if question is not None else []
    return out, skipped


def _question(raw, key: str, n: int, path: Path, genre: str, order, stories) -> Question | None:
    def fail(field: str, message: str):
        raise DataFormatError(path, message, where=f"story {key!r}, question {n}, field {field!r}")

    if key not in stories:
        fail("story key", f"story {key!r} is not in {META} (the question has no narrative)")
    require_fields(raw, dict.fromkeys(("question", "answer", "type")), fail)
    text = raw["question"]
    if not isinstance(text, str) or not text.strip():
        fail("question", "expected a non-empty text")
    if genre == "multihop":
        kinds = [k for k in ("fullness", "accessibility") if k in text]
        if not kinds:
            fail("question", "a multi-hop question asks about fullness or accessibility: it names neither")
        genre = kinds[0]
    story = stories[key]
    options = (story.original_place, story.move_to_place) if genre == "location_fine" else LABELS[genre]
    label = answer_label(raw["answer"], genre, options)
    if label is None and genre != "location_fine":
        fail("answer", f"{raw['answer']!r} is none of {', '.join(options)}")
    if label is None:
        return None  # neither place: the authors' evaluator gives it no label and drops it
    return Question(key, path.name, n, genre, order, text, options[label], options, label)


def answer_label(answer, genre: str, options) -> int | None:
    """The option an answer is, read as the authors' evaluator reads it; None where it is none."""
    if genre == "accessibility":
        if isinstance(answer, list):
            kept = [a for a in answer if a != "corrupted"]
            answer = kept[0] if len(kept) == 1 else None
        elif isinstance(answer, str) and "|" in answer:
            answer = "equally accessible"
    if not isinstance(answer, str):
        return None
    if genre == "location_fine":  # as their check: the determiner cut first, then lower case
        said, places = (
            without_determiner(answer.strip()).lower(),
            [without_determiner(o).lower() for o in options],
        )
        return places.index(said) if said in places else None
    said = answer.strip().lower()
    if genre == "location_coarse":
        return 0 if "no" in said else 1 if "yes" in said else None
    return options.index(said) if said in options else None


def without_determiner(word: str) -> str:
    """The authors' `remove_determinant`: the text without a leading "a", "an" or "the" (tried in that order,
    as a plain prefix: "armoire" loses its "a" too), stripped."""
    for determiner in ("a", "an", "the"):
        if word.startswith(determiner):
            return word[len(determiner) :].strip()
    return word
