"""Level 5 of the AOG: the named entities (terminal words) and how to load them.

The default lexicon is the one of the official GRICE v0.1 release, shipped as package data
(``lexicon.json`` next to this file). Any other lexicon with the same keys can be swapped in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_LEXICON_PATH = Path(__file__).with_name("lexicon.json")

REQUIRED_KEYS = ("agents", "locations", "objects_plural", "containers", "colours", "verb_synonyms", "numbers")

# The lexicon lists past tenses only; negated answers ("I didn't leave ...") need the base form.
_IRREGULAR_BASE = {"put": "put", "left": "leave", "went": "go", "dropped": "drop", "travelled": "travel"}


def singular(plural: str) -> str:
    """ "cherries" -> "cherry", "peaches" -> "peach", "potatoes" -> "potato", "sweet potatoes" ->
    "sweet potato"; "asparagus" stays."""
    head, _, w = plural.rpartition(" ")
    if w.endswith("ies"):
        w = w[:-3] + "y"
    elif w.endswith(("oes", "ches", "shes", "xes", "sses")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("us"):
        w = w[:-1]
    return f"{head} {w}" if head else w


# Pronouns need a gender the lexicon does not carry; names outside these sets are never pronominalised.
_FEMALE = frozenset(
    "Abigail Amelia Aria Ava Avery Charlotte Chloe Elizabeth Ella Emily Emma Evelyn Hannah Isabella "
    "Isla Lily Mia Mila Olivia Sophia".split()
)
_MALE = frozenset(
    "Aiden Alexander Benjamin Carter Ethan Hunter Jack Jackson Jacob James Jayden Liam Logan Lucas Mason "
    "Nathan Noah Oliver Owen William".split()
)

# Grammar needs: >= 4 agents (woman + questioner's topics), >= 6 locations, >= 6 objects, >= 5 numbers.
_MIN_SIZES = {"agents": 4, "locations": 6, "objects_plural": 6, "containers": 1, "colours": 1, "numbers": 5}


def base_form(past: str) -> str:
    """Base form of a lexicon past-tense verb ("placed" -> "place")."""
    if past in _IRREGULAR_BASE:
        return _IRREGULAR_BASE[past]
    if past.endswith("ced") or past.endswith("sed") or past.endswith("ved"):
        return past[:-1]
    if past.endswith("ed"):
        return past[:-2]
    return past


@dataclass(frozen=True)
class Lexicon:
    agents: tuple
    locations: tuple
    objects: tuple
    containers: tuple
    colours: tuple
    put_verbs: tuple
    go_verbs: tuple
    numbers: tuple  # numbers[i] is the word for i + 1
    base: Mapping[str, str]  # past -> base form of every verb
    pronoun: Mapping[str, str]  # agent -> "he"/"she" (absent: repeat the name)
    container_kinds: tuple = ()  # every (colour, container) pair, precomputed for world sampling
    singular_of: Mapping[str, str] = None  # plural object -> its singular ("the potato")
    singulars: frozenset = frozenset()  # the singular forms, to tell "is" from "are"

    def number(self, n: int) -> str:
        return self.numbers[n - 1]

    def is_singular(self, obj: str) -> bool:
        return obj in self.singulars


def load_lexicon(source: None | str | Path | Mapping = None) -> Lexicon:
    """Load and validate a lexicon from a JSON path, a dict, or (None) the official one."""
    where = "lexicon dict"
    if source is None or isinstance(source, (str, Path)):
        path = Path(source) if source is not None else DEFAULT_LEXICON_PATH
        where = f"lexicon file {path}"
        try:
            with open(path, encoding="utf-8") as fh:
                raw = json.load(fh)
        except FileNotFoundError:
            raise ValueError(f"{where}: file not found") from None
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: not valid JSON ({err})") from None
    elif isinstance(source, Lexicon):
        return source
    else:
        raw = source
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: expected a JSON object at the top level")
    missing = [k for k in REQUIRED_KEYS if k not in raw]
    if missing:
        raise ValueError(f"{where}: missing key(s) {', '.join(missing)}")
    verbs = raw["verb_synonyms"]
    if not isinstance(verbs, Mapping) or "put" not in verbs or "went" not in verbs:
        raise ValueError(f"{where}: key verb_synonyms needs lists 'put' and 'went'")
    for key, least in _MIN_SIZES.items():
        if not isinstance(raw[key], list) or len(raw[key]) < least:
            raise ValueError(f"{where}: key {key} needs a list of at least {least} words")
    for key in ("put", "went"):
        if not isinstance(verbs[key], list) or not verbs[key]:
            raise ValueError(f"{where}: key verb_synonyms.{key} needs a non-empty list")
    put_verbs, go_verbs = tuple(verbs["put"]), tuple(verbs["went"])
    pronoun = {a: "she" for a in raw["agents"] if a in _FEMALE}
    pronoun.update({a: "he" for a in raw["agents"] if a in _MALE})
    return Lexicon(
        agents=tuple(raw["agents"]),
        locations=tuple(raw["locations"]),
        objects=tuple(raw["objects_plural"]),
        containers=tuple(raw["containers"]),
        colours=tuple(raw["colours"]),
        put_verbs=put_verbs,
        go_verbs=go_verbs,
        numbers=tuple(raw["numbers"]),
        base={v: base_form(v) for v in put_verbs + go_verbs},
        pronoun=pronoun,
        # the release writes "treasure_chest" as "treasure chest"
        container_kinds=tuple((c, k.replace("_", " ")) for c in raw["colours"] for k in raw["containers"]),
        # a noun whose singular is its plural ("asparagus") is never made singular
        singular_of={o: singular(o) for o in raw["objects_plural"] if singular(o) != o},
        singulars=frozenset(singular(o) for o in raw["objects_plural"] if singular(o) != o),
    )
