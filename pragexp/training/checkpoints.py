"""Lightning's ModelCheckpoint, and beside each checkpoint of a fine-tuned LLM its weights in their own format.

`save_tuned_weights` is the one way a checkpoint gets them (this callback's checkpoints, and the one a stopped job
saves: `training.stopping`): the task writes them (`PragexpTask.save_adapter`: peft's adapter folder for
`llm.finetune=lora`, which transformers, peft and vLLM's LoRA serving load as it is, or a transformers model folder
for `full`) where the checkpoint layout puts them (`utils.checkpoint.adapter_folder`: `<name>.peft/` beside
`<name>.ckpt`). They are removed with their checkpoint (top-k rotation, the previous `last`). Models without
tuned LLM weights write nothing more.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint as LightningModelCheckpoint

from pragexp.tasks.base import PragexpTask
from pragexp.utils.checkpoint import adapter_folder


def save_tuned_weights(trainer: pl.Trainer, checkpoint_path: str | Path) -> None:
    """Beside the checkpoint just saved, the task's tuned LLM weights in their own format (rank 0)."""
    task: PragexpTask = trainer.lightning_module
    if trainer.is_global_zero:
        task.save_adapter(adapter_folder(checkpoint_path))  # a task without a tuned LLM: nothing


class ModelCheckpoint(LightningModelCheckpoint):
    # Lightning's two protected hooks through which every checkpoint file is written and removed (2.x).
    def _save_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        super()._save_checkpoint(trainer, filepath)
        save_tuned_weights(trainer, filepath)

    def _remove_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        super()._remove_checkpoint(trainer, filepath)
        folder = adapter_folder(filepath)
        if trainer.is_global_zero and folder.is_dir():
            shutil.rmtree(folder)
