"""Hydra callbacks (`hydra.callbacks` in conf/launcher/): they act around each job of a launcher."""

from __future__ import annotations

import os
from pathlib import Path

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
