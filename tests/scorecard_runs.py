"""What the scorecard's tests share: `model=llm` runs as a multirun writes them (Circa, the intention tasks,
the LLM benchmarks: HU, LUDWIG, BIG-bench), their uncertainty figures, the fixture of the LLM benchmarks'
runs, and the scorecard's Markdown table read back (`parse`)."""

import json

import pytest
from report_runs import write_run

SMOLLM2 = {"_target_": "pragexp.generation.backends.hf.HFBackend", "model": "smollm2"}


def llm_run(root, name, task, metrics, template=None, shots=None, seed=0, config=None, extra=()):
    """A `model=llm` run (the intention tasks too), as a multirun over prompt.template writes it."""
    prompt = {k: v for k, v in (("template", template), ("shots", shots)) if v is not None}
    overrides = [f"prompt.template={template}"] if template is not None else []
    overrides += [f"prompt.shots={shots}"] if shots is not None else []
    model = "llm"
    composed = {"llm": SMOLLM2, "prompt": prompt, "model_label": "${model_name}", **(config or {})}
    return write_run(
        root,
        name,
        task,
        model,
        metrics,
        seed,
        extra=(*overrides, *extra, "llm.model=smollm2"),
        config=composed,
    )


def circa_config(labels, setting="matched"):
    return {"data": {"labels": labels, "setting": setting, "path": "circa-data.tsv"}}


def data_report(run_dir, train, test):
    counts = {"train": train, "test": test}
    (run_dir / "data_report.json").write_text(json.dumps({"labels": "strict", "label_counts": counts}))


def parse(text: str) -> dict[str, dict[str, str]]:
    """The scorecard's markdown table as {row name: {column: cell}}."""
    lines = [line for line in text.split("## Scorecard\n", 1)[1].splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    header = cells[0]
    return {row[0]: dict(zip(header[1:], row[1:], strict=True)) for row in cells[2:]}


# The LLM benchmarks (hu_pragmatics, ludwig, bigbench_implicatures): runs of model=llm.
HU_ITEMS = {
    "CoherenceInference": 40,
    "Deceits": 20,
    "Irony": 25,
    "Maxims": 19,
    "Metaphor": 20,
}  # five of seven
LUDWIG_TEMPLATES = ["question_response_implicature", "esther_juan", "question_response_meaning"]
LUDWIG_TEMPLATES += ["question_response_intent", "karen_william", "bob_alice"]
LUDWIG_0SHOT = (0.50, 0.52, 0.55, 0.60, 0.58, 0.53)  # per template
LUDWIG_5SHOT = (0.62, 0.64, 0.57)  # templates 0-2: the best mean (0.61)
LUDWIG_30SHOT = (0.60, 0.59, 0.58)  # 0.59


def hu_run(root, name, template, metrics, report=None, extra=()):
    run = llm_run(root, name, "hu_pragmatics", metrics, template=template, shots=0, extra=extra)
    if report is not None:
        (run / "data_report.json").write_text(json.dumps(report))
    return run


def ludwig_run(root, name, template, shots, metrics, extra=()):
    """A LUDWIG run: prompt.template as a position, as a sweep over 0..5 gives it; the config lists the
    names."""
    templates = [{"name": n} for n in LUDWIG_TEMPLATES]
    config = {
        "prompt": {"template": template, "shots": shots, "templates": templates},
        "data": {"shots": shots},
    }
    return llm_run(root, name, "ludwig", metrics, template, shots, config=config, extra=extra)


def uncertainty(key, mean, stderr, items):
    """The figures pragexp.metrics.uncertainty writes beside a mean `key` (`test/acc/Irony` ->
    `test/acc_stderr/Irony`)."""
    stage, name, *group = key.split("/")
    figures = {"stderr": stderr, "n": items, "ci95_low": mean - 2 * stderr, "ci95_high": mean + 2 * stderr}
    return {"/".join([stage, f"{name}_{f}", *group]): v for f, v in figures.items()}


def hu_metrics(acc, view_std=0.05, stderr=0.02):
    out = {"test/acc": acc, "test/acc_view_std": view_std, "test/human_corr": 0.3, "test/count": 620}
    out |= uncertainty("test/acc", acc, stderr, 124)
    for p, items in HU_ITEMS.items():
        out |= {f"test/acc/{p}": acc, f"test/acc_view_std/{p}": view_std}
        out |= uncertainty(f"test/acc/{p}", acc, stderr, items)
    return out | {"test/error_share/IncorrectLiteral": 0.6, "test/error_share/IncorrectNonSequitur": 0.4}


@pytest.fixture
def benchmark_runs(tmp_path):
    root = tmp_path / "benchmarks"
    report = {"per_phenomenon": {p: 5 * n for p, n in HU_ITEMS.items()}, "human_accuracy": {"Irony": 0.9}}
    hu_run(root, "hu_authors", "authors", hu_metrics(0.40), report)
    hu_run(root, "hu_letters", "letters", hu_metrics(0.30, 0.1, 0.04), report)
    for shots, accs in ((0, LUDWIG_0SHOT), (5, LUDWIG_5SHOT), (30, LUDWIG_30SHOT)):
        for template, acc in enumerate(accs):
            metrics = {"test/acc": acc, "test/acc/Idiom": acc - 0.1, "test/count": 600}
            ludwig_run(root, f"ludwig_k{shots}_t{template}", template, shots, metrics)
    llm_run(root, "bigbench", "bigbench_implicatures", {"test/acc": 0.55})
    return root
