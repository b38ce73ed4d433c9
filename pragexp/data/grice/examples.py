"""Turns GRICE dialogues into model examples for the two tasks.

- recovery: for every round, the history before it, the round itself (question + answer) as the
  query, the four candidate explicit forms, the gold index and the explicit form's words as
  `target` (what generative models are trained to produce; they add their own `<bos>`/`<eos>`);
- qa: for every question after the dialogue, the whole dialogue as history and the answer word.

Each example carries its dataset `index` (for exact metrics under DDP) and its implicature `group`.

Word-level readers get word ids (`recovery_examples`, `qa_examples`); a BERT-style encoder gets
subword text pairs (`recovery_text_examples`, `qa_text_examples`): for recovery one
"[CLS] dialogue so far [SEP] candidate [SEP]" per candidate (scored multiple-choice style), for QA
"[CLS] dialogue [SEP] question [SEP]". The dialogue is the rounds as "question ? answer ." in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from pragexp.data.common import tokenization as tt
from pragexp.data.common.vocab import Vocabulary
from pragexp.data.grice.io import Dialogue, Round
from pragexp.data.grice.schema import IMPLICATURE_TYPES

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


def round_text(r: Round) -> str:
    return f"{r.question} ? {r.answer} ."


def dialogue_text(rounds: Iterable[Round]) -> str:
    return " ".join(round_text(r) for r in rounds)


def _encoded(tokenizer, pairs: list[tuple[str, str]]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    ids, types = tt.encode(tokenizer, [a for a, _ in pairs], [b for _, b in pairs])
    return [(torch.tensor(i), torch.tensor(t)) for i, t in zip(ids, types, strict=True)]


def recovery_text_examples(dialogues: Sequence[Dialogue], tokenizer) -> list[dict]:
    rows, pairs = [], []
    for d in dialogues:
        for t, r in enumerate(d.rounds):
            context = dialogue_text(d.rounds[: t + 1])
            pairs += [(context, option) for option in r.options]
            rows.append((len(r.options), r.answer_index, group_id(r.implicature or d.implicature)))
    encoded, examples, start = _encoded(tokenizer, pairs), [], 0
    for index, (n, label, group) in enumerate(rows):
        choices = encoded[start : start + n]
        start += n
        examples.append(
            {
                "index": index,
                "label": label,
                "group": group,
                "input_ids": [ids for ids, _ in choices],
                "token_type_ids": [types for _, types in choices],
            }
        )
    return examples


def qa_text_examples(dialogues: Sequence[Dialogue], tokenizer, answers: Vocabulary) -> list[dict]:
    rows, pairs = [], []
    for d in dialogues:
        context = dialogue_text(d.rounds)
        for q in d.questions:
            pairs.append((context, q.question))
            rows.append((answers.id(answer_word(q.answer)), group_id(q.implicature or d.implicature)))
    return [
        {"index": i, "label": label, "group": group, "input_ids": [ids], "token_type_ids": [types]}
        for i, ((label, group), (ids, types)) in enumerate(zip(rows, _encoded(tokenizer, pairs), strict=True))
    ]


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


class TextCollate:
    """Batches text examples (each a list of C encoded sequences: C = 4 candidates for recovery,
    1 for QA) into `inputs` of (B, C, L) tensors (`choices=True`) or (B, L), padded per batch."""

    def __init__(self, pad_token_id: int, choices: bool):
        self.pad_token_id, self.choices = pad_token_id, choices

    def __call__(self, items: Sequence[dict]) -> dict:
        batch = {key: torch.tensor([x[key] for x in items]) for key in ("index", "group", "label")}
        (per_example, *others) = {len(x["input_ids"]) for x in items}
        if others:
            raise ValueError("a GRICE text batch mixes examples with different numbers of candidates")
        inputs = tt.pad_encodings(
            [seq for x in items for seq in x["input_ids"]],
            [seq for x in items for seq in x["token_type_ids"]],
            self.pad_token_id,
        )
        if self.choices:
            inputs = {k: v.view(len(items), per_example, -1) for k, v in inputs.items()}
        batch["inputs"] = inputs
        return batch
