"""The run's CSV log (`csv/metrics.csv`, what `pragexp.report`'s training curves read), whole after a resume.

Lightning's CSVLogger deletes a metrics.csv it finds in its folder. A run stopped and resumed in the same
folder (`ckpt_path=last`, as a requeued SLURM job does: `training.stopping`) would so lose every row logged
before the stop, and its curves would start where the resumed run did. `ResumableCSVLogger` keeps them: told
that the run resumes (`resuming`, set by `pragexp.run` before anything is logged), it reads the rows the
stopped run logged and, when the resumed run logs its first row, keeps those of earlier steps (and those of
that step whose metrics the new row does not log again), so that the file holds what the run never stopped
would have logged (`ExactResume` makes the resumed run log the same steps with the same numbers). The rows are
written out at each checkpoint as well as every `flush_logs_every_n_steps`, so a run killed without a word
(SIGKILL, a lost node) leaves every row up to the checkpoint it resumes from. A run that does not resume
starts its file anew, as Lightning's does.
"""

from __future__ import annotations

import csv
import logging

from lightning_fabric.loggers.logger import rank_zero_experiment
from pytorch_lightning.loggers import CSVLogger
from pytorch_lightning.loggers.csv_logs import ExperimentWriter

log = logging.getLogger(__name__)


class ResumableCSVLogger(CSVLogger):
    """Lightning's CSVLogger, the rows of the run it resumes kept (module docstring)."""

    resuming = False  # set before the first log: whether this run goes on from a stopped one in its folder

    def after_save_checkpoint(self, checkpoint_callback) -> None:
        # the rows up to a checkpoint on disk with it: a run killed later (SIGKILL, a node lost) resumes from
        # that checkpoint, and the rows before it are in the file to keep
        self.save()

    @property
    @rank_zero_experiment  # (other ranks get a writer that does nothing, as Lightning's)
    def experiment(self) -> ExperimentWriter:
        if self._experiment is None:
            self._fs.makedirs(self.root_dir, exist_ok=True)
            self._experiment = KeepingWriter(self.log_dir, self.resuming)
        return self._experiment


class KeepingWriter(ExperimentWriter):
    """An ExperimentWriter that, resuming, keeps the stopped run's rows until the resumed run's first one."""

    def __init__(self, log_dir: str, resuming: bool):
        self.earlier: list[dict[str, str]] | None = None
        self.resuming = resuming
        super().__init__(log_dir)

    def _check_log_dir_exists(self) -> None:
        # read before Lightning deletes the file (its own check, called from its __init__)
        if self.resuming and self._fs.isfile(self.metrics_file_path):
            self.earlier = _read_rows(self._fs, self.metrics_file_path)
        super()._check_log_dir_exists()

    def log_metrics(self, metrics_dict: dict, step: int | None = None) -> None:
        super().log_metrics(metrics_dict, step)
        if self.earlier is not None:
            first = self.metrics[-1]
            keys = set(first) - {"step", "epoch"}  # (Lightning adds the epoch to every row)
            kept = [
                row
                for row in self.earlier
                if row["step"] < first["step"] or (row["step"] == first["step"] and not keys & set(row))
            ]
            self.metrics[:0] = kept
            self.earlier = None


def _read_rows(fs, path: str) -> list[dict]:
    """The rows of a metrics.csv as Lightning wrote them (empty cells left out, `step` an int); a row without
    a whole-number step is skipped and counted in the log."""
    rows, skipped = [], 0
    with fs.open(path, "r", newline="") as file:
        for row in csv.DictReader(file):
            cells = {k: v for k, v in row.items() if k is not None and v not in ("", None)}
            step = cells.get("step", "")
            if not step.isdigit():
                skipped += 1
                continue
            rows.append({**cells, "step": int(step)})
    if skipped:
        log.warning("%s: %d rows without a whole-number step were not kept", path, skipped)
    return rows
