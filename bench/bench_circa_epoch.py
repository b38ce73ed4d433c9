"""One Circa training epoch through pragexp (ClassificationTask + Lightning Trainer) against a plain PyTorch
loop.

    python bench/bench_circa_epoch.py [--path circa-data.tsv] [--model minilm|tiny|bert-base-uncased]
                                      [--examples 512] [--batch-size 32] [--repeats 3] [--threads N]

Both sides train the same encoder from the same initial weights, on the same batches in the same
order (CircaDataModule's tokenization and dynamic-padding collate; the training examples are
shuffled once with a fixed seed, then batched in that order, no length sorting), with AdamW at
lr 3e-5 and no gradient clipping or scheduler. Only the epoch is timed (model loading, tokenization
and the Trainer's setup are not), best of ``--repeats`` alternating runs, on wall-clock time and on
the process's CPU time (less sensitive to other jobs on a shared machine; with --threads 1 it is
close to the compute itself). Prints examples/s of each, whether both computed the same losses at
every step, and the ratio pragexp / plain (target <= 1.05). By default the training split of the tests' Circa
file is repeated up to ``--examples`` examples; with the full circa-data.tsv it is used as it is.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pytorch_lightning as pl  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

from pragexp.data.circa.datamodule import CircaDataModule  # noqa: E402
from pragexp.models.bert import BertClassifier  # noqa: E402
from pragexp.tasks.classification import ClassificationTask  # noqa: E402

TARGET = 1.05
SAMPLE = ROOT / "tests" / "fixtures" / "circa" / "circa-data.tsv"  # invented rows in the release's format


class FixedOrderCircaDataModule(CircaDataModule):
    """The training examples in one fixed order, so pragexp and the plain loop see the same batches."""

    def __init__(self, train_examples: list[dict], **kwargs):
        super().__init__(**kwargs)
        self.train_examples = train_examples

    def train_dataloader(self) -> DataLoader:
        return DataLoader(
            self.train_examples, batch_size=self.batch_size, shuffle=False, collate_fn=self.collate_fn()
        )


class EpochTimer(pl.Callback):
    def __init__(self):
        self.seconds = self.cpu_seconds = float("nan")
        self.losses: list[float] = []

    def on_train_epoch_start(self, trainer, pl_module):
        self._start, self._cpu = time.perf_counter(), time.process_time()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if batch_idx == 0:
            torch.manual_seed(1)  # the same dropout masks as the plain loop

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.losses.append(outputs["loss"].item())

    def on_train_epoch_end(self, trainer, pl_module):
        self.seconds, self.cpu_seconds = time.perf_counter() - self._start, time.process_time() - self._cpu


def plain_epoch(model, loader, lr: float) -> tuple[float, float, list[float]]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    model.train()
    losses = []
    start, cpu = time.perf_counter(), time.process_time()
    for step, batch in enumerate(loader):
        if step == 0:
            torch.manual_seed(1)  # the same dropout masks as pragexp's loop
        logits = model(**batch["inputs"])
        loss = F.cross_entropy(logits, batch["label"])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    return time.perf_counter() - start, time.process_time() - cpu, losses


def pragexp_epoch(dm, model_factory, initial_state, lr: float) -> tuple[float, float, list[float]]:
    task = ClassificationTask(
        model=model_factory, optimizer=partial(torch.optim.AdamW, lr=lr, weight_decay=0.01)
    )
    timer = EpochTimer()

    class LoadInitialWeights(pl.Callback):
        def on_fit_start(self, trainer, pl_module):
            pl_module.net.load_state_dict(initial_state)

    trainer = pl.Trainer(
        max_epochs=1,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        limit_val_batches=0,
        num_sanity_val_steps=0,
        callbacks=[LoadInitialWeights(), timer],
    )
    trainer.fit(task, datamodule=dm)
    return timer.seconds, timer.cpu_seconds, timer.losses


def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--path", default=str(SAMPLE))
    p.add_argument("--model", default="minilm", help="model.pretrained: minilm, tiny or a hub name")
    p.add_argument("--labels", default="relaxed", choices=("relaxed", "strict"))
    p.add_argument(
        "--examples", type=int, default=512, help="repeat the sample's training split up to this many"
    )
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    return p.parse_args(argv)


def training_data(args) -> tuple[FixedOrderCircaDataModule, list[dict]]:
    """The sample's training split repeated up to `--examples`, shuffled once, in a fixed-order data
    module."""
    probe = CircaDataModule(path=args.path, labels=args.labels, tokenizer=args.model)
    probe.setup("fit")
    train = probe.datasets["train"]
    if len(train) < args.examples:
        train = [dict(train[i % len(train)], index=i) for i in range(args.examples)]
    random.Random(0).shuffle(train)
    dm = FixedOrderCircaDataModule(
        train, path=args.path, labels=args.labels, tokenizer=args.model, batch_size=args.batch_size
    )
    dm.load_state_dict(probe.state_dict())  # the same tokenizer (for tiny: the same vocabulary)
    dm.setup("fit")
    return dm, train


def best_epochs(args, dm, model_factory, reference, initial_state) -> tuple[dict, dict]:
    """The best wall and CPU seconds of each side over `--repeats` epochs, and each side's losses."""
    best = {(side, clock): float("inf") for side in ("plain", "pragexp") for clock in ("wall", "cpu")}
    losses = {}
    for _ in range(args.repeats):
        model = copy.deepcopy(reference)
        model.load_state_dict(initial_state)
        results = {
            "plain": plain_epoch(model, dm.train_dataloader(), args.lr),
            "pragexp": pragexp_epoch(dm, model_factory, initial_state, args.lr),
        }
        for side, (wall, cpu, side_losses) in results.items():
            best[side, "wall"], best[side, "cpu"] = min(best[side, "wall"], wall), min(best[side, "cpu"], cpu)
            losses[side] = side_losses
    return best, losses


def report(args, train, best, losses) -> None:
    steps = len(losses["plain"])
    assert steps == len(losses["pragexp"]), "the two loops did not run the same number of batches"
    for side in ("plain", "pragexp"):
        print(
            f"{side:8s} best of {args.repeats}: {best[side, 'wall']:.3f}s wall "
            f"({len(train) / best[side, 'wall']:,.1f} examples/s), {best[side, 'cpu']:.3f}s cpu "
            f"({len(train) / best[side, 'cpu']:,.1f} examples/s); first/last loss "
            f"{losses[side][0]:.4f}/{losses[side][-1]:.4f}"
        )
    same = max(abs(a - b) for a, b in zip(losses["plain"], losses["pragexp"], strict=True)) < 1e-4
    print(f"same losses at every step: {same} ({steps} steps)")
    for clock in ("wall", "cpu"):
        ratio = best["pragexp", clock] / best["plain", clock]
        print(
            f"ratio pragexp/plain ({clock}): {ratio:.3f} ({'within' if ratio <= TARGET else 'above'} the "
            f"{TARGET} target)"
        )


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    import logging

    logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)

    dm, train = training_data(args)
    model_factory = partial(BertClassifier, pretrained=args.model)
    torch.manual_seed(0)
    reference = model_factory(num_labels=dm.num_labels, vocab_size=dm.vocab_size)
    initial_state = copy.deepcopy(reference.state_dict())
    tokens = sum(len(dm.tokenizer.encode(e["text"], e.get("text_pair")).ids) for e in train)
    print(
        f"Circa {args.labels}, encoder {args.model}: {len(train)} training examples "
        f"({tokens / len(train):.1f} tokens on average), batch {args.batch_size}, dynamic padding, fixed "
        f"order, {torch.get_num_threads()} torch threads"
    )
    best, losses = best_epochs(args, dm, model_factory, reference, initial_state)
    report(args, train, best, losses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
