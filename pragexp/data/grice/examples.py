"""Turns GRICE dialogues into model examples for the two tasks.

- recovery: for every round, the history before it, the round itself (question + answer) as the
  query, the four candidate explicit forms, the gold index and the explicit form's words as
  `target` (what generative models are trained to produce; they add their own `<bos>`/`<eos>`);
- qa: for every question after the dialogue, the whole dialogue as history and the answer word.

Each example carries its dataset `index` (for exact metrics under DDP), its implicature `group` and its
dialogue's number (`cluster`: the sampling unit, since the rounds and questions of one dialogue share its
world).

Word-level readers get word ids (`recovery_examples`, `qa_examples`); a BERT-style encoder gets
subword text pairs (`recovery_text_examples`, `qa_text_examples`): for recovery one
"[CLS] dialogue so far [SEP] candidate [SEP]" per candidate (scored multiple-choice style), for QA
"[CLS] dialogue [SEP] question [SEP]". The dialogue is the rounds as "question ? answer ." in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
from torch.nn.utils.rnn import pad_sequence

from pragexp.batches.types import EncodedBatch, GriceBatch
from pragexp.data.common.tokens import tokenization as tt
from pragexp.data.common.tokens.vocab import Vocabulary
from pragexp.data.grice.io import Dialogue, Round
from pragexp.data.grice.schema import IMPLICATURE_TYPES

NO_GROUP = -1
PAD = 0  # the vocabulary's <pad>


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
    for n, d in enumerate(dialogues):
        rounds = [_round_ids(r, vocab) for r in d.rounds]
        for t, r in enumerate(d.rounds):
            examples.append(
                {
                    "index": len(examples),
                    "cluster": n,  # the dialogue: its sampling unit
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
    for n, d in enumerate(dialogues):
        rounds = [_round_ids(r, vocab) for r in d.rounds]
        for q in d.questions:
            examples.append(
                {
                    "index": len(examples),
                    "cluster": n,  # the dialogue: its sampling unit
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


def recovery_text_examples(dialogues: Sequence[Dialogue]) -> list[dict]:
    """One example per round: a (dialogue so far, candidate) text pair per candidate."""
    examples = []
    for n, d in enumerate(dialogues):
        for t, r in enumerate(d.rounds):
            context = dialogue_text(d.rounds[: t + 1])
            examples.append(
                {
                    "index": len(examples),
                    "cluster": n,  # the dialogue: its sampling unit
                    "label": r.answer_index,
                    "group": group_id(r.implicature or d.implicature),
                    "pairs": [(context, option) for option in r.options],
                }
            )
    return examples


def qa_text_examples(dialogues: Sequence[Dialogue], answers: Vocabulary) -> list[dict]:
    """One example per question: the (dialogue, question) text pair."""
    examples = []
    for n, d in enumerate(dialogues):
        context = dialogue_text(d.rounds)
        for q in d.questions:
            examples.append(
                {
                    "index": len(examples),
                    "cluster": n,  # the dialogue: its sampling unit
                    "label": answers.id(answer_word(q.answer)),
                    "group": group_id(q.implicature or d.implicature),
                    "pairs": [(context, q.question)],
                }
            )
    return examples


def answer_word(answer: str) -> str:
    return answer.strip().lower()


def pad_2d(batch: Sequence[Sequence[int]]) -> torch.Tensor:
    """Sequences of ids -> (B, longest (>= 1)), padded with 0."""
    return pad_sequence(
        [torch.tensor(list(s) or [PAD], dtype=torch.long) for s in batch], batch_first=True, padding_value=PAD
    )


def pad_3d(batch: Sequence[Sequence[Sequence[int]]]) -> torch.Tensor:
    """Lists of sentences -> (B, most sentences (>= 1), longest sentence (>= 1)), padded with 0."""
    sentences = pad_2d([s for x in batch for s in x] or [[]])
    rows = max((len(x) for x in batch), default=0) or 1
    out = sentences.new_zeros((len(batch), rows, sentences.shape[1]))
    start = 0
    for i, x in enumerate(batch):
        out[i, : len(x)] = sentences[start : start + len(x)]
        start += len(x)
    return out


def collate(items: Sequence[dict]) -> GriceBatch:
    """Dynamic padding to the longest history/round/candidate of the batch."""
    batch = GriceBatch(
        index=torch.tensor([x["index"] for x in items]),
        cluster=torch.tensor([x["cluster"] for x in items]),
        group=torch.tensor([x["group"] for x in items]),
        label=torch.tensor([x["label"] for x in items]),
        history=pad_3d([x["history"] for x in items]),
        query=pad_2d([x["query"] for x in items]),
    )
    if "candidates" in items[0]:
        batch["candidates"] = pad_3d([x["candidates"] for x in items])
    if "target" in items[0]:
        batch["target"] = pad_2d([x["target"] for x in items])
    return batch


class TextCollate:
    """Batches text examples (each a list of C text pairs: C = 4 candidates for recovery, 1 for QA) into an
    `EncodedBatch`, its `inputs` encoded by the tokenizer: (B, C, L) tensors (`choices=True`) or (B, L)."""

    def __init__(self, tokenizer, choices: bool):
        self.tokenizer, self.choices = tokenizer, choices

    def __call__(self, items: Sequence[dict]) -> EncodedBatch:
        batch = {key: torch.tensor([x[key] for x in items]) for key in ("index", "cluster", "group", "label")}
        (per_example, *others) = {len(x["pairs"]) for x in items}
        if others:
            raise ValueError("a GRICE text batch mixes examples with different numbers of candidates")
        pairs = [pair for x in items for pair in x["pairs"]]
        inputs = tt.encode_batch(self.tokenizer, [a for a, _ in pairs], [b for _, b in pairs])
        if self.choices:
            inputs = {k: v.view(len(items), per_example, -1) for k, v in inputs.items()}
        return EncodedBatch(**batch, inputs=inputs)
