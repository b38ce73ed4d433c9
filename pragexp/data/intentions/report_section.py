"""The intention tasks in pragexp.report (Yerukola et al. 2024): tables and the paper's figures.

Cells: mean ± its standard error over items (n items) where the runs wrote it
(pragexp.reporting.results.Cell); the figures' error bars: the 95% interval over items.

- Generative vs discriminative per phenomenon (Figure 2): `test/acc/<phenomenon>` of `intentions_reply` runs
  with the plain prompt beside `intentions_mc` runs of the same LLM.
- Accuracy by chain-of-thought level (Figure 3): `test/acc` of `intentions_reply` runs per `prompt.cot`, and
  beside it `test/no_reply`, the share of generations that held no reply to judge.
- Judge agreement: runs that differ only in the judge, compared reply by reply from their predictions.jsonl
  (pairwise agreement and Cohen's kappa over the verdicts true/literal/neither/invalid).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import torch
from torchmetrics.functional.classification import multiclass_cohen_kappa

from pragexp.prompting.parsing import INVALID, LITERAL, NEITHER, NO_REPLY, TRUE
from pragexp.reporting.figures import bar_groups, pyplot, save_png
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import Cell, Column, runs_cell

GENERATIVE, MC = "intentions_reply", "intentions_mc"
VERDICTS = (TRUE, LITERAL, NEITHER, INVALID)  # a judge's; NO_REPLY is the task's, never judged
COT_ORDER = ("none", "0", "1", "2", "3", "4", "5", "6")


def _short(target: str | None) -> str:
    return (target or "?").rsplit(".", 1)[-1].removesuffix("Backend").removesuffix("Judge").lower()


def llm_label(config: dict) -> str:
    llm = config.get("llm") or {}
    return f"{_short(llm.get('_target_'))}:{llm.get('model') or llm.get('field') or '?'}"


def judge_label(config: dict) -> str:
    judge = config.get("judge") or {}
    return f"{_short(judge.get('_target_'))}:{(judge.get('backend') or {}).get('model', '?')}"


def temperatures_label(config: dict) -> str:
    temperatures = (config.get("task") or {}).get("temperatures") or []
    return "t=" + ",".join(f"{float(t):g}" for t in temperatures) if temperatures else ""


def judging_label(config: dict) -> str:
    """The judge and the temperatures, in brackets: "(judge embedding:minilm, t=0.3,0.5)"."""
    return "(" + ", ".join(x for x in (f"judge {judge_label(config)}", temperatures_label(config)) if x) + ")"


def cot_label(config: dict) -> str:
    return str((config.get("prompt") or {}).get("cot", "none")).lower()


def _phenomena(runs) -> list[str]:
    keys = {
        k for r in runs for k in r.metrics if k.startswith("test/acc/") and not k.startswith("test/acc/t")
    }
    return sorted({k.split("/")[2] for k in keys})


def generative_vs_mc(runs) -> dict[str, dict[str, dict[str, Cell | None]]]:
    """{llm: {"generative (<judge, temperatures>)"|"discriminative": {phenomenon or "all": accuracy's cell}}}
    (Figure 2's bars): plain-prompt replies of each judge and temperature setting beside the same LLM's
    multiple choice."""
    by_llm: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == GENERATIVE and cot_label(run.config) == "none":
            by_llm[llm_label(run.config)][f"generative {judging_label(run.config)}"].append(run)
        elif run.task == MC:
            by_llm[llm_label(run.config)]["discriminative"].append(run)
    keys = {"all": "test/acc", **{p: f"test/acc/{p}" for p in _phenomena(runs)}}
    return {
        llm: {kind: {p: runs_cell(group, key) for p, key in keys.items()} for kind, group in kinds.items()}
        for llm, kinds in sorted(by_llm.items())
    }


def by_cot_level(runs, key: str = "test/acc") -> dict[str, dict[str, Cell | None]]:
    """{llm (judge, temperatures): {cot level: the cell of `key`}} over intentions_reply runs (Figure 3's
    lines)."""
    groups: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == GENERATIVE:
            groups[f"{llm_label(run.config)} {judging_label(run.config)}"][cot_label(run.config)].append(run)
    return {
        label: {level: runs_cell(levels[level], key) for level in COT_ORDER if level in levels}
        for label, levels in sorted(groups.items())
    }


def _verdicts(run) -> dict[tuple, str]:
    path = Path(run.path) / "predictions.jsonl"
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines() if path.is_file() else []:
        record = json.loads(line)
        for reply in record.get("replies", []):
            if reply["verdict"] != NO_REPLY:  # no judge saw it: not a judgement to agree on
                key = (record["index"], reply["temperature"], reply["sample"], reply["reply"])
                out[key] = reply["verdict"]
    return out


def agreement(a: list[str], b: list[str]) -> tuple[float, float]:
    """Pairwise agreement and Cohen's kappa of two judges' verdicts on the same replies."""
    ids = {v: i for i, v in enumerate(VERDICTS)}
    x, y = torch.tensor([ids[v] for v in a]), torch.tensor([ids[v] for v in b])
    kappa = float(multiclass_cohen_kappa(x, y, num_classes=len(VERDICTS)))
    return float((x == y).float().mean()), kappa


def judge_agreement(runs) -> list[dict]:
    """For every pair of judges that scored the same replies (same LLM, prompt level and data)."""
    groups: dict[tuple, list] = defaultdict(list)
    for run in runs:
        if run.task == GENERATIVE:
            data = (run.config.get("data") or {}).get("path")
            key = (llm_label(run.config), cot_label(run.config), temperatures_label(run.config), str(data))
            groups[key].append(run)
    rows = []
    for (llm, cot, temperatures, _), group in sorted(groups.items()):
        judged = [(judge_label(r.config), _verdicts(r)) for r in group]
        for i, (name_a, a) in enumerate(judged):
            for name_b, b in judged[i + 1 :]:
                common = sorted(set(a) & set(b), key=repr)
                if name_a == name_b or not common:
                    continue
                agree, kappa = agreement([a[k] for k in common], [b[k] for k in common])
                llm_text = f"{llm} ({temperatures})" if temperatures else llm
                judges = f"{name_a} vs {name_b}"
                rows.append(
                    {
                        "llm": llm_text,
                        "cot": cot,
                        "judges": judges,
                        "replies": len(common),
                        "agreement": agree,
                        "kappa": kappa,
                    }
                )
    return rows


COT_TITLES = {
    "test/acc": "Generative accuracy by chain-of-thought level (Figure 3)",
    "test/no_reply": "Generations with no reply to judge by chain-of-thought level (test/no_reply: no "
    '"Response:" after the reasoning; scored as not following the true intention)',
}


def _text(cell: Cell | None) -> str:
    return cell.text if cell is not None else ""


def _mean_and_error(cell: Cell | None) -> tuple[float, float]:
    """A bar or point: the mean and its 95% interval over items (NaN where not known)."""
    nan = float("nan")
    return (cell.mean, nan if cell.half is None else cell.half) if cell is not None else (nan, nan)


def sections(runs) -> list[str]:
    if not any(r.task in (GENERATIVE, MC) for r in runs):
        return []
    out = ["## Intention resolution (Yerukola et al. 2024)", ""]
    compared = generative_vs_mc(runs)
    if compared:
        phenomena = ["all", *_phenomena(runs)]
        rows = [
            [llm, kind, *(_text(scores.get(p)) for p in phenomena)]
            for llm, kinds in compared.items()
            for kind, scores in sorted(kinds.items(), reverse=True)
        ]
        title = "Generative (plain prompt) vs discriminative accuracy per phenomenon (Figure 2)"
        out += table_section(title, ["llm", "setup", *phenomena], rows)
    for key, title in COT_TITLES.items():
        levels = by_cot_level(runs, key)
        present = [c for c in COT_ORDER if any(v.get(c) is not None for v in levels.values())]
        if present:
            rows = [[k, *(_text(v.get(c)) for c in present)] for k, v in levels.items()]
            out += table_section(title, ["llm", *(f"cot={c}" for c in present)], rows)
    pairs = judge_agreement(runs)
    if pairs:
        out += table_section(
            "Judge agreement on the same replies",
            ["llm", "cot", "judges", "replies", "agreement", "Cohen's kappa"],
            [
                [
                    p["llm"],
                    p["cot"],
                    p["judges"],
                    str(p["replies"]),
                    f"{p['agreement']:.3f}",
                    f"{p['kappa']:.3f}",
                ]
                for p in pairs
            ],
        )
    return out


def _figure2(runs, folder: Path) -> list[Path]:
    phenomena = _phenomena(runs)
    bars = [  # the reference backends are the judges' sanity check, not models: tables only
        (llm, kind, scores)
        for llm, kinds in generative_vs_mc(runs).items()
        if not llm.startswith("reference:")
        for kind, scores in sorted(kinds.items(), reverse=True)
    ]
    if not bars or not phenomena:
        return []
    fig, ax = pyplot().subplots(figsize=(max(6, 1.6 * len(phenomena)), 3.6 + 0.2 * len(bars)))
    series = []
    for llm, kind, scores in bars:
        ys, errors = zip(*(_mean_and_error(scores.get(p)) for p in phenomena), strict=True)
        series.append((f"{llm} {kind}", ys, errors, {"hatch": "//" if kind == "discriminative" else None}))
    bar_groups(ax, phenomena, series, "accuracy")
    ax.set_title("Generative vs discriminative intention resolution")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
    return [save_png(fig, Path(folder) / "intentions_fig2.png")]


def _figure3(runs, folder: Path) -> list[Path]:
    levels = {k: v for k, v in by_cot_level(runs).items() if len(v) > 1}  # series over several levels
    if not levels:
        return []
    fig, ax = pyplot().subplots(figsize=(6.5, 3.6 + 0.25 * len(levels)))
    for label, values in levels.items():
        ys, errors = zip(*map(_mean_and_error, values.values()), strict=True)
        xs = [COT_ORDER.index(c) for c in values]
        ax.errorbar(xs, ys, yerr=errors, marker="o", capsize=2, label=label)
    ax.set_xticks(range(len(COT_ORDER)), COT_ORDER)
    ax.set_xlabel("prompt.cot (none = plain prompt; 5-6 give the true intention)")
    ax.set_ylabel("generative accuracy")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
    return [save_png(fig, Path(folder) / "intentions_fig3.png")]


def figures(runs, folder: Path) -> list[Path]:
    """Figure 2 (`intentions_fig2.png`) and Figure 3 (`intentions_fig3.png`) where the runs allow them."""
    return [*_figure2(runs, folder), *_figure3(runs, folder)]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []
