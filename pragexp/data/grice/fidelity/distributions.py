"""Distributions that can differ with every template the same: rounds per dialogue, where a file's own type
sits, the distractor strategies of a round, pronoun use, vocabulary and QA answers."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from .views import DialogueView

_NEGATIONS = frozenset(("not", "didn't", "don't", "wasn't", "aren't"))
_EPISTEMIC = ("I am not sure", "I don't know", "I'm not sure", "I have no idea")
_QUANTS = frozenset(("all", "some", "NUM", "none", "any"))


def distractor_strategy(ab, gold: str, other: str) -> str:
    """Which of the paper's strategies a distractor looks like, from its text and the gold's."""
    gt, gv = ab.split(gold)
    ot, ov = ab.split(other)
    g_epi, o_epi = gold.startswith(_EPISTEMIC), other.startswith(_EPISTEMIC)
    if g_epi != o_epi:
        return "known/unsure swap"
    if gt == ot:
        if sorted(gv) == sorted(ov):
            return "order swap"
        changed = {s for (s, a), (_, b) in zip(gv, ov, strict=True) if a != b}
        if changed & {"AGENT", "PRON"} or (
            gold.split()[:1] != other.split()[:1] and "I" in (gold.split()[0], other.split()[0])
        ):
            return "other agent"
        if changed & {"OBJ", "OBJ_SG"}:
            return "other object"
        if changed & {"LOC", "COLOUR", "CONT"}:
            return "other location"
        if changed & {"NUM"}:
            return "other number"
        return "other verb"
    gw, ow = set(gt.split()), set(ot.split())
    if (gw ^ ow) <= _NEGATIONS and gw != ow:
        return "polarity flip"
    if (gw ^ ow) & _QUANTS or "of" in (gw ^ ow):
        return "quantity swap"
    if {s for s, _ in gv} == {s for s, _ in ov} and (gw ^ ow) <= {"PUT", "PUT_BASE", "GO", "GO_BASE"}:
        return "tense"
    gsub = {(s, v) for s, v in gv if s in ("AGENT", "OBJ", "OBJ_SG")}
    osub = {(s, v) for s, v in ov if s in ("AGENT", "OBJ", "OBJ_SG")}
    if gold.startswith("I ") != other.startswith("I ") or (gsub and osub and not gsub & osub):
        return "other agent/object"
    return "other fact"


def _pronoun_rate(sentences: Iterable[str]) -> dict:
    n, hits = 0, Counter()
    for s in sentences:
        n += 1
        words = set(s.split())
        for p in ("he", "she", "him", "her", "they", "them", "it", "there"):
            if p in words:
                hits[p] += 1
    return {p: hits[p] / n if n else 0.0 for p in ("he", "she", "him", "her", "they", "them", "it", "there")}


def distributions(ab, dialogues: Sequence[DialogueView], label) -> dict:
    rounds = Counter(len(d.rounds) for d in dialogues)
    own_rounds, own_position = Counter(), Counter()
    strategies, per_round = Counter(), Counter()
    questions, answers = [], []
    vocab = Counter()
    qa_answers = defaultdict(Counter)  # QA question template -> answer templates
    for d in dialogues:
        own = [i for i, r in enumerate(d.rounds) if d.condition and label(r)[0] == d.condition]
        if d.condition:
            own_rounds[len(own)] += 1
            for i in own:
                own_position[f"{i + 1} of {len(d.rounds)}"] += 1
        for r in d.rounds:
            kinds = sorted(distractor_strategy(ab, r.explicit, o) for o in r.distractors)
            strategies.update(kinds)
            per_round[" + ".join(kinds)] += 1
            questions.append(r.question)
            answers.append(r.answer)
            for s in (r.question, r.answer, r.explicit, *r.distractors):
                vocab.update(w for w in ab(s).split() if not w.isupper() or w in ("I",))
        for q, a in d.qa:
            vocab.update(w for w in ab(q).split() if not w.isupper())
            qa_answers[ab(q)][ab(a)] += 1
    n = sum(rounds.values()) or 1
    return {
        "rounds_per_dialogue": {str(k): v / n for k, v in sorted(rounds.items())},
        "own_type_rounds_per_dialogue": {str(k): v for k, v in sorted(own_rounds.items())},
        "own_type_round_position": dict(own_position.most_common()),
        "distractor_strategies": _shares(strategies),
        "distractor_strategy_sets": _shares(per_round, top=8),
        "pronouns_in_questions": _pronoun_rate(questions),
        "pronouns_in_answers": _pronoun_rate(answers),
        "vocabulary": vocab,
        "qa_answers_per_question": {q: _shares(c) for q, c in qa_answers.items()},
        "qa_questions": Counter({q: sum(c.values()) for q, c in qa_answers.items()}),
    }


def _shares(counter: Counter, top: int | None = None) -> dict:
    total = sum(counter.values()) or 1
    return {k: v / total for k, v in counter.most_common(top)}
