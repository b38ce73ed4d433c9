"""The one module that knows how a pragexp checkpoint is laid out; nothing else reads or writes
pragexp's extras in a `.ckpt`.

A checkpoint is Lightning's dict plus, under "pragexp":

    {"format": 2, "task": "<task class>", "task_name": "<task= choice, e.g. circa>",
     "model": {<the model's config, `_target_` and all>},
     "encoder": {"prefix": "net.encoder.", "pretrained": "minilm"} | None}

`task_name` says which task the weights were trained for: `check_task` refuses them for another (a Circa
checkpoint given to task=nli), and warns where a task trained outside `pragexp.run` left it empty. A file of
another format is refused, naming its format: one of an older pragexp is trained again.

`encoder` says where a pretrained (transformers) encoder's weights sit in `state_dict`, so any
checkpoint that has one can seed another run (`model.init_ckpt=`). Lightning stores each data
module's `state_dict()` under the data module's class name (vocabularies as lists of words,
tokenizers as JSON strings).

Beside a checkpoint of a tuned LLM, `<name>.peft/` next to `<name>.ckpt` holds its weights in their own
format (`adapter_folder`; written and loaded by `generation.finetuning.adapters`): peft's adapter folder,
which transformers, peft and vLLM load as it is.

Checkpoints are data, never code: everything here is loaded with `torch.load(weights_only=True)`,
which only rebuilds tensors, numbers, strings, lists, tuples and dicts; a file holding any other
pickled object is refused with a clear error before any of it runs. `check_plain` makes sure
pragexp never writes such a file in the first place.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

log = logging.getLogger(__name__)

FORMAT = 2
EXTRAS = "pragexp"
NET_PREFIX = "net."  # where a task keeps its network in state_dict
_PLAIN = (torch.Tensor, str, int, float, bool, type(None))
ADAPTER_SUFFIX = ".peft"


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the setting and the file."""


@dataclass
class PragexpCheckpoint:
    path: Path
    format: int
    task: str | None  # the task's class
    task_name: str | None  # the task= choice it was trained with (None: trained outside pragexp.run)
    model_config: dict | None
    encoder: dict | None  # {"prefix", "pretrained"}
    state_dict: dict[str, torch.Tensor]
    datamodule_states: dict[str, dict] = field(default_factory=dict)
    setting: str = "ckpt_path"  # the config key the path came from, for messages

    def datamodule_state(self, class_name: str | None = None) -> dict:
        """The state a data module saved (by its class name; the only one when None), or {}."""
        if class_name is not None:
            return self.datamodule_states.get(class_name) or {}
        states = list(self.datamodule_states.values())
        return states[0] if len(states) == 1 else {}

    def check_task(self, task_name: str) -> None:
        """Refuses weights trained for another task, naming both; warns when the file does not say."""
        if self.task_name is None:
            log.warning(
                "%s=%s does not say which task it was trained for (trained outside pragexp.run): "
                "using it for task=%s",
                self.setting,
                self.path,
                task_name,
            )
        elif self.task_name != task_name:
            raise CheckpointError(
                f"{self.setting}={self.path}: trained for task={self.task_name}, not task={task_name}; pass "
                "a "
                f"checkpoint of task={task_name}, or run task={self.task_name} (to start {task_name} from "
                "its "
                "encoder, use model.init_ckpt=)"
            )

    def weights(self, prefix: str) -> dict[str, torch.Tensor]:
        """The tensors under `prefix` (e.g. `net.`), prefix removed."""
        return {k[len(prefix) :]: v for k, v in self.state_dict.items() if k.startswith(prefix)}

    def network_weights(self) -> dict[str, torch.Tensor]:
        return self.weights(NET_PREFIX)

    def encoder_weights(self) -> dict[str, torch.Tensor]:
        """The pretrained encoder's tensors, wherever the task kept it."""
        if not self.encoder:
            raise CheckpointError(
                f"{self.setting}={self.path}: holds no pretrained encoder "
                f"(model {(self.model_config or {}).get('_target_')}); start from a model=bert checkpoint"
            )
        return self.weights(self.encoder["prefix"])

    def tokenizer_json(self) -> str | None:
        """The subword tokenizer a data module kept (JSON), if any."""
        for state in self.datamodule_states.values():
            if isinstance(state, Mapping) and state.get("tokenizer"):
                return state["tokenizer"]
        return None


def adapter_folder(checkpoint_path: str | Path) -> Path:
    """Where a checkpoint's tuned LLM weights sit in their own format: `<name>.peft/` beside `<name>.ckpt`."""
    return Path(checkpoint_path).with_suffix(ADAPTER_SUFFIX)


def load_plain(path: str | Path, setting: str = "ckpt_path") -> dict:
    """torch.load(weights_only=True) with errors that say what is wrong with the file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{setting} not found: {path}")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except pickle.UnpicklingError as err:
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError(
            f"{setting}={path}: refused. The file holds pickled Python objects, not only data "
            "(tensors, numbers, strings, lists, dicts); pragexp loads checkpoints as data only, so "
            "no code inside one ever runs. If pragexp wrote it before checkpoint format "
            f"{FORMAT}, train it again. ({detail})"
        ) from None
    except (RuntimeError, EOFError, OSError) as err:
        raise CheckpointError(f"{setting}={path}: not a readable checkpoint ({err})") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), Mapping):
        raise CheckpointError(f"{setting}={path}: not a Lightning checkpoint (no state_dict)")
    return checkpoint


def read(path: str | Path, setting: str = "ckpt_path") -> PragexpCheckpoint:
    """A pragexp checkpoint's weights and extras; a file of another format is refused, naming it."""
    checkpoint = load_plain(path, setting)
    extras = checkpoint.get(EXTRAS)
    if not isinstance(extras, Mapping):
        raise CheckpointError(
            f"{setting}={path}: a Lightning checkpoint without pragexp's extras (model config); "
            "was it written by pragexp.train?"
        )
    version = extras.get("format", 1)  # format 1 wrote none
    if version != FORMAT:
        newer = isinstance(version, int) and version > FORMAT
        raise CheckpointError(
            f"{setting}={path}: written in checkpoint format {version}; this pragexp reads format {FORMAT} "
            + ("only: update pragexp" if newer else "only: train it again with this pragexp")
        )
    return PragexpCheckpoint(
        path=Path(path),
        format=version,
        task=extras.get("task"),
        task_name=extras.get("task_name"),
        model_config=extras.get("model"),
        encoder=extras.get("encoder"),
        state_dict=dict(checkpoint["state_dict"]),
        datamodule_states={
            k: v for k, v in checkpoint.items() if k.endswith("DataModule") and isinstance(v, Mapping)
        },
        setting=setting,
    )


def write_extras(
    checkpoint: dict, task: str, task_name: str | None, model_config: dict | None, net: nn.Module | None
) -> None:
    """Adds pragexp's extras to a checkpoint Lightning is about to save, and checks that the
    whole checkpoint is plain data (so that it loads with weights_only=True)."""
    checkpoint[EXTRAS] = {
        "format": FORMAT,
        "task": task,
        "task_name": task_name,
        "model": model_config,
        "encoder": _find_encoder(net, model_config),
    }
    check_plain(checkpoint)


def check_plain(obj, where: str = "checkpoint") -> None:
    """Raises TypeError naming the first value that is not plain data."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(key, (str, int)):
                raise TypeError(f"{where}: key {key!r} is a {type(key).__name__}, not a string or number")
            check_plain(value, f"{where}[{key!r}]")
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            check_plain(value, f"{where}[{i}]")
    elif not isinstance(obj, _PLAIN):
        raise TypeError(
            f"{where} is a {type(obj).__name__}: checkpoints hold plain data only "
            "(tensors, numbers, strings, lists, dicts)"
        )


def _find_encoder(net: nn.Module | None, model_config: dict | None) -> dict | None:
    """Where the first transformers model inside the task's network sits, if there is one."""
    if net is None:
        return None
    from transformers import PreTrainedModel

    for name, module in net.named_modules():
        if isinstance(module, PreTrainedModel):
            prefix = NET_PREFIX + (f"{name}." if name else "")
            return {"prefix": prefix, "pretrained": (model_config or {}).get("pretrained")}
    return None
