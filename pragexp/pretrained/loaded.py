"""Models kept loaded for the next job of the process: the jobs of a Hydra multirun (the basic launcher) run
one after another in one process, and each would otherwise load the same weights again.

`kept(key, load)` returns the model loaded earlier for `key` (everything that decides the weights as they sit
in memory: name, files, dtype, device, quantization, adapter) or loads it with `load()` and keeps it. A kept
model is frozen (no parameter requires a gradient) and in eval mode, and it is handed out again only while it
is exactly as it was kept: the same modules (LoRA injected into it would add some), the same parameters at the
same addresses, frozen, none of them written in place since (a tensor's version counter: an optimiser step, a
`load_state_dict`), eval mode. Otherwise it is loaded again. A model that a job tunes (`llm.finetune`) is
loaded with `fresh(load)` and never kept: its caller says so.

Every load runs with torch's CPU random state forked, so that a job draws the same random numbers after it
whether its model was loaded or reused. `next_job()` (called by `pragexp.run` as each job starts) marks a
job's boundary: a job that loads a model first lets go of the kept models it has not used itself (an earlier
job's), so that a sweep over several models holds only the current job's.
"""

from __future__ import annotations

import gc
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

log = logging.getLogger(__name__)


@dataclass
class _Kept:
    model: torch.nn.Module
    state: tuple  # `_state(model)` when it was kept
    job: int  # the last job that used it


_kept: dict[str, _Kept] = {}
_job = 0
loads = 0  # models loaded by this process (kept or fresh): what a sweep's test counts


def next_job() -> None:
    """A new job begins: the models the previous job used stay kept until this one loads another."""
    global _job
    _job += 1


def fresh(load: Callable[[], torch.nn.Module]) -> torch.nn.Module:
    """`load()`, the global random state left as it was, never kept (a model a job may change)."""
    global loads
    # Plain tensors even where the first call that needs the model runs in inference mode: a later job may
    # tune the weights it loads, and inference tensors keep no version counter (`_state`).
    with torch.random.fork_rng(devices=[]), torch.inference_mode(False):
        model = load()
    loads += 1
    return model


def kept(key: dict, load: Callable[[], torch.nn.Module], what: str = "model") -> torch.nn.Module:
    """The model kept for `key` (a JSON-able mapping), or `load()` frozen, in eval mode, and kept."""
    name = json.dumps(key, sort_keys=True, default=str)
    entry = _kept.get(name)
    if entry is not None and _state(entry.model) == entry.state:
        entry.job = _job
        log.info("reusing the %s loaded by an earlier job of this process", what)
        return entry.model
    if entry is not None:
        log.warning("the kept %s was changed by a job: loading it again", what)
    _release(lambda e: e is entry or e.job != _job)
    began = time.monotonic()
    model = fresh(load).eval().requires_grad_(False)
    _kept[name] = _Kept(model, _state(model), _job)
    log.info(
        "loaded the %s in %.1f s, kept for the next jobs of this process", what, time.monotonic() - began
    )
    return model


def clear() -> None:
    """Lets go of every kept model."""
    _release(lambda entry: True)


def _release(drop: Callable[[_Kept], bool]) -> None:
    names = [name for name, entry in _kept.items() if drop(entry)]
    for name in names:
        del _kept[name]
    if names:
        gc.collect()  # a finished job's trainer and task hold the model in reference cycles
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def _state(model: torch.nn.Module) -> tuple:
    """What a job could have changed in a model without anyone saying so."""
    # Buffers left out: a rotary embedding may swap its own frequencies as it reads longer texts.
    return (
        model.training,
        tuple(type(m).__name__ for m in model.modules()),
        tuple((p.data_ptr(), p._version, p.requires_grad, p.dtype, p.device) for p in model.parameters()),
    )
