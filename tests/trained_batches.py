"""A record of the examples each rank trains on, for the resume tests (tests/test_preemption_ddp.py): a
callback that appends one line per training batch to `<folder>/rank<r>.jsonl` (epoch, batch index, the batch's
dataset indices), so that a run stopped and resumed in the same folder leaves the batches of both runs in
order. It draws no random numbers: a run with it trains as one without."""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_lightning import Callback


class TrainedBatches(Callback):
    def __init__(self, folder: str):
        self.folder = Path(folder)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        line = {"epoch": trainer.current_epoch, "batch": batch_idx, "indices": batch["index"].tolist()}
        with (self.folder / f"rank{trainer.global_rank}.jsonl").open("a") as out:
            out.write(json.dumps(line) + "\n")


def read(folder: Path, rank: int) -> list[dict]:
    """The batches rank `rank` trained on, in order, as the callback recorded them."""
    return [json.loads(line) for line in (folder / f"rank{rank}.jsonl").read_text().splitlines()]
