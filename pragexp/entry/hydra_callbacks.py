"""Hydra callbacks (`hydra.callbacks` in conf/launcher/): they act around each job of a launcher."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

from hydra.core.utils import JobStatus
from hydra.experimental.callback import Callback
from omegaconf import DictConfig


class LinkSubmititLogs(Callback):
    """In a job that submitit started, links `<job dir>/.submitit` to the job's submitit folder (its
    stdout and stderr logs, the pickled call and its result), so each job's logs sit beside its outputs.
    The link is relative: a sweep dir moved or copied whole keeps it working."""

    def on_job_start(self, config: DictConfig, **kwargs) -> None:
        if "SUBMITIT_EXECUTOR" not in os.environ:  # submitit sets it in the jobs it starts
            return
        import submitit

        job = submitit.JobEnvironment()
        if job.global_rank != 0:  # every task of a multi-task job runs this; one link is enough
            return
        link = Path(config.hydra.runtime.output_dir) / ".submitit"
        target = os.path.relpath(job.paths.folder, link.parent)
        if link.is_symlink() and os.readlink(link) == target:
            return  # a requeued job: already linked
        tmp = link.with_name(f".submitit.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target, target_is_directory=True)
        os.replace(tmp, link)


class ReportFailedJob(Callback):
    """In a job that submitit started and whose task raised: Hydra returns the error to the sweep's process
    as the job's result, and nothing of it reaches the job's own log. This writes its traceback to the
    job's stderr log and adds that log's last lines to the error, so the sweep's process, which raises
    it and exits non-zero, shows where and how the job ended (a job that SLURM killed is reported by
    submitit, with the job's state and its stderr). A pruned Optuna trial is not a failure."""

    TAIL = 20

    def on_job_end(self, config: DictConfig, job_return, **kwargs) -> None:
        error = getattr(job_return, "_return_value", None)
        if job_return.status != JobStatus.FAILED or "SUBMITIT_EXECUTOR" not in os.environ:
            return
        if type(error).__name__ == "TrialPruned":
            return
        import submitit

        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        sys.stderr.flush()
        path = Path(submitit.JobEnvironment().paths.stderr)
        tail = path.read_text(errors="replace").splitlines()[-self.TAIL :] if path.is_file() else []
        note = f"job {config.hydra.job.num} failed; the end of its log {path}:\n" + "\n".join(tail)
        if hasattr(error, "add_note"):  # Python 3.11+: printed with the error (pickled with it, too)
            error.add_note(note)
        else:
            print(note, file=sys.stderr)
