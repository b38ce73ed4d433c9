"""One run of a suite: compose its jobs, print the plan, skip what is finished, launch the rest, write the
scorecard (suite_sweeper.py says why a sweeper does this, and in what order)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.core.utils import JobStatus
from omegaconf import DictConfig, OmegaConf

from pragexp.runs.finished import finished_as, finished_overrides, what_runs
from pragexp.utils.io import atomic_write_text

from ._jobs import Job, SuiteError, launch_overrides, limit_of, suite_jobs
from ._plan import Count, Progress, count, plan_text

log = logging.getLogger(__name__)
SCORECARD = "scorecard.md"


class SuiteRun:
    def __init__(self, config: DictConfig, hydra_context, launcher, **settings: Any) -> None:
        self.config, self.launcher, self.settings = config, launcher, settings
        self.loader = hydra_context.config_loader
        self.sweep_dir = Path(str(config.hydra.sweep.dir))
        self.name = str(config.suite.name)

    def _compose(self, overrides: list[str]) -> DictConfig:
        return self.loader.load_sweep_config(self.config, overrides)

    def run(self, arguments: list[str]) -> None:
        jobs = suite_jobs(self.config, arguments, self._compose)
        done = self._finished(jobs)
        counting = self.settings.get("count", True)
        counts = [count(j.config) if counting and j.name not in done else Count() for j in jobs]
        print(plan_text(self.name, jobs, counts, done, limit_of(self.config)), flush=True)
        missing = [(j, c) for j, c in zip(jobs, counts, strict=True) if c.error and j.name not in done]
        if missing:
            said = "\n".join(f"  {j.name}: {c.error}" for j, c in missing)
            raise SuiteError(f"suite {self.name}: the data of {len(missing)} job(s) cannot be read:\n{said}")
        self.sweep_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.sweep_dir / "multirun.yaml", OmegaConf.to_yaml(self.config))
        to_run = [(j, c) for j, c in zip(jobs, counts, strict=True) if j.name not in done]
        failed = self._launch([j for j, _ in to_run], [c for _, c in to_run])
        self._scorecard([j for j in jobs if j.name not in failed])
        if failed:
            said = "\n".join(
                f"  {name} ({self.sweep_dir / name}): {error!r}" for name, error in failed.items()
            )
            raise RuntimeError(f"suite {self.name}: {len(failed)} of {len(jobs)} jobs failed:\n{said}")

    def _finished(self, jobs: list[Job]) -> set[str]:
        """The jobs whose run dir holds a finished run of the same settings (skipped). One of other settings
        stops the suite before anything runs: it would be overwritten."""
        done = set()
        for job in jobs:
            same = finished_as(self.sweep_dir / job.name, job.overrides)
            if same is False:
                found = finished_overrides(self.sweep_dir / job.name)
                raise SuiteError(
                    f"{self.sweep_dir / job.name} holds a finished run of other settings ({' '.join(found)}; "
                    f"this suite's: {' '.join(what_runs(job.overrides))}): give the suite another "
                    "hydra.sweep.dir=..., or move that run away"
                )
            if same:
                done.add(job.name)
        return done

    def _batches(self, jobs: list[Job]) -> list[list[Job]]:
        batch = self.settings.get("batch")
        if batch is None:  # the basic launcher runs its jobs one by one anyway: progress after each
            basic = str(self.config.hydra.launcher.get("_target_", "")).endswith("BasicLauncher")
            batch = 1 if basic else max(len(jobs), 1)
        return [jobs[i : i + int(batch)] for i in range(0, len(jobs), int(batch))]

    def _launch(self, jobs: list[Job], counts: list[Count]) -> dict[str, BaseException]:
        """Run the jobs through the launcher; {job name: its error} of those that failed."""
        progress, failed, number = Progress(jobs, counts), {}, 0
        for batch in self._batches(jobs):
            overrides = [launch_overrides(job, self.sweep_dir) for job in batch]
            returns = self.launcher.launch(overrides, initial_job_idx=number)
            number += len(batch)
            for job, ret in zip(batch, returns, strict=True):
                if ret.status != JobStatus.COMPLETED:
                    failed[job.name] = ret._return_value  # its exception (return_value would raise it)
                    log.error(f"suite {self.name}: job {job.name} failed: {failed[job.name]!r}")
            print(progress.line(batch), flush=True)
        return failed

    def _scorecard(self, jobs: list[Job]) -> None:
        """The scorecard of the suite's finished runs, in the sweep dir and printed."""
        from pragexp.report import find_runs
        from pragexp.report import scorecard as card

        dirs = [self.sweep_dir / j.name for j in jobs if (self.sweep_dir / j.name / "metrics.json").is_file()]
        if not dirs:
            return
        limit = limit_of(self.config)
        said = (
            f"at most {limit} test items per benchmark (suite.limit={limit})" if limit else "every test item"
        )
        head = f"# Suite {self.name}\n\n{len(dirs)} runs in {self.sweep_dir}, {said}.\n\n"
        text = head + card.markdown(card.build(find_runs(dirs)))
        atomic_write_text(self.sweep_dir / SCORECARD, text)
        print(text, flush=True)
        print(f"suite {self.name}: the scorecard is in {self.sweep_dir / SCORECARD}", flush=True)
