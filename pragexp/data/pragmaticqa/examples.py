"""One example per question: the conversation so far, the question, its gold spans and answer, its type.

History. The paper conditions on the whole conversation so far. A model's input reads the question first,
then the earlier turns newest first (`question: Q history: Q3 A3 | Q2 A2 | Q1 A1`), so cutting the input to
the encoder's length from the right drops the oldest turns first and never the question.

Question types (the paper's Appendix D): the question's first wh-word, else its first auxiliary among
*is, are, was, were, did, do, does* (the seven Appendix D lists), else `other`. Words are searched anywhere
in the question ("And who ..." is a `who` question); other auxiliaries (can, would, has, ...) are `other`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pragexp.data.pragmaticqa.io import Conversation, Span

WH_WORDS = ("what", "how", "who", "when", "where", "which", "why", "whose", "whom")
AUXILIARIES = ("is", "are", "was", "were", "did", "do", "does")
QUESTION_TYPES = (*WH_WORDS, *AUXILIARIES, "other")
_WORD = re.compile(r"[a-z]+")


def question_type(question: str) -> str:
    words = _WORD.findall(question.lower())  # "what's" -> what, s
    for vocabulary in (WH_WORDS, AUXILIARIES):
        found = next((w for w in words if w in vocabulary), None)
        if found:
            return found
    return "other"


@dataclass(frozen=True)
class QAExample:
    conversation: int  # the conversation's position in its split
    turn: int  # 0-based
    topic: str
    community: str
    question: str
    history: tuple[tuple[str, str], ...]  # earlier (question, answer) turns, oldest first
    answer: str
    literal: tuple[Span, ...]
    pragmatic: tuple[Span, ...]
    question_type: str

    @property
    def literal_texts(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.literal)

    @property
    def pragmatic_texts(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.pragmatic)

    def query(self) -> str:
        """The question with the earlier turns, newest first (see the module docstring)."""
        turns = " | ".join(f"{q} {a}" for q, a in reversed(self.history))
        return f"question: {self.question}" + (f" history: {turns}" if turns else "")


def qa_examples(conversations: Sequence[Conversation]) -> list[QAExample]:
    examples = []
    for c, conversation in enumerate(conversations):
        for t, qa in enumerate(conversation.qas):
            examples.append(
                QAExample(
                    conversation=c,
                    turn=t,
                    topic=conversation.topic,
                    community=conversation.community,
                    question=qa.question,
                    history=tuple((p.question, p.answer) for p in conversation.qas[:t]),
                    answer=qa.answer,
                    literal=qa.literal,
                    pragmatic=qa.pragmatic,
                    question_type=question_type(qa.question),
                )
            )
    return examples
