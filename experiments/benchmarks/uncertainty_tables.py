"""The cells of experiments/benchmarks/README.md's first two tables, with their uncertainty, from the run
directories run_smollm2.sh writes (its `hu` and `ludwig` parts): each run's own figures from metrics.json
(pragexp/metrics/uncertainty.py: `mean ± standard error (n=items)`), and LUDWIG's mean over the six templates
with its standard error clustered by pair (the six templates score each pair six times: a pair is one item).

python experiments/benchmarks/uncertainty_tables.py OUT_DIR   (OUT_DIR: run_smollm2.sh's)
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from pragexp.metrics.uncertainty import estimate_mean, format_estimate, metrics_cell

PHENOMENA = ("CoherenceInference", "Deceits", "Humour", "IndirectSpeech", "Irony")
TYPES = ("Particularised", "Generalised", "Idiom", "World knowledge", "Rhetorical question", "Other")


def metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def predictions(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines() if line]


def hu(out: Path) -> None:
    for name in ("hu_authors", "hu_options_as_text"):
        if not (out / name / "metrics.json").is_file():
            continue
        m = metrics(out / name)
        print(
            f"{name}: acc",
            " | ".join(metrics_cell(m, "test/acc", p) for p in PHENOMENA),
            "|",
            metrics_cell(m, "test/acc"),
        )
        print(f"{name}: seed spread", " | ".join(f"{m[f'test/acc_view_std/{p}']:.3f}" for p in PHENOMENA))
        if "test/human_corr" in m:
            r = [f"{m[f'test/human_corr/{p}']:.3f} (p={m[f'test/human_corr_p/{p}']:.2f})" for p in PHENOMENA]
            print(f"{name}: r with people across items", " | ".join(r))


def ludwig_runs(out: Path) -> dict[tuple[int, int], Path]:
    """{(k, template): run} of the sweep's folders, read from each run's overrides."""
    found = {}
    for run in sorted((out / "ludwig").iterdir()):
        overrides = run / ".hydra" / "overrides.yaml"
        if overrides.is_file():
            settings = dict(line[2:].split("=", 1) for line in overrides.read_text().splitlines())
            found[int(settings["prompt.shots"]), int(settings["prompt.template"])] = run
    return found


def pooled(rows: list[dict]) -> str:
    """Mean over the rows with its standard error clustered by pair (n: pairs)."""
    estimate = estimate_mean([float(r["correct"]) for r in rows], [r["index"] for r in rows])
    return format_estimate(estimate.mean, estimate.stderr, estimate.items)


def ludwig(out: Path) -> None:
    runs = ludwig_runs(out)
    for k in sorted({k for k, _ in runs}):
        templates = sorted(t for kk, t in runs if kk == k)
        cells, yes, rows, accs = [], [], [], []
        for t in templates:
            m, records = metrics(runs[k, t]), predictions(runs[k, t])
            cells.append(metrics_cell(m, "test/acc"))
            yes.append(f"{statistics.fmean(r['options'][r['predicted']] == 'yes' for r in records):.3f}")
            rows += records
            accs.append(m["test/acc"])
        spread = f"{statistics.fmean(accs):.3f} ± {statistics.pstdev(accs):.3f} (6 templates)"
        print(
            f"ludwig k={k}: acc", " | ".join(cells), "| pooled", pooled(rows), "| paper's convention", spread
        )
        print(f"ludwig k={k}: share yes", " | ".join(yes))
        by_type = defaultdict(list)
        for r in rows:
            by_type[r.get("group")].append(r)
        print(f"ludwig k={k}: per type", " | ".join(f"{t} {pooled(by_type[t])}" for t in TYPES if by_type[t]))


if __name__ == "__main__":
    root = Path(sys.argv[1])
    hu(root)
    ludwig(root)
