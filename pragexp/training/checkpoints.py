"""How checkpoints are written: whole or not at all, the latest always in `last.ckpt`, and beside each
checkpoint of a fine-tuned LLM its weights in their own format.

- `DurableCheckpointIO`, the trainer's writer of every checkpoint file (run.py gives it to the trainer):
  written with `utils.durable.write_durably` (a partial file beside, flushed, renamed onto the checkpoint), so
  a kill or a full disk while saving leaves the previous checkpoint there, loadable, and the error names the
  file. Lightning's own writer serialises to the system's temp folder and moves the file: a rename on one
  filesystem, but where the checkpoints are on another (a node's /tmp and a cluster's shared disk) a copy that
  truncates the previous checkpoint first, and nothing is flushed to the disk.
- `ModelCheckpoint`, Lightning's, writing `last.ckpt` at each of its checkpointing points (each epoch's end,
  or each validation's): Lightning (2.4 on) writes it only where it writes a best checkpoint, so after epochs
  without a better score `last.ckpt` was an older epoch's, and a run resumed from it (`ckpt_path=last`, a
  requeued job) trained those epochs again.
- `save_tuned_weights`, the one way a checkpoint gets a tuned LLM's weights (this callback's checkpoints, and
  the one a stopped job saves: `training.stopping`): the task writes them (`PragexpTask.save_adapter`: peft's
  adapter folder for `llm.finetune=lora`, which transformers, peft and vLLM's LoRA serving load as it is, or a
  transformers model folder for `full`) where the checkpoint layout puts them
  (`runs.checkpoint.adapter_folder`: `<name>.peft/` beside `<name>.ckpt`), a folder that replaces the previous
  one whole (`generation.finetuning.adapters`), before the checkpoint's own file: the checkpoint is what a run
  resumes from, so a kill between the two leaves the previous checkpoint, from which the resumed run trains
  again and writes both (written after it, the kill left a checkpoint beside its previous weights' folder, and
  a run resumed from its last epoch's checkpoint trains nothing and never wrote the folder again). They are
  removed with their checkpoint (top-k rotation, the previous `last`). Models without tuned LLM weights write
  nothing more.
  Lightning saves the score of its latest best checkpoint (`current_score`) in each checkpoint but does not
  put it back when a run resumes: the resumed run's later checkpoints then said None where the run never
  stopped said the score; this one puts it back.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytorch_lightning as pl
import torch
from lightning_fabric.plugins import TorchCheckpointIO
from pytorch_lightning.callbacks import ModelCheckpoint as LightningModelCheckpoint

from pragexp.runs.checkpoint import adapter_folder
from pragexp.tasks.base import PragexpTask
from pragexp.utils.durable import write_durably


class DurableCheckpointIO(TorchCheckpointIO):
    def save_checkpoint(self, checkpoint: dict, path, storage_options=None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__} takes no storage_options")
        write_durably(path, lambda file: torch.save(checkpoint, file))


def save_tuned_weights(trainer: pl.Trainer, checkpoint_path: str | Path) -> None:
    """Beside the checkpoint about to be saved, the task's tuned LLM weights in their own format (rank 0)."""
    task: PragexpTask = trainer.lightning_module
    if trainer.is_global_zero:
        task.save_adapter(adapter_folder(checkpoint_path))  # a task without a tuned LLM: nothing


class ModelCheckpoint(LightningModelCheckpoint):
    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module) -> None:
        super().on_train_epoch_end(trainer, pl_module)
        if self._should_save_on_train_epoch_end(trainer):
            self._save_last_if_older(trainer)

    def on_validation_end(self, trainer: pl.Trainer, pl_module) -> None:
        super().on_validation_end(trainer, pl_module)
        if not self._should_save_on_train_epoch_end(trainer):
            self._save_last_if_older(trainer)

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        if self.dirpath == state_dict.get("dirpath", self.dirpath):  # (as Lightning restores the rest)
            self.current_score = state_dict.get("current_score", self.current_score)

    def _save_last_if_older(self, trainer: pl.Trainer) -> None:
        """`last.ckpt` at this point, unless Lightning has just written it (with a best checkpoint)."""
        if self.save_last and not self._should_skip_saving_checkpoint(trainer):
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    # Lightning's two protected hooks through which every checkpoint file is written and removed (2.x).
    def _save_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        save_tuned_weights(trainer, filepath)  # first: see the module docstring
        super()._save_checkpoint(trainer, filepath)

    def _remove_checkpoint(self, trainer: pl.Trainer, filepath: str) -> None:
        super()._remove_checkpoint(trainer, filepath)
        folder = adapter_folder(filepath)
        if trainer.is_global_zero and folder.is_dir():
            shutil.rmtree(folder)
