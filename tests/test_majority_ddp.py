"""The majority baseline counts the whole training split on every DDP rank: each rank reads only its shard,
and the distributed sampler pads the shards by repeating examples, which must not count twice."""

import json
from collections import Counter
from pathlib import Path

import pytest
import torch
from conftest import run_module
from torch.utils.data import DistributedSampler

from pragexp.data.circa.datamodule import CircaDataModule
from pragexp.data.circa.io import CONDITIONAL, LABELS, MIDDLE, NO, YES
from pragexp.models.majority import MajorityClassifier

HEADER = "id\tcontext\tquestion-X\tcanquestion-X\tanswer-Y\tjudgements\tgoldstandard1\tgoldstandard2\n"


def write_circa(path: Path, labels: list[str]) -> None:
    """An invented file in the release's format: one row per label, every annotator agreeing."""
    rows = [
        f"{3000 + i}\tX and Y talk about hobby {i}.\tDo you like hobby {i}?\tI do like hobby {i} .\t"
        f"Answer number {i}.\t{'#'.join([label] * 5)}\t{label}\t{label}\n"
        for i, label in enumerate(labels)
    ]
    path.write_text(HEADER + "".join(rows), encoding="utf-8")


def test_observe_counts_each_index_once():
    model = MajorityClassifier(num_labels=3)
    model.observe(torch.tensor([2, 1]), torch.tensor([0, 1]))
    model.observe(torch.tensor([1, 2, 2]), torch.tensor([2, 0, 0]))  # index 0 again: a padded shard's repeat
    assert model.counts.tolist() == [0, 2, 1]


@pytest.mark.slow
def test_ddp_ranks_with_different_shard_majorities_predict_the_whole_splits(tmp_path):
    # 45 rows: train takes 27 (an odd count: the sampler repeats one example to give 2 ranks 14 each).
    tsv = tmp_path / "circa-data.tsv"
    write_circa(tsv, [YES] * 45)
    dm = CircaDataModule(path=str(tsv))
    dm.setup("fit")
    n_train = len(dm.splits["train"])
    assert n_train == 27
    # The shards Lightning's DistributedSampler gives 2 ranks in epoch 0 (its seed is the run's, 0).
    shards = [list(DistributedSampler(range(n_train), num_replicas=2, rank=r, seed=0)) for r in (0, 1)]
    (repeated,) = set(shards[0]) & set(shards[1])
    only = [[i for i in shard if i != repeated] for shard in shards]
    train_labels = {repeated: MIDDLE}
    train_labels |= dict(zip(only[0], [NO] * 6 + [CONDITIONAL] * 5 + [MIDDLE] * 2, strict=True))
    train_labels |= dict(zip(only[1], [YES] * 6 + [CONDITIONAL] * 5 + [MIDDLE] * 2, strict=True))
    seen = [Counter(train_labels[i] for i in shard) for shard in shards]
    assert [s.most_common(1)[0][0] for s in seen] == [NO, YES]  # each rank alone would predict its own
    whole = Counter(train_labels.values())
    assert whole.most_common(1)[0][0] == CONDITIONAL

    # The same rows in the same order, now with these labels: the split (by row count and seed) is unchanged.
    by_id = {row.id: train_labels[i] for i, (row, _) in enumerate(dm.splits["train"])}
    write_circa(tsv, [by_id.get(str(3000 + i), YES) for i in range(45)])
    relabelled = CircaDataModule(path=str(tsv))
    relabelled.setup("fit")
    names = LABELS["relaxed"]
    assert [(r.id, names[y]) for r, y in relabelled.splits["train"]] == [
        (r.id, train_labels[i]) for i, (r, _) in enumerate(dm.splits["train"])
    ]

    run_dir = tmp_path / "run"
    args = [
        "task=circa",
        "model=majority",
        f"data.path={tsv}",
        "data.batch_size=4",
        "trainer=ddp",
        "trainer.devices=2",
        "trainer.accelerator=cpu",
        "logger=none",
        "callbacks.progress_bar=null",
        "print_config=false",
        f"paths.cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={run_dir}",
    ]
    proc = run_module("pragexp.train", args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    predictions = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 9 and {p["predicted"] for p in predictions} == {CONDITIONAL}
    ckpt = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=False)
    assert ckpt["state_dict"]["net.counts"].tolist() == [whole[name] for name in names]
