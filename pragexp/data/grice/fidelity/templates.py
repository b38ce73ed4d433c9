"""Sentences as templates: entity words become slots (AGENT, LOC, OBJ, OBJ_SG, COLOUR, CONT, NUM,
PUT/PUT_BASE, GO/GO_BASE, PRON/PRON_OBJ) found with a lexicon; every other word stays."""

from __future__ import annotations

from pragexp.data.grice.generator.lexicon import base_form, load_lexicon, singular

# Slots, in the order they are tried when a phrase could be two (longest phrase wins first).
PRONOUNS = {"he": "PRON", "she": "PRON", "him": "PRON_OBJ", "her": "PRON_OBJ"}
# "put" is its own past tense: it is the base form when one of these words comes at most three
# words before ("did you put", "did the woman put", "if Mia put", "to put").
_BASE_AFTER = frozenset(("did", "didn't", "if", "to"))
# Capitalised words that are not names.
_NOT_NAMES = frozenset(("I", "I'm", "TV_room"))


class Abstractor:
    """Maps sentences to templates with a lexicon (the generator's, by default)."""

    def __init__(self, lexicon=None):
        lex = load_lexicon(lexicon)
        table: dict[tuple[str, ...], tuple[str, ...]] = {}

        def add(phrase: str, *slots: str) -> None:
            table.setdefault(tuple(phrase.replace("_", " ").split()), slots)
            table.setdefault(tuple(phrase.split()), slots)

        for o in lex.objects:  # before colours: "green peppers" is an object
            add(o, "OBJ")
        for o in lex.objects:
            add(singular(o), "OBJ_SG")
        # A container is always named with its colour; alone, "pantry" is a location.
        for c in lex.colours:
            for k in lex.containers:
                add(f"{c} {k}", "COLOUR", "CONT")
        for c in lex.colours:
            add(c, "COLOUR")
        for loc in lex.locations:
            add(loc, "LOC")
        for n in lex.numbers:
            add(n, "NUM")
        for a in lex.agents:
            add(a, "AGENT")
        for v in lex.put_verbs:
            add(v, "PUT")
            add(base_form(v), "PUT_BASE")
        for v in lex.go_verbs:
            add(v, "GO")
            add(base_form(v), "GO_BASE")
        for p, slot in PRONOUNS.items():
            add(p, slot)
        self.table = table
        self.longest = max(len(k) for k in table)
        self._cache: dict[str, tuple[str, tuple]] = {}

    def split(self, sentence: str) -> tuple[str, tuple]:
        """(template, entity values in order)."""
        hit = self._cache.get(sentence)
        if hit is not None:
            return hit
        words = sentence.split()
        out, values, i = [], [], 0
        while i < len(words):
            for n in range(min(self.longest, len(words) - i), 0, -1):
                phrase = tuple(words[i : i + n])
                slots = self.table.get(phrase)
                if slots is not None:
                    if (
                        slots == ("PUT",)
                        and phrase == ("put",)
                        and _BASE_AFTER.intersection(words[max(0, i - 3) : i])
                    ):
                        slots = ("PUT_BASE",)
                    out.extend(slots)
                    if len(slots) == 1:
                        values.append((slots[0], " ".join(phrase)))
                    else:  # colour + container
                        values += [(slots[0], phrase[0]), (slots[1], " ".join(phrase[1:]))]
                    i += n
                    break
            else:
                w = words[i]
                if w[:1].isupper() and w not in _NOT_NAMES:  # a name the lexicon does not list
                    out.append("AGENT")
                    values.append(("AGENT", w))
                else:
                    out.append(w)
                i += 1
        hit = (" ".join(out), tuple(values))
        self._cache[sentence] = hit
        return hit

    def __call__(self, sentence: str) -> str:
        return self.split(sentence)[0]
