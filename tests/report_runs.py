"""What the report's tests share: fixture run folders as pragexp writes them (`write_run`, with the `_target_`
of a task's data module) and the report's Markdown tables read back (`table`, `row_cells`)."""

import json
from pathlib import Path

import yaml
from conftest import migrated


def data_target(task: str) -> str:
    """The `_target_` of the data module a task's config picks (`/data: circa` in its defaults or its
    bases')."""
    from conftest import CONF, migration

    task = migration().RENAMED_TASKS.get(task, task)  # a run of before issue 25 names the task's old name
    defaults = yaml.safe_load((CONF / "task" / f"{task}.yaml").read_text())["defaults"]
    for entry in defaults:
        if isinstance(entry, str) and entry.startswith("_") and entry != "_self_":
            defaults += yaml.safe_load((CONF / "task" / f"{entry}.yaml").read_text())["defaults"]
    (data,) = {entry["/data"] for entry in defaults if isinstance(entry, dict) and "/data" in entry}
    return yaml.safe_load((CONF / "data" / f"{data}.yaml").read_text())["_target_"]


def write_run(
    root: Path,
    name: str,
    task: str,
    model: str,
    metrics: dict,
    seed: int = 0,
    experiment: str = "none",
    extra: tuple = (),
    fold: int | None = None,
    config: dict | None = None,
) -> Path:
    run_dir = root / name
    (run_dir / ".hydra").mkdir(parents=True)
    overrides = [f"task={task}", f"model={model}", f"seed={seed}", "hydra.run.dir=x", *extra]
    if fold is not None:
        overrides.append(f"data.fold={fold}")
    if experiment != "none":
        overrides.append(f"experiment={experiment}")
    (run_dir / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    choices = {"task": task, "model": model, "experiment": experiment}
    (run_dir / ".hydra" / "hydra.yaml").write_text(
        yaml.safe_dump({"hydra": {"runtime": {"choices": choices}}})
    )
    composed = {"seed": seed, "task_name": "${hydra:x}", **(config or {})}
    # What its run.json is derived from (experiments/migrate_runs.py): its data module and, for an LLM, its
    # model.
    composed["data"] = {"_target_": data_target(task), **composed.get("data", {})}
    if model == "llm":
        composed["model"] = {"_target_": "pragexp.models.llm.PromptedLLM", **composed.get("model", {})}
    (run_dir / ".hydra" / "config.yaml").write_text(yaml.safe_dump(composed))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    return migrated(run_dir)


def table(text: str, title: str) -> dict[str, dict[str, str]]:
    """The markdown table under `### title` as {first cell: {header: cell}}."""
    cells = []
    for line in text.split(f"### {title}\n", 1)[1].strip("\n").splitlines():
        if not line.startswith("|"):
            break
        cells.append([c.strip() for c in line.strip("|").split("|")])
    header = cells[0]
    return {row[0]: dict(zip(header, row, strict=True)) for row in cells[2:]}


def row_cells(text: str, task: str, label: str) -> dict[str, str]:
    """One row's cells in its task's settings, dev and test tables ({} for a table it is not in)."""
    out = {}
    for part in ("settings", "dev", "test"):
        if f"### {task}: {part}\n" in text:
            out |= table(text, f"{task}: {part}").get(label, {})
    return out
