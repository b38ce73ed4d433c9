"""The comparison: template counts of each side, per field and per group, the official rounds labelled from
the generated ones, coverage both ways and the `Report` that holds every figure."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .distributions import distributions
from .templates import Abstractor
from .views import DialogueView, RoundView, read_views

FIELDS = ("question", "answer", "explicit", "distractor", "qa_question", "qa_answer")
UNLABELLED = "unlabelled"


@dataclass
class Side:
    """Template counts of one side (official or generated), per field and per group."""

    counts: dict = field(default_factory=lambda: {f: Counter() for f in FIELDS})
    examples: dict = field(default_factory=lambda: {f: {} for f in FIELDS})
    grouped: dict = field(default_factory=lambda: defaultdict(Counter))  # (field, group) -> Counter
    dialogues: int = 0
    rounds: int = 0

    def add(self, fld: str, template: str, example: str, source: str, groups: Iterable[str]) -> None:
        self.counts[fld][template] += 1
        self.examples[fld].setdefault(template, (example, source))
        for g in groups:
            self.grouped[(fld, g)][template] += 1


def _round_key(ab, r: RoundView) -> tuple[str, str, str]:
    return ab(r.question), ab(r.answer), ab(r.explicit)


def _labeller(ab, generated: Sequence[DialogueView]):
    """(question, answer, explicit) templates -> the (type, subtopic) generated rounds carry most."""
    full, partial = defaultdict(Counter), defaultdict(Counter)
    for d in generated:
        for r in d.rounds:
            if r.implicature is None:
                continue
            key = _round_key(ab, r)
            label = (r.implicature, r.subtopic or "?")
            full[key][label] += 1
            partial[key[1:]][label] += 1

    def label(r: RoundView) -> tuple[str, str]:
        if r.implicature is not None:
            return r.implicature, r.subtopic or "?"
        key = _round_key(ab, r)
        for table, k in ((full, key), (partial, key[1:])):
            hit = table.get(k)
            if hit:
                return max(hit.items(), key=lambda kv: (kv[1], kv[0]))[0]
        return UNLABELLED, UNLABELLED

    return label


def _collect(ab, dialogues: Sequence[DialogueView], label) -> Side:
    side = Side()
    for d in dialogues:
        side.dialogues += 1
        cond = f"condition={d.condition}" if d.condition else "condition=none"
        for r in d.rounds:
            side.rounds += 1
            imp, sub = label(r)
            groups = (cond, f"type={imp}", f"subtopic={sub}", f"type={imp}/subtopic={sub}")
            side.add("question", ab(r.question), r.question, d.source, groups)
            side.add("answer", ab(r.answer), r.answer, d.source, groups)
            side.add("explicit", ab(r.explicit), r.explicit, d.source, groups)
            for o in r.distractors:
                side.add("distractor", ab(o), o, d.source, groups)
        for q, a in d.qa:
            side.add("qa_question", ab(q), q, d.source, (cond,))
            side.add("qa_answer", ab(a), a, d.source, (cond,))
    return side


def coverage(official: Counter, generated: Counter | set) -> float:
    """Share of official occurrences (frequency-weighted) whose template is generated."""
    total = sum(official.values())
    if not total:
        return float("nan")
    return sum(n for t, n in official.items() if t in generated) / total


def unseen_share(generated: Counter, official: Counter | set) -> float:
    """Share of generated occurrences whose template the release never shows."""
    total = sum(generated.values())
    if not total:
        return float("nan")
    return sum(n for t, n in generated.items() if t not in official) / total


@dataclass
class Report:
    coverage: dict  # field -> float
    unseen: dict  # field -> float
    templates: dict  # field -> (official count, generated count)
    grouped: dict  # group -> field -> (coverage, official n)
    misses: dict  # field -> [(template, count, example, source)]
    extras: dict  # field -> [...]
    official_dist: dict
    generated_dist: dict
    sizes: dict

    def to_json(self) -> dict:
        def dist(d):
            out = dict(d)
            for key in ("vocabulary", "qa_questions"):
                out[key] = dict(d[key].most_common())
            return out

        return {
            "sizes": self.sizes,
            "coverage": self.coverage,
            "generated_unseen_share": self.unseen,
            "templates": self.templates,
            "grouped": self.grouped,
            "official_misses": self.misses,
            "generated_extras": self.extras,
            "official_distributions": dist(self.official_dist),
            "generated_distributions": dist(self.generated_dist),
        }


def compare(
    official_paths: Sequence[Path], generated_paths: Sequence[Path], lexicon=None, top: int = 10
) -> Report:
    ab = Abstractor(lexicon)
    official = [d for p in official_paths for d in read_views(Path(p))]
    generated = [d for p in generated_paths for d in read_views(Path(p))]
    if not official:
        raise ValueError("no official dialogues to compare with")
    if not generated:
        raise ValueError("no generated dialogues to compare")
    label = _labeller(ab, generated)
    off, gen = _collect(ab, official, label), _collect(ab, generated, label)
    cov = {f: coverage(off.counts[f], gen.counts[f]) for f in FIELDS}
    unseen = {f: unseen_share(gen.counts[f], off.counts[f]) for f in FIELDS}
    grouped: dict = defaultdict(dict)
    for (fld, group), counts in sorted(off.grouped.items()):
        grouped[group][fld] = (coverage(counts, gen.counts[fld]), sum(counts.values()))

    def listing(mine: Side, theirs: Side, fld: str) -> list:
        rows = [(t, n) for t, n in mine.counts[fld].most_common() if t not in theirs.counts[fld]]
        return [(t, n, *mine.examples[fld][t]) for t, n in rows[:top]]

    return Report(
        coverage=cov,
        unseen=unseen,
        templates={f: (len(off.counts[f]), len(gen.counts[f])) for f in FIELDS},
        grouped=dict(grouped),
        misses={f: listing(off, gen, f) for f in FIELDS},
        extras={f: listing(gen, off, f) for f in FIELDS},
        official_dist=distributions(ab, official, label),
        generated_dist=distributions(ab, generated, label),
        sizes={
            "official": {"dialogues": off.dialogues, "rounds": off.rounds},
            "generated": {"dialogues": gen.dialogues, "rounds": gen.rounds},
        },
    )
