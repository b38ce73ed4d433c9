"""run.json, assembled from what the pieces of a finished run declare: the task's config (its headline
metrics, report section and paper file, the metric training monitors), the data module's class from its
settings (`declared`), the built model (`declare`: an LLM gives its identity and prompting), the metrics (the
items scored) and Hydra (the choices and the command line). `pragexp.run` writes it beside metrics.json."""

from __future__ import annotations

from dataclasses import replace

from omegaconf import DictConfig, OmegaConf

from pragexp.runs.record import ModelRecord, RunRecord, task_record, trained_row
from pragexp.runs.settings import split_settings
from pragexp.tasks.contracts import DeclaredModel


def hydra_facts() -> tuple[dict, list[str]]:
    """The config groups' choices and the command line's overrides (none outside a Hydra app)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return {}, []
    hydra = HydraConfig.get()
    return dict(hydra.runtime.choices), [str(o) for o in hydra.overrides.task]


def _plain(node) -> dict:
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node or {})


def _monitor(cfg: DictConfig) -> tuple:
    """`monitor` and `monitor_mode` (None where the entry point sets none: `???`)."""
    return tuple(
        OmegaConf.select(cfg, k, default=None, throw_on_missing=False) for k in ("monitor", "monitor_mode")
    )


def declare_run(cfg: DictConfig, task, datamodule, metrics: dict[str, float]) -> RunRecord:
    choices, overrides = hydra_facts()
    experiment = choices.get("experiment")
    experiment = None if experiment in (None, "none") else experiment
    name = str(cfg.get("model_name") or choices.get("model") or "none")
    data = type(datamodule).declared(_plain(cfg.data))
    # A run that scored only some test items (`data.limit`, `suite.limit`) says so in its data's record,
    # whatever the module declares: a limited run is never read as a full one (the scorecard's row names it).
    limit = getattr(datamodule, "limit", None)
    setting = data.setting if limit is None else {**data.setting, "limit": int(limit)}
    data = replace(data, sampling_unit=datamodule.sampling_unit, setting=setting)
    trained = task.model_traits.learns_weights and bool(cfg.get("train", True) or cfg.get("ckpt_path"))
    row = trained_row(name, cfg.get("model_label"), experiment)
    # The first module of the task that declares itself: the model, wherever the task keeps it (a reader among
    # PragmatiCQA's networks, a reader inside GRICE's head); a model class with traits only says no more.
    net = next((m for m in task.modules() if m is not task and isinstance(m, DeclaredModel)), None)
    if net is not None:
        model = net.declare(name, row, trained)
    else:
        model = ModelRecord(name, row, "trained" if trained else "none")
    if model.llm is not None and model.llm.prompting is not None:
        prompting = replace(model.llm.prompting, group=choices.get("prompt"))
        model = replace(model, llm=replace(model.llm, prompting=prompting))
    items = int(metrics["test/count"]) if "test/count" in metrics else datamodule.test_size()
    return RunRecord(
        task=task_record(str(cfg.get("task_name")), _plain(cfg.get("declares")), data, cfg, *_monitor(cfg)),
        data=data,
        model=model,
        items=items,
        seed=None if cfg.get("seed") is None else int(cfg.seed),
        settings=split_settings(overrides, model.tuning in ("lora", "full")),
        experiment=experiment,
    )
