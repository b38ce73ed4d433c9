"""What a suite will run, said before it runs, and how far it is while it runs.

A job's test items are counted from its data module, set up as the job will set it up (its files read,
nothing loaded of the model): the items it will score (`data.limit` applied) and the requests they make,
each item's options scored (a likelihood scoring) or one answer generated (`prompt.scoring=generate`) in
one pass; a task that asks more than once per item (the intentions' option orders, replies sampled at
several temperatures) asks that many times more, and the response cache answers what was asked before. Time
left is the time so far per request done, times the requests to go (per job where a job's requests are not
known), counted apart for scored and generated requests: a generated answer costs tens of scored options,
so a suite that scores first would promise minutes where generation takes many. Generating jobs not yet
timed are said as such, not guessed."""

from __future__ import annotations

import time
from dataclasses import dataclass

from hydra.core.hydra_config import HydraConfig
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf, open_dict

from ._jobs import Job


@dataclass
class Count:
    items: int | None = None
    requests: int | None = None
    error: str | None = None  # why the data could not be read (the job would stop the same way)
    generates: bool = False  # answers generated (prompt.scoring=generate), not options scored


def count(config: DictConfig) -> Count:
    """The job's test items and requests, from its data module set up here (its report written nowhere)."""
    data = OmegaConf.create(OmegaConf.to_container(config.data, resolve=False))
    with open_dict(data):
        if "report_dir" in data:
            data.report_dir = None
    hydra, saved = HydraConfig.instance(), HydraConfig.instance().cfg
    try:
        hydra.set_config(config)  # the data config's ${hydra:...} settings, as in the job
        data = OmegaConf.merge(config, {"data": data}).data
        datamodule = instantiate(data)
        datamodule.prepare_data()
        datamodule.setup("test")
        if "test" not in datamodule.datasets:  # as the job would stop: no test split to score
            return Count(error=f"no test split: {datamodule.missing_split_hint('test')}")
        examples = datamodule.scored("test")
    except Exception as error:
        return Count(error=f"{type(error).__name__}: {error}")
    finally:
        hydra.cfg = saved
    generates = OmegaConf.select(config, "prompt.scoring", default=None) == "generate"
    labels = len(getattr(datamodule, "label_names", ()) or ())
    requests = 0
    for example in examples:
        item = example.get("item")
        if item is None:
            return Count(len(examples))  # no prompts (a trained model's batches): no requests to count
        requests += 1 if generates else len(item.options or ()) or labels
    return Count(len(examples), requests, generates=generates)


def _number(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def plan_text(name: str, jobs: list[Job], counts: list[Count], done: set[str], limit: int | None) -> str:
    """The plan: a line per job (its dir, items, requests, the overrides of its entry), the totals."""
    rows = [("job", "items", "requests", "settings")]
    for job, c in zip(jobs, counts, strict=True):
        if job.name in done:
            rows.append((f"{job.name} (finished: skipped)", "-", "-", " ".join(job.overrides)))
        else:
            rows.append((job.name, _number(c.items), _number(c.requests), " ".join(job.overrides)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"  {r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}" for r in rows]
    to_run = [c for j, c in zip(jobs, counts, strict=True) if j.name not in done]
    items = sum(c.items or 0 for c in to_run)
    requests = sum(c.requests or 0 for c in to_run)
    said = f"at most {limit} test items per benchmark (suite.limit={limit})" if limit else "every test item"
    head = f"suite {name}: {len(jobs)} jobs, {len(jobs) - len(done)} to run, {said}"
    foot = f"  to run: {items:,} items, {requests:,} requests (options scored or answers generated, one pass)"
    return "\n".join([head, *lines, foot])


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class Progress:
    """done/total, elapsed and the time left, after each batch of jobs: per kind of request (scored,
    generated), the seconds a request took so far times the requests of that kind to go."""

    def __init__(self, jobs: list[Job], counts: list[Count]):
        self.total, self.done, self.started = len(jobs), 0, time.monotonic()
        self.last = self.started
        known = all(c.requests for c in counts)
        self.weight = {j.name: (c.requests if known else 1) for j, c in zip(jobs, counts, strict=True)}
        self.kind = {j.name: c.generates for j, c in zip(jobs, counts, strict=True)}
        self.spent, self.gone, self.to_go = {}, {}, {}
        for job in jobs:
            kind = self.kind[job.name]
            self.to_go[kind] = self.to_go.get(kind, 0) + self.weight[job.name]

    def line(self, finished: list[Job]) -> str:
        self.done += len(finished)
        now = time.monotonic()
        batch = sum(self.weight[j.name] for j in finished) or 1
        for job in finished:  # a batch's time shared out by its jobs' requests
            kind, weight = self.kind[job.name], self.weight[job.name]
            self.spent[kind] = self.spent.get(kind, 0.0) + (now - self.last) * weight / batch
            self.gone[kind] = self.gone.get(kind, 0) + weight
            self.to_go[kind] -= weight
        self.last = now
        names = ", ".join(j.name for j in finished)
        said = f"suite: {self.done}/{self.total} jobs done ({names}), {duration(now - self.started)} elapsed"
        return said + (self._left() if self.done < self.total else "")

    def _left(self) -> str:
        timed = [k for k, n in self.to_go.items() if n and self.gone.get(k)]
        untimed = [kind for kind in self.kind.values() if self.to_go[kind] and not self.gone.get(kind)]
        seconds = sum(self.spent[k] / self.gone[k] * self.to_go[k] for k in timed)
        left = [f"about {duration(seconds)} left"] if timed else []
        if untimed:
            kind = "generating" if untimed[0] else "scoring"
            jobs = f"{len(untimed)} {kind} job{'s' * (len(untimed) > 1)}"
            left.append(f"{'besides ' * bool(timed)}{jobs} not yet timed")
        return "".join(f", {part}" for part in left)
