"""What runs report besides metrics: predictions.jsonl, the config tree, progress lines in logs."""

import io
import json
from pathlib import Path

import pytest
from pytorch_lightning.callbacks import TQDMProgressBar

from pragexp.entry.config_tree import config_tree
from pragexp.run import run
from pragexp.training.callbacks import LogLineProgressBar, progress_bar


@pytest.mark.slow
def test_test_predictions_are_written_with_their_inputs(make_config):
    cfg = make_config(["task=grice_qa", "model=lstm"])
    metrics = run(cfg)
    lines = Path(cfg.paths.output_dir, "predictions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == metrics["test/count"]
    assert [r["index"] for r in records] == list(range(len(records)))
    first = records[0]
    assert {"dialog_id", "question", "answer", "gold", "predicted", "group"} <= set(first)
    assert first["gold"] == first["answer"].strip().lower()  # the gold answer word, from the data
    accuracy = sum(r["gold"] == r["predicted"] for r in records) / len(records)
    assert abs(accuracy - metrics["test/acc"]) < 1e-6


@pytest.mark.slow
def test_classifier_predictions_name_labels(make_config):
    cfg = make_config(["task=circa", "model=majority"])
    metrics = run(cfg)
    records = [
        json.loads(x) for x in Path(cfg.paths.output_dir, "predictions.jsonl").read_text().splitlines()
    ]
    assert len(records) == metrics["test/count"]
    assert {"question", "answer", "context", "gold", "predicted"} <= set(records[0])
    assert len({r["predicted"] for r in records}) == 1  # the majority baseline predicts one class


def test_config_tree_shows_the_groups_and_hides_credentials(make_config):
    from omegaconf import open_dict
    from rich.console import Console

    cfg = make_config(["task=grice_recovery", "model=memnn"])
    with open_dict(cfg):
        cfg.logger = {"wandb": {"api_key": "secret-value", "project": "p"}}
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(config_tree(cfg))
    text = console.file.getvalue()
    assert text.index("task") < text.index("data") < text.index("model")
    assert "MemNNReader" in text and "secret-value" not in text


class _Trainer:
    """What LogLineProgressBar reads from a trainer."""

    sanity_checking = False
    current_epoch = 2
    num_training_batches = 50

    def __init__(self):
        self.max_epochs, self.max_steps, self.global_step = 10, -1, 0
        self.progress_bar_metrics = {"train/loss": 0.5}


def test_log_lines_every_ten_percent_instead_of_a_redraw_per_step():
    stream = io.StringIO()
    bar = LogLineProgressBar(every_percent=10, stream=stream)
    trainer = _Trainer()
    bar._trainer = trainer
    bar.get_metrics = lambda trainer, module: {"train/loss": 0.5}
    for step in range(50):
        bar.on_train_batch_end(trainer, None, None, None, step)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0] == "epoch 2 train 5/50 (10%) train/loss=0.5"
    assert lines[-1].startswith("epoch 2 train 50/50 (100%)")
    assert isinstance(progress_bar(interactive=True), TQDMProgressBar)
    assert isinstance(progress_bar(interactive=False), LogLineProgressBar)
