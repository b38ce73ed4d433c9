"""PragmatiCQA's readers behind one contract, `Reader`: what the task asks of whatever writes the answers.

The task retrieves; a reader reads a batch's questions with their retrieved passages (a `Reading`) and gives
the gold target's NLL (the training loss and the perplexity) and the output texts in the target's format
(`literal </lit> pragmatic </prag> answer`). Three adapters, one per kind of model, chosen once when the
network is built (`PragmatiCQATask.build_network`):

- `TokenReader`: a sequence-to-sequence model over token ids (`model=fid`); the data module's text handling
  (`TokenText`) turns questions and passages into ids and generated ids back into text;
- `PromptedReader`: an LLM (`model=llm`) writes the target from a prompt; a tuned one learns the target text
  after its prompt;
- `SpanReader`: the baselines (`oracle`, `lead`), which read no tokens and answer in spans.

What each adapter asks of its model is a Protocol beside it (`TextModel`, `PromptedWriter`, `SpanBaseline`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
import torch.nn.functional as F

from pragexp.tasks.contracts import PromptedModel

Passage = tuple[str, str]  # (title, text)
Spans = tuple[tuple[str, ...], tuple[str, ...], str]  # literal spans, pragmatic spans, answer


class Question(Protocol):
    """What the task and its readers read of one example (pragexp.data.pragmaticqa.examples.QAExample)."""

    answer: str

    @property
    def literal_texts(self) -> tuple[str, ...]: ...

    @property
    def pragmatic_texts(self) -> tuple[str, ...]: ...

    def query(self) -> str:
        """The question with its conversation so far: the question encoder's and the reader's input."""
        ...


FormatAnswer = Callable[[Sequence[str], Sequence[str], str], str]  # spans and answer -> one output text


@dataclass
class Reading:
    """A batch as a reader reads it."""

    examples: Sequence[Question]
    indices: list[int]  # the examples' dataset indices
    passages: list[list[Passage | None]]  # retrieved, in rank order; None where fewer than k were found
    labels: torch.Tensor | None  # the target as token ids (-100: padding), where the data module made them
    memo: dict = field(default_factory=dict)  # what a reader computed from it, for its next call on it

    def found(self) -> list[list[Passage]]:
        """The retrieved passages, without the places of those not found."""
        return [[p for p in row if p is not None] for row in self.passages]


class Reader(Protocol):
    """What the task asks of a reader."""

    def target_nll(self, reading: Reading) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Per example, the summed NLL of the gold target and its number of tokens; None for a reader that has
        none (the baselines, a frozen LLM)."""
        ...

    def write(self, reading: Reading) -> list[str]:
        """Each question's output text, in the target's format."""
        ...


# -- a sequence-to-sequence model over token ids ------------------------------------------------------------
class TextModel(Protocol):
    """A reader over token ids (`pragexp.models.fid.FiDReader`): the gold target's logits, and generation."""

    def __call__(self, *args, labels: torch.Tensor | None = None, **inputs) -> torch.Tensor: ...

    def generate(self, *args, **inputs) -> torch.Tensor: ...


class TokenText(Protocol):
    """The reader's text handling (pragexp.prompting.reader_text.ReaderText, which the data module holds)."""

    vocab_size: int
    special_ids: Mapping[str, int]  # pad, bos, eos and the decoder's first token

    def inputs(
        self, queries: Sequence[str], passages: Sequence[Sequence[Passage | None]]
    ) -> dict[str, torch.Tensor]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class TokenReader:
    def __init__(self, model: TextModel, text: TokenText, generation: Mapping):
        self.model, self.text, self.generation = model, text, dict(generation)

    def _inputs(self, reading: Reading) -> dict[str, torch.Tensor]:
        """Question and passages as token ids, once per reading (its NLL and its generation share them)."""
        if "inputs" not in reading.memo:
            device = next(self.model.parameters()).device
            inputs = self.text.inputs([e.query() for e in reading.examples], reading.passages)
            reading.memo["inputs"] = {k: v.to(device) for k, v in inputs.items()}
        return reading.memo["inputs"]

    def target_nll(self, reading: Reading) -> tuple[torch.Tensor, torch.Tensor] | None:
        labels = reading.labels
        if labels is None:
            return None
        logits = self.model(**self._inputs(reading), labels=labels)
        nll = F.cross_entropy(logits.float().transpose(1, 2), labels, ignore_index=-100, reduction="none")
        return nll.sum(1), (labels != -100).sum(1)

    def write(self, reading: Reading) -> list[str]:
        generated = self.model.generate(**self._inputs(reading), **self.generation)
        return [self.text.decode(row.tolist()) for row in generated]


# -- an LLM -------------------------------------------------------------------------------------------------
class PromptedWriter(PromptedModel, Protocol):
    """An LLM reader (`pragexp.models.llm.PromptedLLM`): writes the target from a prompt; a tuned one learns
    the target text."""

    def write(self, items: Sequence) -> list[str]: ...

    def target_nll(self, items: Sequence, targets: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]: ...


PromptItemOf = Callable[[Question, Sequence[Passage], int], object]  # (example, passages, index) -> an item


class PromptedReader:
    def __init__(self, model: PromptedWriter, prompt_item: PromptItemOf, format_answer: FormatAnswer):
        self.model, self.prompt_item, self.format_answer = model, prompt_item, format_answer

    def _items(self, reading: Reading) -> list:
        """The questions as the LLM reads them: conversation and retrieved passages in a prompt."""
        return [
            self.prompt_item(e, ps, i)
            for e, ps, i in zip(reading.examples, reading.found(), reading.indices, strict=True)
        ]

    def target_nll(self, reading: Reading) -> tuple[torch.Tensor, torch.Tensor] | None:
        if not self.model.learns:  # a frozen LLM is not scored on the gold target
            return None
        targets = [self.format_answer(e.literal_texts, e.pragmatic_texts, e.answer) for e in reading.examples]
        return self.model.target_nll(self._items(reading), targets)

    def write(self, reading: Reading) -> list[str]:
        return self.model.write(self._items(reading))


# -- the baselines ------------------------------------------------------------------------------------------
class SpanBaseline(Protocol):
    """A reader that reads no tokens and answers in spans (`pragexp.models.fid.OracleReader`,
    `LeadReader`)."""

    def predict(self, golds: Sequence[Spans], passages: Sequence[Sequence[Passage]]) -> list[Spans]: ...


class SpanReader:
    def __init__(self, model: SpanBaseline, format_answer: FormatAnswer):
        self.model, self.format_answer = model, format_answer

    def target_nll(self, reading: Reading) -> None:
        return None

    def write(self, reading: Reading) -> list[str]:
        """The spans written out as a generator would."""
        golds = [(e.literal_texts, e.pragmatic_texts, e.answer) for e in reading.examples]
        return [self.format_answer(*spans) for spans in self.model.predict(golds, reading.found())]
