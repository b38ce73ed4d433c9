"""`run.json`: what a run was, written beside `metrics.json` by the pieces that know it (the task, its data
module, the model or LLM), so that a report reads facts instead of guessing them from the config.

    {"schema": 4,
     "task": {"name": "circa",
              "headline": [{"key": "test/acc", "title": "Circa RELAXED acc", "chance": 0.25,
                            "higher_is_better": true, "order": 30}],
              "section": null,              # the dataset's report section: a module (pragexp.report.sections)
              "paper": "circa.json",        # the file of its published numbers (null: none)
              "paper_settings": {"data.labels": "relaxed"},  # the config's values of the keys its paper
                                            # names (`declares.paper_keys`), as text (null: unset)
              "monitor": "val/acc", "monitor_mode": "max"},  # the dev metric training selects on
     "data": {"dataset": "circa",
              "source": "release",          # release | sample | generated | hub
              "files": {"all": ["circa-data.tsv"]},   # file names (no directories) by split ("all": one file
                                                      # the splits are cut from)
              "split": "test",              # the split scored
              "labels": "relaxed", "fold": null,
              "setting": {"setting": "matched", "input": "qa"},  # what else the dataset declares (scalars)
              "sampling_unit": {"name": "question", "reason": "..."}},  # what its intervals are clustered by
     "model": {"name": "llm",               # the model= choice
               "row": "smollm2 0-shot",     # the row a report puts it in (null: not a model, e.g. a reference
                                            # backend that answers from the data)
               "tuning": "none",            # none | trained | lora | full
               "one_label": false,          # predicts one label by construction (the majority baseline)
               "llm": {"name": "smollm2", "backend": "hf", "files": "3f2a...",  # the weight files' digest
                       "dtype": "float32", "adapter": null,     # an adapter folder applied for evaluation
                       "prompting": {"group": "circa", "template": "listed", "shots": 0, "scoring": "sum",
                                     "chat": true, "generates": false}}},  # generates: answers as text
                                                               # llm: null for a model that is no LLM
     "items": 1000,                         # items scored (test)
     "seed": 0,
     "settings": {"model": ["optimizer.lr=0.1"],    # command-line settings that make another model
                  "task": ["judge=gpt4"],           # those of the task's side: they qualify a cell, not a row
                  "other": ["llm.batch_size=8"]},   # the rest: facts said elsewhere in the record (labels,
                                                    # template), or how a job ran (batching, threads)
     "experiment": null}                    # the experiment= preset (circa/bert_yn)

`headline` holds the task's declared headline metrics that apply to this run: a task's config declares them
(`declares.headline`, each with an optional `when: {labels: strict, ...}` matched against the data's record),
with the dotted module of its report section (`declares.section`: a plugin the report checks against
`pragexp.report.sections.ReportSection`), its paper file (`declares.paper`) and the config keys that paper's
rows and settings name (`declares.paper_keys`); `task_record` picks them. A row is named by `llm_row` (an LLM)
or `trained_row` (any other model). Seed and fold, where the data was (`data.path`: see `data.files`) and how
the run was launched are no settings (`runs.settings`). `schema` counts the versions; a reader reads its own
only (`SCHEMA`), naming the file and its schema otherwise: run folders of an older pragexp are migrated once
by `experiments/migrate_runs.py` (it also writes run.json for a folder made before runs wrote one).
`read_run_record` checks every field's type and fails naming the file and the field.
"""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from pragexp.runs.sampling_unit import SamplingUnit
from pragexp.utils.io import atomic_write_text

RUN_FILE = "run.json"
SCHEMA = 4  # 2: task.paper_settings, model.one_label; 3: model.llm.prompting.generates; 4: data.sampling_unit
SOURCES = ("release", "sample", "generated", "hub")
TUNINGS = ("none", "trained", "lora", "full")
MIGRATE = (
    "migrate the run folder once with `python experiments/migrate_runs.py <folder>`, or make the run again"
)


@dataclass(frozen=True)
class Headline:
    key: str  # the metrics.json key: test/acc
    title: str  # the column's title: Circa RELAXED acc
    chance: float | None = None  # a uniform guess's score; None where there is none to average over
    higher_is_better: bool = True
    order: int = 0  # where its column stands among every task's (ascending; the scorecard's order)


@dataclass(frozen=True)
class TaskRecord:
    name: str
    headline: list[Headline] = field(default_factory=list)
    section: str | None = None  # dotted module path of the dataset's report section
    paper: str | None = None  # file name of its published numbers
    monitor: str | None = None  # the dev metric training selects on (`val/acc`), where the run had one
    monitor_mode: str | None = None  # max | min
    paper_settings: dict[str, str | None] = field(default_factory=dict)  # paper key -> the run's value


@dataclass(frozen=True)
class DataRecord:
    dataset: str
    source: str  # one of SOURCES
    files: dict[str, list[str]] = field(default_factory=dict)
    split: str = "test"
    labels: str | None = None
    fold: int | None = None
    setting: dict[str, Any] = field(default_factory=dict)
    sampling_unit: SamplingUnit | None = None  # what its intervals are clustered by (None: not declared)


@dataclass(frozen=True)
class Prompting:
    group: str | None
    template: str
    shots: int
    scoring: str
    chat: bool
    generates: bool = False  # chooses by generating text (prompt.scoring=generate), not by likelihood


@dataclass(frozen=True)
class LLMRecord:
    name: str | None  # llm.model; None for a backend that names none (the reference backends)
    backend: str
    files: str | None = None  # digest of the local weight files (None: a hub name, or not on this machine)
    dtype: str | None = None
    adapter: str | None = None  # the adapter folder's name, for an evaluation with tuned weights
    prompting: Prompting | None = None


@dataclass(frozen=True)
class ModelRecord:
    name: str
    row: str | None
    tuning: str = "none"  # one of TUNINGS
    llm: LLMRecord | None = None
    one_label: bool = False  # the same label for every input (the majority baseline): never warned about


@dataclass(frozen=True)
class Settings:
    model: list[str] = field(default_factory=list)
    task: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RunRecord:
    task: TaskRecord
    data: DataRecord
    model: ModelRecord
    items: int | None = None
    seed: int | None = None
    settings: Settings = field(default_factory=Settings)
    experiment: str | None = None  # the experiment= preset the run was made with
    schema: int = SCHEMA

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> RunRecord:
        """The record of a parsed run.json of today's schema; a `RunRecordError` names the field that is
        wrong, or the schema and the script that migrates an older one."""
        schema = obj.get("schema", 1) if isinstance(obj, dict) else SCHEMA  # none: the first (1)
        if schema != SCHEMA:
            newer = isinstance(schema, int) and schema > SCHEMA
            raise RunRecordError(
                f"schema {schema!r}: this pragexp reads run.json of schema {SCHEMA} only; "
                + ("update pragexp" if newer else MIGRATE)
            )
        record = _build(cls, obj, "")
        _check_choice(record.data.source, SOURCES, "data.source")
        _check_choice(record.model.tuning, TUNINGS, "model.tuning")
        return record


class RunRecordError(ValueError):
    pass


def llm_row(name: str | None, shots: int, tuning: str) -> str | None:
    """An LLM's row: `<name> <k>-shot` prompted, `<name> lora` (or `full`) fine-tuned: one row across tasks;
    None for a backend that names no model (a reference backend answers from the data: no model's row)."""
    if name is None:
        return None
    return f"{name} {shots}-shot" if tuning == "none" else f"{name} {tuning}"


def trained_row(model: str, label: str | None, experiment: str | None) -> str:
    """A model's row other than an LLM's: `majority` for that baseline; the run's label where set on purpose
    (`model_label`, not the model's name); else its experiment (`circa/bert_yn` -> `bert_yn`, the `tableN_`
    prefix dropped as published rows drop it: `grice/table5_memnn` -> `memnn`); else the model."""
    if model == "majority":
        return model
    if label and label != model:
        return label
    return re.sub(r"^table\d+_", "", experiment.rsplit("/", 1)[-1]) if experiment else model


def task_record(
    name: str, declares: dict | None, data: DataRecord, config=None, monitor=None, monitor_mode=None
) -> TaskRecord:
    """The task's declarations (its config's `declares`) as they apply to a run on `data` made with `config`
    (an OmegaConf config): the headline metrics whose `when` matches the data's labels, fold, split, source or
    setting; the values of its paper's keys; and its monitored metric."""
    declares = declares or {}
    facts = {
        **data.setting,
        "labels": data.labels,
        "fold": data.fold,
        "split": data.split,
        "source": data.source,
    }
    headline = [
        _build(Headline, {k: v for k, v in h.items() if k != "when"}, f"declares.headline[{i}]")
        for i, h in enumerate(declares.get("headline") or [])
        if all(facts.get(k) == v for k, v in (h.get("when") or {}).items())
    ]
    monitor, monitor_mode = (None if v is None else str(v) for v in (monitor, monitor_mode))
    settings = paper_settings(declares, config) if config is not None else {}
    return TaskRecord(
        name, headline, declares.get("section"), declares.get("paper"), monitor, monitor_mode, settings
    )


def paper_settings(declares: dict, config) -> dict[str, str | None]:
    """The values in `config` (an OmegaConf config) of the keys the task's paper names (`declares.paper_keys`)
    as text (`5`, `[1, 5]`); None where a key is unset or only the run could resolve it."""
    out = {}
    for key in declares.get("paper_keys") or []:
        try:
            value = OmegaConf.select(config, key, default=None, throw_on_missing=False)
            value = OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value
        except Exception:  # an interpolation only the run could resolve (`${hydra:...}`)
            value = None
        out[key] = None if value is None else str(value)
    return out


def _check_choice(value: str, choices: tuple[str, ...], path: str) -> None:
    if value not in choices:
        raise RunRecordError(f"{path}: {value!r} is not one of {', '.join(choices)}")


def _build(cls: type, obj, path: str):
    if not isinstance(obj, dict):
        raise RunRecordError(f"{path or 'the record'}: expected an object, got {type(obj).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(obj) - known)
    if unknown:
        raise RunRecordError(f"{_join(path, unknown[0])}: not a field of {cls.__name__}")
    values = {}
    for f in fields(cls):
        here = _join(path, f.name)
        if f.name not in obj:
            if f.default is MISSING and f.default_factory is MISSING:
                raise RunRecordError(f"{here}: missing")
            continue
        values[f.name] = _value(hints[f.name], obj[f.name], here)
    return cls(**values)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _value(hint, value, path: str):
    """`value` checked against the type `hint` (nested dataclasses built)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _value(inner, value, path)
    if value is None:
        raise RunRecordError(f"{path}: null where {_name(hint)} is expected")
    if is_dataclass(hint):
        return _build(hint, value, path)
    if origin is list:
        if not isinstance(value, list):
            raise RunRecordError(f"{path}: expected a list, got {type(value).__name__}")
        return [_value(args[0], v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise RunRecordError(f"{path}: expected an object, got {type(value).__name__}")
        return {k: _value(args[1], v, _join(path, k)) for k, v in value.items()}
    if hint is Any:
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise RunRecordError(f"{path}: expected a string, number or boolean")
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, hint) or (hint is int and isinstance(value, bool)):
        raise RunRecordError(f"{path}: expected {_name(hint)}, got {value!r}")
    return value


def _name(hint) -> str:
    return getattr(hint, "__name__", str(hint))


def write_run_record(run_dir: Path, record: RunRecord) -> Path:
    """Write `record` to run_dir/run.json (temp file + rename) and return the path."""
    path = Path(run_dir) / RUN_FILE
    atomic_write_text(path, json.dumps(record.to_json(), indent=2) + "\n")
    return path


def read_run_record(run_dir: Path) -> RunRecord:
    """The run.json of `run_dir`, checked; a `RunRecordError` names the file and the field at fault, or the
    folder that has none."""
    path = Path(run_dir) / RUN_FILE
    if not path.is_file():
        raise RunRecordError(f"{run_dir}: no {RUN_FILE} (a run made before runs wrote one): {MIGRATE}")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RunRecordError(f"{path}: not JSON ({e})") from None
    try:
        return RunRecord.from_json(obj)
    except RunRecordError as e:
        raise RunRecordError(f"{path}: {e}") from None
