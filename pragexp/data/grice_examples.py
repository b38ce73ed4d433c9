"""Turns GRICE dialogues into model examples for the two tasks.

- recovery: for every round, the history before it, the round itself (question + answer) as the
  query, the four candidate explicit forms, the gold index and the explicit form's words as
  `target` (what generative models are trained to produce; they add their own `<bos>`/`<eos>`);
- qa: for every question after the dialogue, the whole dialogue as history and the answer word.

Each example carries its dataset `index` (for exact metrics under DDP) and its implicature `group`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from pragexp.data.grice_io import Dialogue, Round
from pragexp.data.grice_schema import IMPLICATURE_TYPES
from pragexp.data.vocab import Vocabulary

NO_GROUP = -1


def dialogue_texts(dialogues: Iterable[Dialogue]) -> Iterable[str]:
    """Every text a model reads, for building the vocabulary."""
    for d in dialogues:
        for r in d.rounds:
            yield r.question
            yield r.answer
            yield from r.options
        for q in d.questions:
            yield q.question


def group_id(implicature: str | None) -> int:
    return IMPLICATURE_TYPES.index(implicature) if implicature in IMPLICATURE_TYPES else NO_GROUP


def _round_ids(r: Round, vocab: Vocabulary) -> list[int]:
    return [*vocab.encode(r.question), vocab.id(Vocabulary.SEP), *vocab.encode(r.answer)]


def recovery_examples(dialogues: Sequence[Dialogue], vocab: Vocabulary) -> list[dict]:
    examples = []
    for d in dialogues:
        rounds = [_round_ids(r, vocab) for r in d.rounds]
        for t, r in enumerate(d.rounds):
            examples.append(
                {
                    "index": len(examples),
                    "history": rounds[:t],
                    "query": rounds[t],
                    "candidates": [vocab.encode(o) for o in r.options],
                    "label": r.answer_index,
                    "target": vocab.encode(r.explicit) or vocab.encode(r.options[r.answer_index]),
                    "group": group_id(r.implicature or d.implicature),
                }
            )
    return examples


def qa_examples(dialogues: Sequence[Dialogue], vocab: Vocabulary, answers: Vocabulary) -> list[dict]:
    examples = []
    for d in dialogues:
        rounds = [_round_ids(r, vocab) for r in d.rounds]
        for q in d.questions:
            examples.append(
                {
                    "index": len(examples),
                    "history": rounds,
                    "query": vocab.encode(q.question),
                    "label": answers.id(answer_word(q.answer)),
                    "group": group_id(q.implicature or d.implicature),
                }
            )
    return examples


def answer_word(answer: str) -> str:
    return answer.strip().lower()


def _pad(seqs: Sequence[Sequence[int]], length: int) -> list[list[int]]:
    return [list(s) + [0] * (length - len(s)) for s in seqs]


def pad_2d(batch: Sequence[Sequence[int]]) -> torch.Tensor:
    length = max((len(s) for s in batch), default=0) or 1
    return torch.tensor(_pad(batch, length), dtype=torch.long)


def pad_3d(batch: Sequence[Sequence[Sequence[int]]]) -> torch.Tensor:
    """Pads a batch of lists of sentences to (B, max sentences (>= 1), max length (>= 1))."""
    n = max((len(x) for x in batch), default=0) or 1
    length = max((len(s) for x in batch for s in x), default=0) or 1
    return torch.tensor([_pad(list(x) + [[]] * (n - len(x)), length) for x in batch], dtype=torch.long)


def collate(items: Sequence[dict]) -> dict[str, torch.Tensor]:
    """Dynamic padding to the longest history/round/candidate of the batch."""
    batch = {
        "index": torch.tensor([x["index"] for x in items]),
        "group": torch.tensor([x["group"] for x in items]),
        "label": torch.tensor([x["label"] for x in items]),
        "history": pad_3d([x["history"] for x in items]),
        "query": pad_2d([x["query"] for x in items]),
    }
    if "candidates" in items[0]:
        batch["candidates"] = pad_3d([x["candidates"] for x in items])
    if "target" in items[0]:
        batch["target"] = pad_2d([x["target"] for x in items])
    return batch
