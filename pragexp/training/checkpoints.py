"""Lightning's ModelCheckpoint, and beside each checkpoint of a fine-tuned LLM its weights in their own format.

`<checkpoint name>.peft/` next to `<checkpoint name>.ckpt`: peft's adapter folder (`llm.finetune=lora`:
`adapter_config.json`, `adapter_model.safetensors`), which transformers, peft and vLLM's LoRA serving load as
it is, or a transformers model folder (`full`). It is written when the checkpoint is and removed with it
(top-k rotation, the previous `last`). Models without tuned LLM weights write nothing more.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint as LightningModelCheckpoint


def adapter_folder(checkpoint_path: str | Path) -> Path:
    return Path(checkpoint_path).with_suffix(".peft")


class ModelCheckpoint(LightningModelCheckpoint):
    # Lightning's two protected hooks through which every checkpoint file is written and removed (2.x).
    def _save_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        super()._save_checkpoint(trainer, filepath)
        if trainer.is_global_zero:
            trainer.lightning_module.save_adapter(
                adapter_folder(filepath)
            )  # a task without a tuned LLM: nothing

    def _remove_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        super()._remove_checkpoint(trainer, filepath)
        folder = adapter_folder(filepath)
        if trainer.is_global_zero and folder.is_dir():
            shutil.rmtree(folder)
