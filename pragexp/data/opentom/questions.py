"""An OpenToM question as the authors pose it and report it: its prompt's question
(`src/utils/build_prompt.py`, `OpenToMPromptBuilder` without chain of thought), its groups, and the genres of
their macro-F1 (`src/evaluate.py`).

The authors' prompt (the templates in `src/prompts/chatgpt_opentom_prompts/`, filled by `build_prompt`) is
"Read and comprehend the following short story. Then, answer the question that follows.", the narrative and
"Question: " with the question as `question_prompt` writes it: a coarse location question
(`chatgpt_location_cg.txt`) followed by 'Answer the question with "Yes" or "No". Do not give any
explanation.'; a fine location question (`chatgpt_location_fg.txt`) by "Answer the question without any
explanation."; a fullness or accessibility question by the three answers it takes ('Answer with "more full",
"equally full", or "less full".', `fullness` and `accessibility`) and the same sentence
(`chatgpt_multihop_*.txt`); an attitude question (`attitude`) is cut at its question mark, continued ",
assuming that you observed the action?" and 'Answer with "positive", "neutral", or "negative".', then " Answer
without any explanation." (the prompt stripped, a space before it).
"""

from __future__ import annotations

from pragexp.data.opentom.io import Question

ORDERS = ("first_order", "second_order")
GENRES = ("location_coarse", "location_fine", "multihop", "fullness", "accessibility", "attitude")
WITHOUT_EXPLANATION = "Answer the question without any explanation."
SUFFIXES = {
    "location_coarse": 'Answer the question with "Yes" or "No". Do not give any explanation.',
    "location_fine": WITHOUT_EXPLANATION,
    "fullness": f'Answer with "more full", "equally full", or "less full". {WITHOUT_EXPLANATION}',
    "accessibility": 'Answer with "more accessible", "equally accessible", or "less accessible". '
    f"{WITHOUT_EXPLANATION}",
}


def question_prompt(question: str, genre: str) -> str:
    """The question as the authors' prompt poses it (this module's docstring)."""
    if genre == "attitude":
        asked = question.split("?")[0].strip() + ", assuming that you observed the action?"
        return f'{asked} Answer with "positive", "neutral", or "negative". Answer without any explanation.'
    return f"{question} {SUFFIXES[genre]}"


def question_groups(question: Question) -> list[str]:
    """The groups a question is in, its genre and order first: fullness and accessibility are multi-hop
    too."""
    if question.order is None:
        return [question.genre]
    order = ORDERS[question.order - 1]
    genres = (
        [question.genre, "multihop"] if question.genre in ("fullness", "accessibility") else [question.genre]
    )
    return [f"{genres[0]}:{order}", *genres, order, *(f"{g}:{order}" for g in genres[1:])]


def f1_names(question: Question) -> list[str]:
    """The authors' genres a question's answers count in (their evaluate.py's tables): a location genre by
    order; multi-hop by order, fullness and accessibility pooled (their "overall") and each apart;
    attitude."""
    if question.order is None:
        return [question.genre]
    order = ORDERS[question.order - 1]
    if question.genre in ("fullness", "accessibility"):
        return [f"multihop:{order}", f"{question.genre}:{order}"]
    return [f"{question.genre}:{order}"]
