"""The one adapter for run directories made before runs wrote run.json or its latest fields: their `RunRecord` as
the run would have declared it, from `.hydra`, metrics.json and predictions.jsonl (weight files' digest: null;
the task's declarations today's where its config has none); the only report module naming tasks and models."""

from __future__ import annotations

import functools
import json
import warnings
from dataclasses import replace
from pathlib import Path

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from pragexp.data.common.files.jsonl import iter_lines
from pragexp.utils.command_line import RENAMED
from pragexp.utils.io import load_yaml
from pragexp.utils.run_record import (
    RUN_FILE,
    SCHEMA,
    LLMRecord,
    ModelRecord,
    Prompting,
    RunRecord,
    llm_row,
    paper_settings,
    read_run_record,
    task_record,
    trained_row,
)
from pragexp.utils.run_settings import split_settings

CONF = Path(__file__).resolve().parents[2] / "conf"
LLM_MODEL = "pragexp.models.llm.PromptedLLM"
BACKENDS = dict(HFBackend="hf", VLLMBackend="vllm", OpenAIBackend="openai", ReferenceBackend="reference")
NOT_LEARNING = ("majority", "transferred", "oracle", "lead", "none")  # models with no weights trained
ONE_LABEL = "majority"  # the model that predicts one label by construction
GENERATE = "generate"  # the scoring of an LLM that answers in text


def run_record(run_dir: Path) -> RunRecord:
    """The run's run.json with the fields added since (schema 2: the paper's settings, `one_label`, the monitor
    where it has none, from its config; 3: whether the LLM generates); without one, the whole record derived."""
    run_dir = Path(run_dir)
    if not (run_dir / RUN_FILE).is_file():
        return legacy_record(run_dir)
    record = read_run_record(run_dir)
    if record.schema >= SCHEMA:
        return record
    task, model, llm = record.task, record.model, record.model.llm
    if llm is not None and llm.prompting is not None:
        llm = replace(llm, prompting=replace(llm.prompting, generates=llm.prompting.scoring == GENERATE))
    old = record.schema < 2
    model = replace(model, llm=llm, one_label=model.name == ONE_LABEL if old else model.one_label)
    config = _config(run_dir) if old else None
    if config is not None:
        monitor = (task.monitor, task.monitor_mode) if task.monitor else _monitor(config)
        settings = paper_settings(declared_by_task(task.name), config)
        task = replace(task, monitor=monitor[0], monitor_mode=monitor[1], paper_settings=settings)
    return replace(record, task=task, model=model, schema=SCHEMA)


def _config(run_dir: Path) -> DictConfig | None:
    path = Path(run_dir) / ".hydra" / "config.yaml"
    return OmegaConf.create(load_yaml(path, {})) if path.is_file() else None


def _monitor(config: DictConfig) -> tuple[str | None, str | None]:
    return tuple(None if (v := _value(config, k)) is None else str(v) for k in ("monitor", "monitor_mode"))


def _value(node, key: str):
    """`node[key]` resolved where it can be (a `${hydra:...}` cannot be outside the run: None), plain types."""
    try:
        value = node[key]
        return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
    except Exception:  # an interpolation only the run could resolve
        return None


def _section(config: DictConfig, key: str) -> dict:
    node = config.get(key)
    return {k: _value(node, k) for k in node} if isinstance(node, DictConfig) else {}


@functools.cache
def declared_by_task(task: str) -> dict:
    """Today's declarations of a task (its config's `declares`, over those of the shared bases it names)."""
    own = load_yaml(CONF / "task" / f"{task}.yaml", {})
    bases = [d for d in own.get("defaults", []) if isinstance(d, str) and d.startswith("_")]
    declares = [load_yaml(CONF / "task" / f"{b}.yaml", {}).get("declares", {}) for b in bases]
    return OmegaConf.to_container(OmegaConf.merge({}, *declares, own.get("declares") or {}))


def legacy_record(run_dir: Path) -> RunRecord:
    config, hydra_dir = _config(run_dir), Path(run_dir) / ".hydra"
    if config is None:
        raise FileNotFoundError(f"{run_dir}: neither {RUN_FILE} nor .hydra/config.yaml: not a run directory")
    choices = load_yaml(hydra_dir / "hydra.yaml", {}).get("hydra", {}).get("runtime", {}).get("choices", {})
    overrides = [str(o) for o in load_yaml(hydra_dir / "overrides.yaml", [])]
    metrics = json.loads((Path(run_dir) / "metrics.json").read_text(encoding="utf-8"))
    task = choices.get("task") or "unknown"
    task = RENAMED["task"].get(task, task)
    experiment = None if choices.get("experiment") == "none" else choices.get("experiment")
    data = _data_record(hydra_dir / "config.yaml", _section(config, "data"))
    model = _model(config, choices, experiment, run_dir)
    declares = {**declared_by_task(task), **_section(config, "declares")}
    declared = task_record(task, declares, data, config, *_monitor(config))
    items = int(metrics["test/count"]) if "test/count" in metrics else _predictions(run_dir)
    settings = split_settings(overrides, model.tuning in ("lora", "full"))
    return RunRecord(declared, data, model, items, _value(config, "seed"), settings, experiment)


def _data_record(config_path: Path, settings: dict):
    """The run's data as its data module declares it; a ValueError names the file and the field it lacks."""
    target = settings.get("_target_")
    if not isinstance(target, str) or not target:
        raise ValueError(f"{config_path}: data._target_: missing (the run's data module cannot be told)")
    try:
        data_class = get_class(target)
    except Exception as error:  # moved or removed since the run: hydra's error names the class only
        raise ValueError(f"{config_path}: data._target_: {target!r} cannot be imported ({error})") from None
    return replace(data_class.declared(settings), sampling_unit=data_class.sampling_unit)


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
    """The `llm.finetune` a checkpoint was trained with; where it cannot be read or does not say, `trained` (the
    run still evaluated tuned weights: row `<llm> trained`), with a warning naming the run and the checkpoint."""
    from pragexp.utils import checkpoint

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
