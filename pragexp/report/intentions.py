"""The intention-resolution tasks' own report (Yerukola et al. 2024): tables and the paper's figures.

- Generative vs discriminative per phenomenon (the paper's Figure 2): `test/acc/<phenomenon>` of
  `intentions_reply` runs with the plain prompt beside `intentions_mc` runs of the same LLM.
- Accuracy by chain-of-thought level (Figure 3): `test/acc` of `intentions_reply` runs per `prompt.cot`,
  and beside it `test/no_reply`, the share of generations that held no reply to judge.
- Judge agreement: runs that differ only in the judge, compared reply by reply from their
  predictions.jsonl (pairwise agreement and Cohen's kappa over the verdicts true/literal/neither/invalid).

`sections(runs)` gives markdown, `figures(runs, folder)` writes PNGs; `pragexp.report` calls both.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import torch
from torchmetrics.functional.classification import multiclass_cohen_kappa

from pragexp.generation.intention_judges import NO_REPLY
from pragexp.report.figures import pyplot, save_png
from pragexp.report.runs import Run, summarise
from pragexp.report.tables import _markdown_table

GENERATIVE, MC = "intentions_reply", "intentions_mc"
VERDICTS = ("true", "literal", "neither", "invalid")  # a judge's; NO_REPLY is the task's, never judged
COT_ORDER = ("none", "0", "1", "2", "3", "4", "5", "6")


def _short(target: str | None) -> str:
    return (target or "?").rsplit(".", 1)[-1].removesuffix("Backend").removesuffix("Judge").lower()


def llm_label(config: dict) -> str:
    llm = config.get("llm") or {}
    what = llm.get("model") or llm.get("field") or "?"
    return f"{_short(llm.get('_target_'))}:{what}"


def judge_label(config: dict) -> str:
    judge = config.get("judge") or {}
    backend = judge.get("backend") or {}
    return f"{_short(judge.get('_target_'))}:{backend.get('model', '?')}"


def temperatures_label(config: dict) -> str:
    temperatures = (config.get("task") or {}).get("temperatures") or []
    return "t=" + ",".join(f"{float(t):g}" for t in temperatures) if temperatures else ""


def judging_label(config: dict) -> str:
    """The judge and the temperatures, in brackets: "(judge embedding:minilm, t=0.3,0.5)"."""
    return "(" + ", ".join(x for x in (f"judge {judge_label(config)}", temperatures_label(config)) if x) + ")"


def generative_label(config: dict) -> str:
    """The LLM, the judge and the temperatures: what a generative accuracy depends on besides the prompt."""
    return f"{llm_label(config)} {judging_label(config)}"


def cot_label(config: dict) -> str:
    return str((config.get("prompt") or {}).get("cot", "none")).lower()


def _mean(runs: list[Run], key: str) -> float | None:
    values = [r.metrics[key] for r in runs if key in r.metrics]
    return summarise(values)["mean"] if values else None


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _phenomena(runs: list[Run]) -> list[str]:
    keys = {
        k for r in runs for k in r.metrics if k.startswith("test/acc/") and not k.startswith("test/acc/t")
    }
    return sorted({k.split("/")[2] for k in keys})


def generative_vs_mc(runs: list[Run]) -> dict[str, dict[str, dict[str, float | None]]]:
    """{llm: {"generative (<judge, temperatures>)"|"discriminative": {phenomenon or "all": mean accuracy}}}
    (Figure 2's bars): plain-prompt replies of each judge and temperature setting beside the same LLM's
    multiple choice."""
    by_llm: dict[str, dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == GENERATIVE and cot_label(run.config) == "none":
            by_llm[llm_label(run.config)][f"generative {judging_label(run.config)}"].append(run)
        elif run.task == MC:
            by_llm[llm_label(run.config)]["discriminative"].append(run)
    phenomena = _phenomena(runs)
    return {
        llm: {
            kind: {"all": _mean(group, "test/acc"), **{p: _mean(group, f"test/acc/{p}") for p in phenomena}}
            for kind, group in kinds.items()
        }
        for llm, kinds in sorted(by_llm.items())
    }


def by_cot_level(runs: list[Run], key: str = "test/acc") -> dict[str, dict[str, float | None]]:
    """{llm (judge, temperatures): {cot level: mean of `key`}} over intentions_reply runs (Figure 3's
    lines for test/acc)."""
    groups: dict[str, dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == GENERATIVE:
            groups[generative_label(run.config)][cot_label(run.config)].append(run)
    return {
        label: {level: _mean(levels[level], key) for level in COT_ORDER if level in levels}
        for label, levels in sorted(groups.items())
    }


def _verdicts(run: Run) -> dict[tuple, str]:
    path = run.path / "predictions.jsonl"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for reply in record.get("replies", []):
            if reply["verdict"] != NO_REPLY:  # no judge saw it: not a judgement to agree on
                out[(record["index"], reply["temperature"], reply["sample"], reply["reply"])] = reply[
                    "verdict"
                ]
    return out


def agreement(a: list[str], b: list[str]) -> tuple[float, float]:
    """Pairwise agreement and Cohen's kappa of two judges' verdicts on the same replies."""
    ids = {v: i for i, v in enumerate(VERDICTS)}
    x = torch.tensor([ids[v] for v in a])
    y = torch.tensor([ids[v] for v in b])
    agree = float((x == y).float().mean())
    kappa = float(multiclass_cohen_kappa(x, y, num_classes=len(VERDICTS)))
    return agree, kappa


def judge_agreement(runs: list[Run]) -> list[dict]:
    """For every pair of judges that scored the same replies (same LLM, prompt level and data)."""
    groups: dict[tuple, list[Run]] = defaultdict(list)
    for run in runs:
        if run.task == GENERATIVE:
            data = (run.config.get("data") or {}).get("path")
            key = (llm_label(run.config), cot_label(run.config), temperatures_label(run.config), str(data))
            groups[key].append(run)
    rows = []
    for (llm, cot, temperatures, _), group in sorted(groups.items()):
        judged = [(judge_label(r.config), _verdicts(r)) for r in group]
        for i in range(len(judged)):
            for j in range(i + 1, len(judged)):
                (name_a, a), (name_b, b) = judged[i], judged[j]
                common = sorted(set(a) & set(b), key=repr)
                if name_a == name_b or not common:
                    continue
                agree, kappa = agreement([a[k] for k in common], [b[k] for k in common])
                rows.append(
                    {
                        "llm": f"{llm} ({temperatures})" if temperatures else llm,
                        "cot": cot,
                        "judges": f"{name_a} vs {name_b}",
                        "replies": len(common),
                        "agreement": agree,
                        "kappa": kappa,
                    }
                )
    return rows


def sections(runs: list[Run]) -> list[str]:
    if not any(r.task in (GENERATIVE, MC) for r in runs):
        return []
    out = ["## Intention resolution (Yerukola et al. 2024)", ""]
    compared = generative_vs_mc(runs)
    if compared:
        phenomena = ["all", *_phenomena(runs)]
        rows = [
            [llm, kind, *(_fmt(scores.get(p)) for p in phenomena)]
            for llm, kinds in compared.items()
            for kind, scores in sorted(kinds.items(), reverse=True)
        ]
        out += ["### Generative (plain prompt) vs discriminative accuracy per phenomenon (Figure 2)", ""]
        out += _markdown_table(["llm", "setup", *phenomena], rows)
    titles = {
        "test/acc": "Generative accuracy by chain-of-thought level (Figure 3)",
        "test/no_reply": "Generations with no reply to judge by chain-of-thought level (test/no_reply: no "
        '"Response:" after the reasoning; scored as not following the true intention)',
    }
    for key, title in titles.items():
        levels = by_cot_level(runs, key)
        present = [c for c in COT_ORDER if any(v.get(c) is not None for v in levels.values())]
        if present:
            out += [f"### {title}", ""]
            out += _markdown_table(
                ["llm", *(f"cot={c}" for c in present)],
                [[k, *(_fmt(v.get(c)) for c in present)] for k, v in levels.items()],
            )
    pairs = judge_agreement(runs)
    if pairs:
        out += ["### Judge agreement on the same replies", ""]
        out += _markdown_table(
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


def figures(runs: list[Run], folder: Path) -> list[Path]:
    """Figure 2 (`intentions_fig2.png`) and Figure 3 (`intentions_fig3.png`) where the runs allow them."""
    plt = pyplot()

    written = []
    compared = generative_vs_mc(runs)
    phenomena = _phenomena(runs)
    bars = [  # the reference backends are the judges' sanity check, not models: tables only
        (llm, kind, scores)
        for llm, kinds in compared.items()
        if not llm.startswith("reference:")
        for kind, scores in sorted(kinds.items(), reverse=True)
    ]
    if bars and phenomena:
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(phenomena)), 3.6 + 0.2 * len(bars)))
        width = 0.8 / len(bars)
        for b, (llm, kind, scores) in enumerate(bars):
            xs = [p + (b - (len(bars) - 1) / 2) * width for p in range(len(phenomena))]
            ys = [scores.get(p) if scores.get(p) is not None else float("nan") for p in phenomena]
            ax.bar(xs, ys, width, label=f"{llm} {kind}", hatch="//" if kind == "discriminative" else None)
        ax.set_xticks(range(len(phenomena)), phenomena)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy")
        ax.set_title("Generative vs discriminative intention resolution")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
        written.append(save_png(fig, Path(folder) / "intentions_fig2.png"))
    levels = {k: v for k, v in by_cot_level(runs).items() if len(v) > 1}  # series over several levels
    if levels:
        fig, ax = plt.subplots(figsize=(6.5, 3.6 + 0.25 * len(levels)))
        for label, values in levels.items():
            xs = [COT_ORDER.index(c) for c in values]
            ax.plot(
                xs, [v if v is not None else float("nan") for v in values.values()], marker="o", label=label
            )
        ax.set_xticks(range(len(COT_ORDER)), COT_ORDER)
        ax.set_xlabel("prompt.cot (none = plain prompt; 5-6 give the true intention)")
        ax.set_ylabel("generative accuracy")
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)
        written.append(save_png(fig, Path(folder) / "intentions_fig3.png"))
    return written
