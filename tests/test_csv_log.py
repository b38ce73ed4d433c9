"""The run's CSV log after a resume (pragexp/training/csv_log.py): the stopped run's rows are kept up to where
the resumed run goes on, a run that does not resume starts anew (as Lightning's CSVLogger does), and the rows
reach the disk at each checkpoint. The whole path, stopped and resumed runs against the run never stopped, is
in tests/test_preemption.py."""

from __future__ import annotations

import csv
import logging

from pragexp.training.csv_log import ResumableCSVLogger


def rows(folder) -> list[dict[str, str]]:
    with open(folder / "csv" / "metrics.csv", newline="") as file:
        return [{k: v for k, v in row.items() if v} for row in csv.DictReader(file)]


def stopped_run(folder) -> None:
    """What a run stopped at step 12 left: train loss every 4 steps, a validation at step 8 (after which the
    checkpoint was saved) and the train row of step 12, logged after it."""
    logger = ResumableCSVLogger(folder, name="csv", version="")
    for step in (0, 4, 8):
        logger.log_metrics({"train/loss": 1.0 / (step + 1)}, step)
    logger.log_metrics({"val/acc": 0.5, "epoch": 0}, 8)
    logger.log_metrics({"train/loss": 0.25}, 12)
    logger.save()


def resumed(folder, resuming: bool) -> ResumableCSVLogger:
    logger = ResumableCSVLogger(folder, name="csv", version="")
    logger.resuming = resuming
    return logger


def test_a_resumed_run_keeps_the_rows_logged_before_the_step_it_goes_on_from(tmp_path):
    stopped_run(tmp_path)
    logger = resumed(tmp_path, resuming=True)
    logger.log_metrics({"train/loss": 0.25}, 12)  # the resumed run logs step 12 again, then goes on
    logger.log_metrics({"train/loss": 0.125}, 16)
    logger.save()
    assert rows(tmp_path) == [
        {"step": "0", "train/loss": "1.0"},
        {"step": "4", "train/loss": "0.2"},
        {"step": "8", "train/loss": str(1.0 / 9)},
        {"step": "8", "val/acc": "0.5", "epoch": "0"},
        {"step": "12", "train/loss": "0.25"},  # once
        {"step": "16", "train/loss": "0.125"},
    ]


def test_rows_of_the_first_step_that_the_resumed_run_does_not_log_again_are_kept(tmp_path):
    """A resume inside a validation runs that validation again: its first row is the validation's, at the
    step of the stopped run's train row, which no one logs again."""
    stopped_run(tmp_path)
    logger = resumed(tmp_path, resuming=True)
    logger.log_metrics({"val/acc": 0.75, "epoch": 1}, 12)
    logger.save()
    assert rows(tmp_path)[-2:] == [
        {"step": "12", "train/loss": "0.25"},
        {"step": "12", "val/acc": "0.75", "epoch": "1"},
    ]


def test_a_run_that_does_not_resume_starts_its_file_anew(tmp_path):
    stopped_run(tmp_path)
    logger = resumed(tmp_path, resuming=False)
    logger.log_metrics({"train/loss": 2.0}, 0)
    logger.save()
    assert rows(tmp_path) == [{"step": "0", "train/loss": "2.0"}]


def test_a_row_without_a_whole_number_step_is_skipped_and_counted(tmp_path, caplog):
    stopped_run(tmp_path)
    path = tmp_path / "csv" / "metrics.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:2], lines[2].replace(",4,", ",four,"), *lines[3:]]) + "\n")
    logger = resumed(tmp_path, resuming=True)
    with caplog.at_level(logging.WARNING):
        logger.log_metrics({"train/loss": 0.125}, 16)
    logger.save()
    assert [r["step"] for r in rows(tmp_path)] == ["0", "8", "8", "12", "16"]
    assert f"{path}: 1 rows without a whole-number step were not kept" in caplog.text


def test_the_rows_reach_the_disk_with_each_checkpoint(tmp_path):
    logger = ResumableCSVLogger(tmp_path, name="csv", version="")
    logger.log_metrics({"train/loss": 1.0}, 0)
    assert not (tmp_path / "csv" / "metrics.csv").exists()  # Lightning writes every 100 steps ...
    logger.after_save_checkpoint(None)  # ... and now at each checkpoint too
    assert rows(tmp_path) == [{"step": "0", "train/loss": "1.0"}]
