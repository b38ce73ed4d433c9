"""A tuned LLM's weights, in one place: what a checkpoint says about them, their own folder beside it, and
loading that folder onto its base for evaluation, each checked against the base they were trained on.

- `state`: what a checkpoint of tuned weights says about them (plain data: `llm.finetune`, the LoRA settings
  and the base model's identity: name, revision, SHA-256 of its weights or the hub commit); `check` refuses a
  checkpoint trained on another base or with another `llm.finetune` (`models.llm.PromptedLLM` saves and checks
  it with its weights).
- `save`: the tuned weights in the format transformers, peft and vLLM load as they are: peft's adapter folder
  (lora: `adapter_config.json`, `adapter_model.safetensors`) or a transformers model folder with its tokenizer
  (full), and `pragexp.json` (the `state`) beside them. Where the folder sits beside a checkpoint is the
  checkpoint layout's (`runs.checkpoint.adapter_folder`).
- `folder` and `load`: `llm.adapter=<a .ckpt, or its .peft folder>` puts a LoRA folder on the base `llm=`
  loads, refusing one whose `pragexp.json` names another base (a folder without one, written elsewhere, is
  applied with a warning).
- `identity`: what names a LoRA folder in the backend's identity (the base it claims, its configuration and
  its weights' SHA-256): the same adapter copied to another folder or machine keys the same.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from pragexp.generation.finetuning.finetune import TunableBackend
from pragexp.pretrained import weights_sha256
from pragexp.runs.checkpoint import adapter_folder
from pragexp.utils.durable import replace_folder

STATE_FILE = "pragexp.json"  # the adapter's `state`, beside peft's files (which peft and vLLM ignore)
# adapter_config.json's fields that say where the adapter came from or how peft was asked to load it, not what
# it computes (the base is named by the backend's own identity and checked against `pragexp.json`)
PROVENANCE = ("base_model_name_or_path", "revision", "inference_mode", "auto_mapping", "peft_version")
log = logging.getLogger(__name__)


def state(backend: TunableBackend) -> dict:
    """What a checkpoint of tuned weights says about them (plain data)."""
    return {"finetune": backend.finetune, "lora": backend.lora, "base": backend.base_identity()}


def check(saved: dict, backend: TunableBackend) -> None:
    """Refuse tuned weights trained on another base model, or with another `llm.finetune`."""
    _check_base(saved.get("base"), backend.base_identity(), "this checkpoint's weights")
    if saved.get("finetune") != backend.finetune:
        raise ValueError(f"this checkpoint was trained with llm.finetune={saved.get('finetune')}")


def _check_base(saved: dict | None, here: dict, what: str) -> None:
    if saved != here:
        raise ValueError(
            f"{what} were trained on the base model {saved}, and llm= loads {here}: "
            "fine-tuned weights only fit the base they were trained on"
        )


def save(backend: TunableBackend, folder: str | Path) -> Path:
    """The tuned weights in their own format, with their `state`; written to `.<name>.partial` beside, which
    then replaces the previous folder whole (`utils.durable.replace_folder`). One name per folder, as
    `utils.durable.write_durably`'s partial file: what a killed writer left there is written over by the next
    save of that folder (a temporary folder of a random name stayed beside the checkpoints for good)."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        backend.trainable_model().save_pretrained(tmp)
        if backend.finetune == "full":
            backend.load()[1].save_pretrained(tmp)
        (tmp / STATE_FILE).write_text(json.dumps(state(backend), indent=2) + "\n", encoding="utf-8")
        replace_folder(tmp, folder)  # flushed, then swapped for the previous folder at once
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return folder


def folder(setting: str | Path) -> Path:
    """`llm.adapter`: peft's adapter folder, or a pragexp checkpoint of a tuned LLM (its folder beside it)."""
    path = adapter_folder(setting) if str(setting).endswith(".ckpt") else Path(setting)
    if not (path / "adapter_config.json").is_file():
        raise FileNotFoundError(f"llm.adapter={setting}: no peft adapter at {path} (adapter_config.json)")
    return path


def identity(path: Path) -> dict:
    """What names the LoRA folder at `path` for the answers: the base it says it was trained on (`STATE_FILE`:
    a folder that claims another base is refused when loaded, so its answers are never another's), its
    configuration (less `PROVENANCE`) and the SHA-256 of its weight files (name and content), read in full (a
    LoRA's weights are megabytes)."""
    config = json.loads((path / "adapter_config.json").read_text(encoding="utf-8"))
    saved = path / STATE_FILE
    return {
        "base": json.loads(saved.read_text(encoding="utf-8")).get("base") if saved.is_file() else None,
        "config": {k: v for k, v in config.items() if k not in PROVENANCE},
        "weights": weights_sha256(path),
    }


def load(model, path: Path, base_identity: Callable[[], dict]):
    """`model` (the base) with the LoRA folder at `path` on top, for evaluation; `base_identity` names the
    base (asked only when the folder says what it was trained on)."""
    saved = path / STATE_FILE
    if saved.is_file():
        _check_base(
            json.loads(saved.read_text(encoding="utf-8")).get("base"),
            base_identity(),
            f"the weights at {path}",
        )
    else:
        log.warning(
            "llm.adapter=%s does not say which base it was trained on (no %s): applying it as it is",
            path,
            STATE_FILE,
        )
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(path)).eval()
