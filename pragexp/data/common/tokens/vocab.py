"""Word-level vocabulary built from training text; unseen words map to <unk>, never crash."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_WORD = re.compile(r"[a-z0-9_']+")


def tokenize(text: str) -> list[str]:
    """Lowercased words; locations such as `dining_room` and contractions such as `didn't` stay whole."""
    return _WORD.findall(text.lower())


class Vocabulary:
    PAD, UNK, SEP = "<pad>", "<unk>", "<sep>"

    def __init__(self, words: Iterable[str], specials: Iterable[str] = (PAD, UNK, SEP)):
        self.itos: list[str] = list(dict.fromkeys([*specials, *words]))
        self._stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1, **kwargs) -> Vocabulary:
        counts = Counter(tok for text in texts for tok in tokenize(text))
        # Sorted by frequency then alphabetically, so the same data always gives the same ids.
        words = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        return cls(words, **kwargs)

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, word: str) -> bool:
        return word in self._stoi

    @property
    def unk_id(self) -> int:
        return self._stoi[self.UNK]

    def id(self, word: str) -> int:
        return self._stoi.get(word, self.unk_id)

    def encode(self, text: str) -> list[int]:
        return [self.id(tok) for tok in tokenize(text)]

    def state_dict(self) -> dict:
        return {"itos": list(self.itos)}

    @classmethod
    def from_state_dict(cls, state: dict) -> Vocabulary:
        return cls(state["itos"], specials=())
