"""A run's command-line settings sorted by what they change (run.json's `settings`): those of the model
(another row: `optimizer.lr=0.1`, `llm.dtype=float16`), those of the task's side (they qualify a cell:
`judge=gpt4`, `data.input=answer`, `retriever.top_k=5`), and the others (said elsewhere in the record, or how
a job ran). Left out: how and where a job was launched and logged, the choices of task, model and experiment,
what a row averages over (seed, fold) and where the data is (run.json's `data.files`)."""

from __future__ import annotations

import re

from pragexp.runs.record import Settings

# Overrides that launch a job (a sweep, a cluster) rather than set what it runs: a run's name, its settings
# in a report and the command that re-runs one trial of a sweep all leave them out.
LAUNCH_OVERRIDES = ("hydra.", "launcher=", "hparams_search=")
LEFT_OUT = (
    *LAUNCH_OVERRIDES,
    "print_config=",
    "paths.",
    "logger",
    "callbacks.progress_bar",
    "callbacks.benchmarks",  # benchmarks scored beside training: they leave the run's own figures as they are
    "ckpt_path",
    "model.inference_ckpt",
    "task=",
    "model=",
    "experiment=",
    "trainer.accelerator",
    "trainer.devices",
)
AVERAGED = ("seed", "data.fold")  # what a report averages over
DATA_LOCATION = re.compile(r"data\.(\w+_)?(path|dir)$")  # data.path, data.test_path: where the data is
# Said elsewhere in the record (the label set, the template, the LLM's name), or the same figures computed
# another way (batching, placement, threads, a replay of the cached answers, whether dev was scored too).
OTHER = (
    "data.labels",
    "data.setting",
    "prompt.template",
    "prompt.shots",
    "llm",
    "llm.model",
    "llm.batch_size",
    "llm.device",
    "llm.replay",  # where the answers come from (the response cache alone), not which
    "model_label",
    "validate",
    "threads",
)
OTHER_PREFIXES = ("callbacks.",)  # how training stops and what it logs: not the model a report compares
TASK_SIDE = ("data", "retriever", "judge", "prompt", "metrics")  # settings only some tasks take
TASK_KEYS = ("trainer.limit_test_batches",)  # which test items were scored
TUNING = ("optimizer", "scheduler", "trainer")  # a fine-tuned LLM's schedule: one row across tasks


def split_settings(overrides: list[str], tuned_llm: bool = False) -> Settings:
    """The command line's overrides (`+`/`~` dropped) sorted into model, task and other settings, each sorted.
    `tuned_llm`: an LLM fine-tuned here keeps one row across tasks, so each task's schedule is the task's."""
    sides: dict[str, list[str]] = {"model": [], "task": [], "other": []}
    for override in overrides:
        setting = override.lstrip("+~")
        key = setting.split("=", 1)[0]
        if setting.startswith(LEFT_OUT) or key in AVERAGED or DATA_LOCATION.match(key):
            continue
        group = key.split(".", 1)[0]
        if key in OTHER or setting.startswith(OTHER_PREFIXES) or (tuned_llm and key == "llm.finetune"):
            side = "other"
        elif group in TASK_SIDE or key in TASK_KEYS or (tuned_llm and group in TUNING):
            side = "task"
        else:
            side = "model"
        sides[side].append(setting)
    return Settings(**{side: sorted(found) for side, found in sides.items()})
