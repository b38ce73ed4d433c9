"""How far generated GRICE files are from the official release, template by template.

    python -m pragexp.data.grice.fidelity --official impl_dial_v0.1_{cb,ig,li,re,st}.json \
        --generated test.json [--out report.md] [--json report.json]

Every sentence is abstracted into a *template*: entity words become slots (AGENT, LOC, OBJ, OBJ_SG,
COLOUR, CONT, NUM, PUT/PUT_BASE, GO/GO_BASE, PRON/PRON_OBJ), every other word stays. Then, per
field (round question, answer, explicit form, distractor options, QA question and QA answer):

- coverage: the share of official sentences, weighted by frequency, whose template the generated
  files produce at least once;
- the share of generated sentences whose template the release never shows;
- the most frequent misses on both sides, with an example each;

and the same coverage per test condition (file) and per implicature type x subtopic. Official
rounds carry no type: each gets the type and subtopic the generated rounds with the same
(question, answer, explicit) template carry most often (else the same answer and explicit
templates), or "unlabelled" when no generated round has them.

Also compared: rounds per dialogue, where the rounds of a file's own type sit, the distractor
strategies of a round, pronoun use, and vocabulary (non-slot words).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.data.grice.generator.lexicon import base_form, load_lexicon, singular
from pragexp.data.grice.io import Dialogue, read_dialogues
from pragexp.data.grice.schema import SUBTOPICS
from pragexp.utils.io import atomic_write_text
from pragexp.utils.markdown import markdown_table

FIELDS = ("question", "answer", "explicit", "distractor", "qa_question", "qa_answer")
UNLABELLED = "unlabelled"

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


# --- what is read from each file -----------------------------------------------------------------


@dataclass
class RoundView:
    question: str
    answer: str
    explicit: str
    distractors: tuple
    implicature: str | None  # generated files tag each round; official ones do not
    subtopic: str | None


@dataclass
class DialogueView:
    source: str  # "file.json#dialog_id"
    condition: str | None  # the type a test file (or `test_condition`) is about
    rounds: list
    qa: list  # (question, answer)


def _views(path: Path) -> list[DialogueView]:
    """Reads with the package's reader (it names file, dialogue and field on bad input); the
    subtopic tags of generated files are read from the same JSON."""
    dialogues: list[Dialogue] = read_dialogues(path)
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)["data"]["dialogs"]
    out = []
    for d, r in zip(dialogues, raw, strict=True):
        rounds = []
        for k, rd in enumerate(d.rounds):
            sub = r["dialog"][k].get("subtopic")
            rounds.append(
                RoundView(
                    rd.question,
                    rd.answer,
                    rd.explicit,
                    tuple(o for i, o in enumerate(rd.options) if i != rd.answer_index),
                    rd.implicature,
                    sub if sub in SUBTOPICS else None,
                )
            )
        out.append(
            DialogueView(
                f"{path.name}#{d.dialog_id}",
                d.implicature,
                rounds,
                [(q.question, q.answer) for q in d.questions],
            )
        )
    return out


# --- the comparison ------------------------------------------------------------------------------


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


# --- distributions that can differ with every template the same ---------------------------------

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


def _distributions(ab, dialogues: Sequence[DialogueView], label) -> dict:
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


# --- report --------------------------------------------------------------------------------------


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
    official = [d for p in official_paths for d in _views(Path(p))]
    generated = [d for p in generated_paths for d in _views(Path(p))]
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
        official_dist=_distributions(ab, official, label),
        generated_dist=_distributions(ab, generated, label),
        sizes={
            "official": {"dialogues": off.dialogues, "rounds": off.rounds},
            "generated": {"dialogues": gen.dialogues, "rounds": gen.rounds},
        },
    )


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f}%"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(rep: Report, title: str = "GRICE fidelity report") -> str:
    s = rep.sizes
    lines = [
        f"# {title}",
        "",
        f"Official: {s['official']['dialogues']} dialogues, {s['official']['rounds']} rounds. "
        f"Generated: {s['generated']['dialogues']} dialogues, {s['generated']['rounds']} rounds.",
        "",
        "## Coverage per field",
        "",
        "Official templates covered: share of official sentences (frequency-weighted) whose template the "
        "generated files contain. Generated, unseen: share of generated sentences whose template the release "
        "never shows.",
        "",
    ]
    rows = [
        (f, _pct(rep.coverage[f]), _pct(rep.unseen[f]), rep.templates[f][0], rep.templates[f][1])
        for f in FIELDS
    ]
    lines += markdown_table(
        ["field", "official covered", "generated, unseen", "official templates", "generated templates"], rows
    )
    lines += ["", "## Coverage per group (official sentences in the group, covered share)", ""]
    groups = sorted(rep.grouped, key=lambda g: (g.split("=")[0] != "condition", g.count("/"), g))
    rows = []
    for g in groups:
        cells = []
        for f in FIELDS:
            cov_n = rep.grouped[g].get(f)
            cells.append("" if cov_n is None else f"{_pct(cov_n[0])} ({cov_n[1]})")
        rows.append((g, *cells))
    lines += markdown_table(["group", *FIELDS], rows)
    for name, listing in (
        ("Most frequent official templates never generated", rep.misses),
        ("Most frequent generated templates the release never shows", rep.extras),
    ):
        lines += ["", f"## {name}", ""]
        for f in FIELDS:
            if not listing[f]:
                continue
            lines += [f"**{f}**", ""]
            lines += markdown_table(
                ["count", "template", "example"],
                [(n, f"`{_md_escape(t)}`", f"{_md_escape(ex)} ({src})") for t, n, ex, src in listing[f]],
            )
            lines.append("")
    lines += ["", "## Distributions", ""]
    od, gd = rep.official_dist, rep.generated_dist
    for key, label in (
        ("rounds_per_dialogue", "rounds per dialogue (share of dialogues)"),
        ("own_type_rounds_per_dialogue", "rounds of the file's own type per dialogue (dialogues)"),
        ("own_type_round_position", "position of the rounds of the file's own type (rounds)"),
        ("distractor_strategies", "distractor strategies (share of distractors)"),
        ("distractor_strategy_sets", "the three strategies of a round, most frequent sets (share of rounds)"),
        ("pronouns_in_questions", "questions containing the word"),
        ("pronouns_in_answers", "answers containing the word"),
    ):
        keys = list(dict.fromkeys([*od[key], *gd[key]]))
        fmt = (lambda v: str(v)) if key.startswith("own_type") else _pct
        rows = [(f"`{k}`", fmt(od[key].get(k, 0)), fmt(gd[key].get(k, 0))) for k in keys[:12]]
        lines += [f"**{label}**", ""] + markdown_table(["", "official", "generated"], rows) + [""]
    # answers per QA question form: same forms can still teach other answers
    rows = []
    for q, n in od["qa_questions"].most_common(12):

        def fmt(shares):
            return ", ".join(f"{a} {_pct(v)}" for a, v in list(shares.items())[:3]) or "-"

        rows.append(
            (
                f"`{q}`",
                n,
                fmt(od["qa_answers_per_question"].get(q, {})),
                fmt(gd["qa_answers_per_question"].get(q, {})),
            )
        )
    lines += ["**QA answers per question form** (the official file's most frequent forms)", ""]
    lines += markdown_table(["question", "official n", "official answers", "generated answers"], rows) + [""]
    ov, gv = od["vocabulary"], gd["vocabulary"]
    only_off = [(w, n) for w, n in ov.most_common() if w not in gv]
    only_gen = [(w, n) for w, n in gv.most_common() if w not in ov]
    lines += [
        f"**vocabulary** (words outside the slots): official {len(ov)}, generated {len(gv)}; "
        f"official only: {', '.join(f'`{w}` ({n})' for w, n in only_off[:20]) or 'none'}; "
        f"generated only: {', '.join(f'`{w}` ({n})' for w, n in only_gen[:20]) or 'none'}",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m pragexp.data.grice.fidelity",
        description="Template coverage of generated GRICE files against official ones.",
    )
    p.add_argument("--official", nargs="+", required=True, metavar="FILE", help="official impl_dial files")
    p.add_argument(
        "--generated", nargs="+", required=True, metavar="FILE", help="generated files, same schema"
    )
    p.add_argument("--lexicon", default=None, help="lexicon JSON for the slots (default: the generator's)")
    p.add_argument("--top", type=int, default=10, help="misses listed per field and side")
    p.add_argument("--out", default=None, help="write the markdown report here (default: stdout)")
    p.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = p.parse_args(argv)
    try:
        rep = compare(
            [Path(x) for x in args.official], [Path(x) for x in args.generated], args.lexicon, args.top
        )
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    text = render_markdown(rep)
    if args.out:
        atomic_write_text(Path(args.out), text + "\n")
    else:
        print(text)
    if args.json:
        atomic_write_text(Path(args.json), json.dumps(rep.to_json(), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
