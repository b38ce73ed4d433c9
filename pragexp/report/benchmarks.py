"""The LLM benchmarks' own report: Hu et al. 2022 per phenomenon, LUDWIG per template and k.

- Hu et al.: accuracy per phenomenon, a row per model. Ours: the LLM (and its settings), template and k, the
  runs' mean ± the option-order seeds' population std (`acc_view_std`, mean over the runs); the paper's models
  and chance; people: the paper file's `human` row and, where a run's data_report.json has `human_accuracy`,
  the people's answers of our data. "all": ours `test/acc`; a published row's item-weighted mean over the
  phenomena our runs cover (as the scorecard's Hu column). Then our runs' error shares by distractor kind
  (`error_share/<kind>`: of the wrong answers, the share that chose that kind) and `human_corr`.
- LUDWIG: accuracy per template and k, and mean ± population std over the templates per k (the paper's
  score); the paper's cells at their k. Per implicature type where the runs have `test/acc/<type>`.

`sections(runs)` gives markdown, `figures(runs, folder)` writes `hu_pragmatics_phenomena.png` (grouped
bars per phenomenon, the paper's figure style) and `ludwig_k.png` (accuracy against k); `pragexp.report`
calls both.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from pragexp.report.benchmark_columns import (
    HU,
    LUDWIG,
    covered_phenomena,
    data_report,
    hu_counts,
    published_shots,
    weighted_mean,
)
from pragexp.report.figures import legend_below, pyplot, save_png
from pragexp.report.paper import load_paper, parse_row_name
from pragexp.report.runs import DATA_LOCATION, Run, config_value, short_setting
from pragexp.report.score_columns import CHANCE_ROWS, Cell, population_cell, shots, template_name
from pragexp.report.tables import _markdown_table

# Settings a row shows elsewhere (template, k), that name no other model, or that say where the data is.
NOT_SHOWN = (
    "prompt.template",
    "prompt.shots",
    "llm.model",
    "llm.batch_size",
    "llm.device",
    "threads",
    "validate",
    "print_config",
    "data.types_file",  # LUDWIG's type labels: which per-type cells a run has, not its accuracy
)
KS = (0, 1, 5, 10, 15, 30)  # LUDWIG's k
PEOPLE = ("human", "human_average", "human_best")


def model_label(run: Run) -> str:
    """The LLM and the run's other settings: `smollm2`, `smollm2 (prompt=ludwig_contrastive)`."""
    keys = [s.split("=", 1)[0] for s in run.settings]
    kept = [
        s
        for s, k in zip(run.settings, keys, strict=True)
        if k not in NOT_SHOWN and not DATA_LOCATION.match(k)
    ]
    llm = config_value(run.config, "llm.model") or run.model
    return f"{llm}" + (f" ({', '.join(short_setting(s) for s in kept)})" if kept else "")


def _mean(runs: list[Run], key: str) -> float | None:
    values = [r.metrics[key] for r in runs if key in r.metrics]
    return statistics.fmean(values) if values else None


def _suffixes(runs, prefix: str) -> list[str]:
    """`<x>` of every `<prefix><x>` key of the runs' metrics (implicature types, distractor kinds)."""
    return sorted({k[len(prefix) :] for r in runs for k in r.metrics if k.startswith(prefix)})


def _text(mean: float | None, std: float | None = None) -> str:
    if mean is None:
        return ""
    return f"{mean:.3f}" + (f" ± {std:.3f}" if std is not None else "")


def hu_groups(runs: list[Run]) -> dict[tuple[str, str, int], list[Run]]:
    """{(model label, template, k): runs} of the hu_pragmatics runs."""
    out: dict[tuple[str, str, int], list[Run]] = defaultdict(list)
    for run in runs:
        if run.task == HU:
            out[model_label(run), template_name(run.config), shots(run)].append(run)
    return dict(sorted(out.items()))


def hu_phenomena(runs: list[Run], items: dict[str, float]) -> list[str]:
    """The paper's phenomena, then any other our runs have."""
    ours = _suffixes([r for r in runs if r.task == HU], "test/acc/")
    return [*items, *(p for p in ours if p not in items)]


def people_from_data(runs: list[Run]) -> list[tuple[dict, dict]]:
    """(human_accuracy, per_phenomenon) of each distinct data with people's answers our Hu runs read."""
    found = {}
    for run in runs:
        report = data_report(run) if run.task == HU else {}
        if report.get("human_accuracy"):
            pair = (report["human_accuracy"], report.get("per_phenomenon") or {})
            found[repr(sorted(pair[0].items()))] = pair
    return list(found.values())


def hu_rows(runs: list[Run], paper_dir: Path | None = None) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the per-phenomenon table (ours, the paper's, people from our data)."""
    items, _ = hu_counts(paper_dir)
    phenomena = hu_phenomena(runs, items)
    found = covered_phenomena(runs)
    covered = [p for p in items if p in found] if found else list(items)
    header = ["model", "template", "k", "runs", *phenomena, "all"]
    lines = []
    for (label, template, k), group in hu_groups(runs).items():
        cells = [
            _text(_mean(group, f"test/acc{p}"), _mean(group, f"test/acc_view_std{p}"))
            for p in [*(f"/{p}" for p in phenomena), ""]
        ]
        lines.append([label, template, str(k), str(len(group)), *cells])
    for key, values in load_paper(HU, paper_dir)["rows"].items():
        name, _ = parse_row_name(key)
        cells = {p: values.get(f"test/acc/{p}") for p in phenomena}
        setting = ["", ""] if name in (*PEOPLE, *CHANCE_ROWS) else ["authors", "0"]
        lines.append(
            [f"{name} (paper)", *setting, "", *(_text(cells[p]) for p in phenomena)]
            + [_text(weighted_mean(cells, items, covered))]
        )
    for accuracy, counts in people_from_data(runs):
        own = [p for p in phenomena if p in accuracy]
        lines.append(
            ["people (our data)", "", "", "", *(_text(accuracy.get(p)) for p in phenomena)]
            + [_text(weighted_mean(accuracy, counts, own))]
        )
    return header, lines


def hu_section(runs: list[Run], paper_dir: Path | None = None) -> list[str]:
    groups = hu_groups(runs)
    if not groups:
        return []
    header, lines = hu_rows(runs, paper_dir)
    out = ["## Hu et al. 2022: pragmatic phenomena", ""]
    out += ["### Accuracy per phenomenon", ""]
    out += [
        "Ours: mean over the runs ± the population std over the option-order seeds (`acc_view_std`); "
        "(paper): zero-shot, the authors' protocol, mean over 5 seeds; all: ours `test/acc`, the others "
        "item-weighted over the phenomena our runs cover.",
        "",
    ]
    out += _markdown_table(header, lines)
    ours = [r for g in groups.values() for r in g]
    kinds = _suffixes(ours, "test/error_share/")
    if kinds or any("test/human_corr" in r.metrics for r in ours):
        out += ["### Errors by distractor kind (share of the wrong answers) and correlation with people", ""]
        out += _markdown_table(
            ["model", "template", "k", *kinds, "human_corr"],
            [
                [label, template, str(k)]
                + [_text(_mean(g, f"test/error_share/{kind}")) for kind in kinds]
                + [_text(_mean(g, "test/human_corr"))]
                for (label, template, k), g in groups.items()
            ],
        )
    return out


def ludwig_groups(runs: list[Run]) -> dict[str, dict[int, list[Run]]]:
    """{model label: {k: runs}} of the ludwig runs."""
    out: dict[str, dict[int, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == LUDWIG:
            out[model_label(run)][shots(run)].append(run)
    return {label: dict(sorted(by_k.items())) for label, by_k in sorted(out.items())}


def ludwig_templates(runs: list[Run]) -> list[str]:
    """The templates of the ludwig runs, in the order of their prompt group (then by name)."""
    found = {template_name(r.config) for r in runs if r.task == LUDWIG}
    order: list[str] = []
    for run in runs:
        for t in config_value(run.config, "prompt.templates") or []:
            if isinstance(t, dict) and t.get("name") in found and t["name"] not in order:
                order.append(t["name"])
    return [*order, *sorted(found - set(order))]


def _cell_text(cell: Cell | None) -> str:
    return cell.text if cell is not None else ""


def ludwig_section(runs: list[Run], paper_dir: Path | None = None) -> list[str]:
    groups = ludwig_groups(runs)
    if not groups:
        return []
    templates = ludwig_templates(runs)
    lines = []
    for label, by_k in groups.items():
        for k, group in by_k.items():
            per = [
                _text(_mean([r for r in group if template_name(r.config) == t], "test/acc"))
                for t in templates
            ]
            lines.append([label, str(k), *per, _cell_text(population_cell(group, "test/acc"))])
    for key, values in load_paper(LUDWIG, paper_dir)["rows"].items():
        name, conditions = parse_row_name(key)
        k = published_shots(conditions)
        blank = [""] * len(templates)
        lines.append([f"{name} (paper)", "–" if k is None else str(k), *blank, _text(values.get("test/acc"))])
    out = ["## LUDWIG (Ruis et al. 2023): implicature resolution", ""]
    out += ["### Accuracy per template and k", ""]
    out += [
        "Ours: each template's mean over its runs; mean ± population std (n templates), as the paper "
        "reports it.",
        "",
    ]
    out += _markdown_table(["model", "k", *templates, "mean ± std"], lines)
    types = _suffixes([r for by_k in groups.values() for g in by_k.values() for r in g], "test/acc/")
    if types:
        out += ["### Accuracy per implicature type (mean ± population std over templates)", ""]
        out += _markdown_table(
            ["model", "k", *types],
            [
                [label, str(k), *(_cell_text(population_cell(group, f"test/acc/{t}")) for t in types)]
                for label, by_k in groups.items()
                for k, group in by_k.items()
            ],
        )
    return out


def sections(runs: list[Run]) -> list[str]:
    return [*hu_section(runs), *ludwig_section(runs)]


def hu_figure(runs: list[Run], folder: Path, paper_dir: Path | None = None) -> Path | None:
    """Grouped bars: a group per phenomenon, a bar per model (ours with the seeds' spread as error bars, the
    paper's hatched) and people (black and grey), chance as a dashed line across each group."""
    groups = hu_groups(runs)
    if not groups:
        return None
    items, options = hu_counts(paper_dir)
    phenomena = hu_phenomena(runs, items)
    bars = [  # (label, {phenomenon: (mean, std)}, style)
        (
            f"{label} ({template}, k={k})",
            {p: (_mean(g, f"test/acc/{p}"), _mean(g, f"test/acc_view_std/{p}")) for p in phenomena},
            {},
        )
        for (label, template, k), g in groups.items()
    ]
    for key, values in load_paper(HU, paper_dir)["rows"].items():
        name, _ = parse_row_name(key)
        if name != "chance":
            style = {"color": "black"} if name in PEOPLE else {"hatch": "//", "edgecolor": "white"}
            bars.append(
                (f"{name} (paper)", {p: (values.get(f"test/acc/{p}"), None) for p in phenomena}, style)
            )
    for accuracy, _ in people_from_data(runs):
        bars.append(("people (our data)", {p: (accuracy.get(p), None) for p in phenomena}, {"color": "grey"}))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(8.0, 1.4 * len(phenomena)), 4.2 + 0.15 * len(bars)))
    width = 0.8 / len(bars)
    for b, (label, cells, style) in enumerate(bars):
        xs = [j + (b - (len(bars) - 1) / 2) * width for j in range(len(phenomena))]
        ys = [cells[p][0] if cells[p][0] is not None else float("nan") for p in phenomena]
        errors = [cells[p][1] or 0.0 for p in phenomena]
        ax.bar(xs, ys, width, yerr=errors if any(errors) else None, capsize=1.5, label=label, **style)
    for j, p in enumerate(phenomena):
        if p in options:
            ax.hlines(
                1 / options[p],
                j - 0.45,
                j + 0.45,
                colors="black",
                linestyles="--",
                label="chance" if j == 0 else None,
                zorder=3,
            )
    ax.set_xticks(range(len(phenomena)), phenomena, rotation=15)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("accuracy")
    ax.set_title("Hu et al. 2022: accuracy per phenomenon (hatched: published)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return save_png(fig, Path(folder) / "hu_pragmatics_phenomena.png")


def ludwig_figure(runs: list[Run], folder: Path, paper_dir: Path | None = None) -> Path | None:
    """Accuracy against k: a line per model with the templates' population std as a band, the paper's
    models as markers, people's average and best as solid lines, chance 0.5 dashed."""
    groups = ludwig_groups(runs)
    if not groups:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for label, by_k in groups.items():
        cells = {k: population_cell(g, "test/acc") for k, g in by_k.items()}
        ks = [k for k, c in cells.items() if c is not None]
        means = [cells[k].mean for k in ks]
        spread = [cells[k].std or 0.0 for k in ks]
        (line,) = ax.plot(ks, means, marker="o", label=label)
        lower = [m - s for m, s in zip(means, spread, strict=True)]
        upper = [m + s for m, s in zip(means, spread, strict=True)]
        ax.fill_between(ks, lower, upper, color=line.get_color(), alpha=0.2)
    published: dict[str, dict[int, float]] = defaultdict(dict)
    for key, values in load_paper(LUDWIG, paper_dir)["rows"].items():
        name, conditions = parse_row_name(key)
        k = published_shots(conditions)
        if name in PEOPLE:
            ax.axhline(
                values["test/acc"], color="black" if name == "human_best" else "grey", label=f"{name} (paper)"
            )
        elif k is not None:
            published[name][k] = values["test/acc"]
    for name, by_k in published.items():
        ax.plot(list(by_k), list(by_k.values()), marker="s", linestyle="none", label=f"{name} (paper)")
    ax.axhline(0.5, color="black", linestyle="--", label="chance")
    ax.set_xticks(KS)
    ax.set_xlabel("k (prompt.shots)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0.3, 1.0)
    ax.set_title("LUDWIG: accuracy against k (band: population std over templates)")
    legend_below(fig, ax, 7.5, 4.5)
    return save_png(fig, Path(folder) / "ludwig_k.png")


def figures(runs: list[Run], folder: Path) -> list[Path]:
    return [p for p in (hu_figure(runs, folder), ludwig_figure(runs, folder)) if p is not None]
