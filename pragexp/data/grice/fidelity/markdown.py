"""The fidelity report as markdown."""

from __future__ import annotations

from pragexp.reporting.markdown import markdown_table

from .compare import FIELDS, Report


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f}%"


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


# The distributions shown side by side, in this order, with their titles.
_DISTRIBUTIONS = (
    ("rounds_per_dialogue", "rounds per dialogue (share of dialogues)"),
    ("own_type_rounds_per_dialogue", "rounds of the file's own type per dialogue (dialogues)"),
    ("own_type_round_position", "position of the rounds of the file's own type (rounds)"),
    ("distractor_strategies", "distractor strategies (share of distractors)"),
    ("distractor_strategy_sets", "the three strategies of a round, most frequent sets (share of rounds)"),
    ("pronouns_in_questions", "questions containing the word"),
    ("pronouns_in_answers", "answers containing the word"),
)


def render_markdown(rep: Report, title: str = "GRICE fidelity report") -> str:
    s = rep.sizes
    lines = [
        f"# {title}",
        "",
        f"Official: {s['official']['dialogues']} dialogues, {s['official']['rounds']} rounds. "
        f"Generated: {s['generated']['dialogues']} dialogues, {s['generated']['rounds']} rounds.",
        "",
    ]
    lines += _coverage(rep) + _listings(rep)
    lines += ["", "## Distributions", ""]
    lines += _distributions(rep) + _qa_answers(rep) + _vocabulary(rep)
    return "\n".join(lines)


def _coverage(rep: Report) -> list[str]:
    """Coverage per field, then per group."""
    lines = [
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
    return lines + markdown_table(["group", *FIELDS], rows)


def _listings(rep: Report) -> list[str]:
    """The most frequent templates of each side that the other never shows."""
    lines = []
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
    return lines


def _distributions(rep: Report) -> list[str]:
    od, gd = rep.official_dist, rep.generated_dist
    lines = []
    for key, label in _DISTRIBUTIONS:
        keys = list(dict.fromkeys([*od[key], *gd[key]]))
        fmt = (lambda v: str(v)) if key.startswith("own_type") else _pct
        rows = [(f"`{k}`", fmt(od[key].get(k, 0)), fmt(gd[key].get(k, 0))) for k in keys[:12]]
        lines += [f"**{label}**", ""] + markdown_table(["", "official", "generated"], rows) + [""]
    return lines


def _qa_answers(rep: Report) -> list[str]:
    """Answers per QA question form: the same forms can still teach other answers."""
    od, gd = rep.official_dist, rep.generated_dist

    def fmt(shares):
        return ", ".join(f"{a} {_pct(v)}" for a, v in list(shares.items())[:3]) or "-"

    rows = [
        (
            f"`{q}`",
            n,
            fmt(od["qa_answers_per_question"].get(q, {})),
            fmt(gd["qa_answers_per_question"].get(q, {})),
        )
        for q, n in od["qa_questions"].most_common(12)
    ]
    lines = ["**QA answers per question form** (the official file's most frequent forms)", ""]
    return (
        lines
        + markdown_table(["question", "official n", "official answers", "generated answers"], rows)
        + [""]
    )


def _vocabulary(rep: Report) -> list[str]:
    ov, gv = rep.official_dist["vocabulary"], rep.generated_dist["vocabulary"]
    only_off = [(w, n) for w, n in ov.most_common() if w not in gv]
    only_gen = [(w, n) for w, n in gv.most_common() if w not in ov]
    return [
        f"**vocabulary** (words outside the slots): official {len(ov)}, generated {len(gv)}; "
        f"official only: {', '.join(f'`{w}` ({n})' for w, n in only_off[:20]) or 'none'}; "
        f"generated only: {', '.join(f'`{w}` ({n})' for w, n in only_gen[:20]) or 'none'}",
        "",
    ]
