"""Write run.json, in the schema pragexp reads today, into run folders made by an older pragexp. A one-off:
`pragexp.report` reads run.json only, and refuses an older schema, naming this script.

    python experiments/migrate_runs.py DIR [DIR ...] [--dry-run]

Every folder under DIR that holds a metrics.json (outside `.hydra/`) is a run folder:

- with a run.json of today's schema: left as it is;
- with a run.json of an older schema, the fields added since, from the run's `.hydra/config.yaml` where they
  depend on it: 2 the paper's settings (`task.paper_settings`), `model.one_label` and the monitored metric
  where it names none; 3 whether the LLM generates its answers (`prompting.generates`); 4 the data's sampling
  unit (its data module's, as today's class declares it; null for a folder without its config);
- without a run.json (made before runs wrote one): the whole record as the run would have declared it, from
  `.hydra/` (config.yaml, hydra.yaml's choices, overrides.yaml), metrics.json (or predictions.jsonl for the
  items scored) and, for an evaluation of a tuned LLM, its checkpoint. The task's declarations are today's
  where the run's config has none; the weight files' digest is null (unknown after the fact); the intention
  tasks' names of before issue 25 (`llm_response_eval`, `llm_intent_mc`) become today's.

Each record is checked by pragexp's own reader before it is written (temp file + rename). `--dry-run` prints
what would be done and writes nothing. A folder that cannot be migrated is named with the reason, and the
others are still done (exit status 1).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import warnings
from dataclasses import asdict, replace
from pathlib import Path

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from pragexp.data.common.files.jsonl import iter_lines
from pragexp.runs.record import (
    RUN_FILE,
    SCHEMA,
    LLMRecord,
    ModelRecord,
    Prompting,
    RunRecord,
    RunRecordError,
    llm_row,
    paper_settings,
    task_record,
    trained_row,
    write_run_record,
)
from pragexp.runs.settings import split_settings
from pragexp.utils.io import load_yaml

CONF = Path(__file__).resolve().parents[1] / "conf"
LLM_MODEL = "pragexp.models.llm.PromptedLLM"
BACKENDS = dict(HFBackend="hf", VLLMBackend="vllm", OpenAIBackend="openai", ReferenceBackend="reference")
NOT_LEARNING = ("majority", "transferred", "oracle", "lead", "none")  # models with no weights trained
ONE_LABEL = "majority"  # the model that predicts one label by construction
GENERATE = "generate"  # the scoring of an LLM that answers in text
RENAMED_TASKS = {"llm_response_eval": "intentions_reply", "llm_intent_mc": "intentions_mc"}  # issue 25


# -- what the run's Hydra folder says ------------------------------------------------------------------------
def _config(run_dir: Path) -> DictConfig | None:
    path = Path(run_dir) / ".hydra" / "config.yaml"
    return OmegaConf.create(load_yaml(path, {})) if path.is_file() else None


def _value(node, key: str):
    """`node[key]` resolved where it can be (a `${hydra:...}` cannot be outside the run: None), plain
    types."""
    try:
        value = node[key]
        return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
    except Exception:  # an interpolation only the run could resolve
        return None


def _section(config: DictConfig, key: str) -> dict:
    node = config.get(key)
    return {k: _value(node, k) for k in node} if isinstance(node, DictConfig) else {}


def _monitor(config: DictConfig) -> tuple[str | None, str | None]:
    return tuple(None if (v := _value(config, k)) is None else str(v) for k in ("monitor", "monitor_mode"))


@functools.cache
def declared_by_task(task: str) -> dict:
    """Today's declarations of a task (its config's `declares`, over those of the shared bases it names)."""
    own = load_yaml(CONF / "task" / f"{task}.yaml", {})
    bases = [d for d in own.get("defaults", []) if isinstance(d, str) and d.startswith("_")]
    declares = [load_yaml(CONF / "task" / f"{b}.yaml", {}).get("declares", {}) for b in bases]
    return OmegaConf.to_container(OmegaConf.merge({}, *declares, own.get("declares") or {}))


def _data_class(config_path: Path, settings: dict) -> type:
    """The run's data module class; a ValueError names the file and the field."""
    target = settings.get("_target_")
    if not isinstance(target, str) or not target:
        raise ValueError(f"{config_path}: data._target_: missing (the run's data module cannot be told)")
    try:
        return get_class(target)
    except Exception as error:  # moved or removed since the run: hydra's error names the class only
        raise ValueError(f"{config_path}: data._target_: {target!r} cannot be imported ({error})") from None


# -- a folder without run.json -------------------------------------------------------------------------------
def derived_record(run_dir: Path) -> RunRecord:
    """The record of a run made before runs wrote run.json, as the run would have declared it."""
    config, hydra_dir = _config(run_dir), Path(run_dir) / ".hydra"
    if config is None:
        raise FileNotFoundError(f"{run_dir}: neither {RUN_FILE} nor .hydra/config.yaml: not a run folder")
    choices = load_yaml(hydra_dir / "hydra.yaml", {}).get("hydra", {}).get("runtime", {}).get("choices", {})
    overrides = [str(o) for o in load_yaml(hydra_dir / "overrides.yaml", [])]
    metrics = json.loads((Path(run_dir) / "metrics.json").read_text(encoding="utf-8"))
    task = choices.get("task") or "unknown"
    task = RENAMED_TASKS.get(task, task)
    experiment = None if choices.get("experiment") == "none" else choices.get("experiment")
    settings = _section(config, "data")
    data_class = _data_class(hydra_dir / "config.yaml", settings)
    data = replace(data_class.declared(settings), sampling_unit=data_class.sampling_unit)
    model = _model(config, choices, experiment, run_dir)
    declares = {**declared_by_task(task), **_section(config, "declares")}
    declared = task_record(task, declares, data, config, *_monitor(config))
    items = int(metrics["test/count"]) if "test/count" in metrics else _predictions(run_dir)
    run_settings = split_settings(overrides, model.tuning in ("lora", "full"))
    return RunRecord(declared, data, model, items, _value(config, "seed"), run_settings, experiment)


def _predictions(run_dir: Path) -> int | None:
    path = Path(run_dir) / "predictions.jsonl"
    return sum(1 for _ in iter_lines(path)) if path.is_file() else None  # a record per non-blank line


def _model(config: DictConfig, choices: dict, experiment: str | None, run_dir: Path) -> ModelRecord:
    name = choices.get("model") or "none"
    trained = bool(_value(config, "train") or _value(config, "ckpt_path"))
    if _value(config.get("model") or {}, "_target_") != LLM_MODEL:
        label = OmegaConf.to_container(config).get("model_label")  # unresolved: `${...}` is no label
        label = label if isinstance(label, str) and label and "${" not in label else None
        tuning = "trained" if trained and name not in NOT_LEARNING else "none"
        return ModelRecord(name, trained_row(name, label, experiment), tuning, one_label=name == ONE_LABEL)
    llm, prompt = _section(config, "llm"), _section(config, "prompt")
    tuning = llm.get("finetune") or "none"
    if tuning == "none" and _value(config, "ckpt_path"):
        tuning = _checkpoint_finetune(str(_value(config, "ckpt_path")), run_dir)
    shots, scoring = int(prompt.get("shots") or 0), str(prompt.get("scoring") or "sum")
    chat, template = bool(prompt.get("chat", True)), _template_name(prompt)
    prompting = Prompting(choices.get("prompt"), template, shots, scoring, chat, scoring == GENERATE)
    backend = BACKENDS.get(str(llm.get("_target_", "")).rsplit(".", 1)[-1], str(llm.get("_target_")))
    adapter = Path(str(llm["adapter"]).rstrip("/")).name if llm.get("adapter") else None
    record = LLMRecord(llm.get("model"), backend, None, llm.get("dtype"), adapter, prompting)
    return ModelRecord(name, llm_row(record.name, shots, tuning), tuning, record)


def _template_name(prompt: dict) -> str:
    """`prompt.template` by name: a position names the group's template there."""
    which, templates = prompt.get("template", 0), prompt.get("templates") or []
    if str(which).isdigit() and int(which) < len(templates) and isinstance(templates[int(which)], dict):
        return str(templates[int(which)].get("name", which))
    return str(which)


def _checkpoint_finetune(path: str, run_dir: Path) -> str:
    """The `llm.finetune` a checkpoint was trained with; where it cannot be read or does not say, `trained`
    (the run still evaluated tuned weights: row `<llm> trained`), with a warning naming the run and the
    checkpoint."""
    from pragexp.runs import checkpoint

    try:
        model = checkpoint.read(path).model_config or {}
        said = (model.get("llm") if isinstance(model.get("llm"), dict) else {}).get("finetune")
        why = "it does not say how the LLM was tuned"
    except Exception as error:  # any file torch or pragexp cannot read: the row is still a tuned LLM's
        said, why = None, f"it cannot be read ({error})"
    if said:
        return str(said)
    text = f"{run_dir}: ckpt_path={path}: {why}; the run's row is named '<llm> trained' (tuning unknown)"
    warnings.warn(text, stacklevel=2)
    return "trained"


# -- a run.json of an older schema ---------------------------------------------------------------------------
def upgraded_record(run_dir: Path, obj: dict) -> RunRecord:
    """The record of a run.json of schema 1-3 with the fields added since (module docstring)."""
    obj, schema, config = json.loads(json.dumps(obj)), int(obj.get("schema", 1)), _config(run_dir)
    task, data, model = obj["task"], obj["data"], obj["model"]
    if schema < 2:
        model["one_label"] = model.get("name") == ONE_LABEL
        if config is not None:
            if not task.get("monitor"):
                task["monitor"], task["monitor_mode"] = _monitor(config)
            task["paper_settings"] = paper_settings(declared_by_task(task["name"]), config)
    prompting = (model.get("llm") or {}).get("prompting")
    if schema < 3 and prompting:
        prompting["generates"] = prompting.get("scoring") == GENERATE
    if schema < 4 and config is not None:
        unit = _data_class(Path(run_dir) / ".hydra" / "config.yaml", _section(config, "data")).sampling_unit
        data["sampling_unit"] = asdict(unit)
    return RunRecord.from_json({**obj, "schema": SCHEMA})


# -- the folders ---------------------------------------------------------------------------------------------
def migrated(run_dir: Path) -> tuple[RunRecord | None, str]:
    """The record to write into `run_dir` (None: its run.json is today's already) and what was done."""
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        record = derived_record(run_dir)
        return RunRecord.from_json(record.to_json()), "derived from .hydra"  # checked as pragexp reads it
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunRecordError(f"{path}: not JSON ({e})") from None
    schema = obj.get("schema", 1) if isinstance(obj, dict) else None
    if not isinstance(schema, int) or isinstance(schema, bool) or not 1 <= schema <= SCHEMA:
        raise RunRecordError(f"{path}: schema {schema!r}: not one this script knows (1-{SCHEMA})")
    if schema == SCHEMA:
        return None, f"schema {SCHEMA} already"
    try:
        return upgraded_record(run_dir, obj), f"schema {schema} -> {SCHEMA}"
    except (RunRecordError, KeyError, TypeError) as e:
        raise RunRecordError(f"{path}: {e}") from None


def run_folders(dirs: list[Path]) -> list[Path]:
    """Every folder under `dirs` holding a metrics.json outside a `.hydra` folder."""
    found = []
    for d in dirs:
        if not d.is_dir():
            raise FileNotFoundError(f"no such folder: {d}")
        found += [p.parent for p in sorted(d.rglob("metrics.json")) if ".hydra" not in p.parts]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "dirs", nargs="+", type=Path, help="run or multirun folders (searched for metrics.json)"
    )
    parser.add_argument("--dry-run", action="store_true", help="say what would be done, write nothing")
    args = parser.parse_args(argv)
    failed = 0
    for run_dir in run_folders(args.dirs):
        try:
            record, done = migrated(run_dir)
        except (OSError, ValueError) as e:  # RunRecordError is a ValueError
            print(f"{run_dir}: not migrated: {e}", file=sys.stderr)
            failed += 1
            continue
        if record is not None and not args.dry_run:
            write_run_record(run_dir, record)
        print(f"{run_dir}: {done}" + (" (dry run: nothing written)" if record and args.dry_run else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
