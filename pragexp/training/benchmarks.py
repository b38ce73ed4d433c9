"""LLM benchmarks scored on the model being trained: `callbacks.benchmarks.names=[ludwig,hu_pragmatics]`.

While an LLM is fine-tuned (`model=llm llm.finetune=lora|full`, any task), `BenchmarkCurves` scores each named
benchmark before the first step, every `every_n_steps` optimizer steps and after the last one, and logs its
overall figures and its task's declared headline figures as `bench/<name>/<figure>` at that step
(`bench/ludwig/acc`, `bench/ludwig/acc_stderr`, `bench/ludwig/acc_ci95_low`, ...: `metrics.uncertainty`;
`bench/bigtom/joint_acc/forward_belief:initial_belief`) through the run's loggers (CSV: `csv/metrics.csv`;
W&B: curves against `trainer/global_step`); `python -m pragexp.report --figures` draws them beside the task's
own dev curve (`report.training_curves`).

A benchmark is scored as `python -m pragexp.eval task=<name> <overrides>` scores it: its config is composed
from the same groups (conf/task/<name>.yaml, its data and prompt groups), its data module, task, metric and
prompt are built from it, and the task's own `evaluate_batch` scores every test batch. Only the LLM differs:
the model in training, through `StepBackend`, in eval mode and without gradients, its train mode restored
after. Its answers go through the response cache (`paths.cache_dir`) under an identity that names the weights
as they stand (`StepBackend`: LoRA's adapters by their digest, a full fine-tune's weights by the fit and its
step): two weight states never share an answer, and the same adapters always do.

A pass leaves training as it was: every random generator it could draw from (torch's, CUDA's, numpy's,
Python's) is restored after it, so the trained weights are the same with and without the callback. A run
stopped and resumed (`ckpt_path=last`, a requeued job) scores the steps the run never stopped scores, each
once: the step last scored travels in the checkpoint, and a resumed run scores its first step only where the
schedule does and no pass before the stop did (it scored every resumed run's first step, a step off the
schedule too: a curve point the run never stopped has not, and a pass the model was asked anew).
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning import Callback

from pragexp import CONFIG_DIR
from pragexp.tasks.contracts import PromptedModel
from pragexp.utils.contracts import require
from pragexp.utils.io import load_yaml

if TYPE_CHECKING:
    from pragexp.tasks.base import PragexpTask

log = logging.getLogger(__name__)
PREFIX = "bench"


def benchmark_choices() -> list[str]:
    """The task configs that are LLM benchmarks (they build on conf/task/_llm_benchmark.yaml)."""
    found = []
    for path in sorted((Path(CONFIG_DIR) / "task").glob("*.yaml")):
        defaults = (load_yaml(path, {}) or {}).get("defaults") or []
        if "_llm_benchmark" in defaults:
            found.append(path.stem)
    return found


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of the weights that train (name, dtype, shape and bytes of each): what a step's answers rest
    on."""
    digest = hashlib.sha256()
    for name, param in sorted(model.named_parameters(), key=lambda item: item[0]):
        if param.requires_grad:
            data = param.detach().cpu().contiguous().reshape(-1)
            digest.update(f"{name}:{data.dtype}:{tuple(param.shape)}".encode())
            digest.update(data.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


class TunedModel(PromptedModel, Protocol):
    """What the benchmarks read of the LLM in training (`models.llm.PromptedLLM` being fine-tuned has it)."""

    # the in-process backend as fine-tuning uses it (`generation.finetuning.finetune.TunableBackend`)
    tuning: object


class StepBackend:
    """The backend in training as one frozen model (an LLM backend as `generation.backends.base` defines
    them): its calls, under an identity that adds the training settings and the name of the weights as they
    stand (`settle` takes it), so that the response cache keys each step's answers apart. LoRA's weights are
    named by their digest (`weights_digest`: megabytes, so the same adapters answer from the cache in any run,
    a resumed one too); a full fine-tune's by this fit's own random name and its optimizer step: hashing every
    weight would cost more than the pass it keys (bench/bench_weight_digest.py: a ~1B-parameter model's digest
    against a LUDWIG pass). That name is exact: a fit scores each step once (`BenchmarkCurves._score`), its
    weights at a step are one state, and no other fit, a resumed one included (`new_fit`), shares the name;
    its price is that a full fine-tune's passes are never found in the cache by another run."""

    cacheable, finetune = True, "none"  # frozen between two settles: its answers are cached

    def __init__(self, backend):
        self.backend, self.name, self.weights = backend, backend.name, ""
        self.new_fit()

    @property
    def calls(self) -> int:
        return self.backend.calls

    def new_fit(self) -> None:
        """A fit begins (or resumes): its steps' weights get names no earlier fit gave."""
        self.fit = uuid.uuid4().hex

    def settle(self, step: int) -> None:
        """Name the weights as they stand after `step` optimizer steps of this fit."""
        if self.backend.finetune == "lora":
            self.weights = weights_digest(self.backend.trainable_model())
        else:
            self.weights = f"fit {self.fit} step {step}"

    def identity(self) -> dict:
        return {**self.backend.identity(), **self.backend.training_identity(), "weights": self.weights}

    def key_identity(self, method: str) -> dict:
        return {
            **self.backend.key_identity(method),
            **self.backend.training_identity(),
            "weights": self.weights,
        }

    def generate(self, prompts, params) -> list[list[str]]:
        return self.backend.generate(prompts, params)

    def generate_samples(self, prompts, params, sample: int) -> list[str]:
        return self.backend.generate_samples(prompts, params, sample)

    def loglikelihood_many(self, requests):
        return self.backend.loglikelihood_many(requests)

    def chat_text(self, messages: list[dict]) -> str | None:
        return self.backend.chat_text(messages)

    def count_tokens(self, text: str) -> int:
        return self.backend.count_tokens(text)

    def first_tokens(self, text: str, n: int) -> str:
        return self.backend.first_tokens(text, n)


def override_text(key: str, value) -> str:
    """`key=value` as Hydra's command line reads it (lists in brackets, other text quoted)."""

    def text(v) -> str:
        if isinstance(v, bool) or v is None:
            return {True: "true", False: "false", None: "null"}[v]
        if isinstance(v, (int, float)):
            return str(v)
        if isinstance(v, Sequence) and not isinstance(v, str):
            return "[" + ",".join(text(x) for x in v) + "]"
        plain = str(v).replace("/", "").replace(".", "").replace("-", "").replace("_", "").isalnum()
        return str(v) if plain else "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"

    return f"{key}={text(value)}"


def flat_overrides(settings: Mapping | None, prefix: str = "") -> list[str]:
    """A nested mapping ({data: {path: x}}) as overrides (`data.path=x`)."""
    out = []
    for key, value in (settings or {}).items():
        if isinstance(value, Mapping):
            out += flat_overrides(value, f"{prefix}{key}.")
        else:
            out.append(override_text(f"{prefix}{key}", value))
    return out


def compose_benchmark(overrides: list[str]) -> DictConfig:
    """The resolved job config `python -m pragexp.eval <overrides>` runs with; the running job's Hydra state
    (its `HydraConfig`, its initialised Hydra) is left as it was."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    saved = HydraConfig.instance().cfg
    try:
        if GlobalHydra.instance().is_initialized():  # inside @hydra.main: its loader reads the same conf/
            cfg = compose("eval", overrides=overrides, return_hydra_config=True)
        else:
            with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
                cfg = compose("eval", overrides=overrides, return_hydra_config=True)
        HydraConfig.instance().set_config(cfg)  # ${hydra:runtime.choices.task} and the like
        job = OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"])
        OmegaConf.resolve(job)
        return job
    finally:
        HydraConfig.instance().cfg = saved


class Benchmark:
    """One benchmark built once for a run: its data module, its task and the task's model on `backend`."""

    def __init__(self, name: str, cfg: DictConfig, backend: StepBackend):
        self.name = name
        self.data = instantiate(cfg.data)
        self.data.prepare_data()
        self.data.setup("test")
        self.task = instantiate(cfg.task, model=instantiate(cfg.model, llm=backend))
        self.task.net = self.task.build_network(self.data)
        self.task.metrics = self.task.build_metrics(self.data)
        self.task.record_predictions = set()  # figures only: no prediction records are kept
        # the task's declared headline figures, a group's among them
        # (`joint_acc/forward_belief:initial_belief`)
        headline = OmegaConf.select(cfg, "declares.headline", default=None) or []
        self.headline = [str(h["key"]).split("/", 1)[1] for h in headline]

    def score(self) -> dict[str, float]:
        """The overall figures of one pass over the test split and the task's headline figures, each with its
        uncertainty (the other groups' figures are in `pragexp.eval`)."""
        metric = self.task.metrics["test"]
        for batch_idx, batch in enumerate(self.data.test_dataloader()):
            self.task.test_step(batch, batch_idx)
        values = metric.compute()
        metric.reset()
        return {k: float(v) for k, v in values.items() if "/" not in k or self._of_headline(k)}

    def _of_headline(self, key: str) -> bool:
        """A headline figure of a group (`joint_acc/g`) or one of its uncertainty's (`joint_acc_stderr/g`)."""
        name, _, group = key.partition("/")
        return any(
            key == h or (name.startswith(h.split("/")[0] + "_") and h.endswith("/" + group))
            for h in self.headline
        )


@contextmanager
def frozen_pass(module: torch.nn.Module):
    """`module` in eval mode without gradients; afterwards each submodule's mode and every random generator as
    they were (a benchmark's data loader draws its seed from torch's generator)."""
    modes = {m: m.training for m in module.modules()}
    states = random.getstate(), np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        module.eval()
        try:
            yield
        finally:
            for m, training in modes.items():
                m.train(training)
            random.setstate(states[0])
            np.random.set_state(states[1])


class BenchmarkCurves(Callback):
    """`names`: benchmarks (their task= names; empty: off); `every_n_steps`: optimizer steps between passes;
    `overrides`: per benchmark, its settings as `pragexp.eval` takes them ({ludwig: {data: {path: ...}}});
    `output_dir`, `cache_dir`: the run's (a data module's report files go to
    `<output_dir>/benchmarks/<name>`)."""

    def __init__(
        self,
        names: Sequence[str] = (),
        every_n_steps: int = 50,
        overrides: Mapping | None = None,
        output_dir: str | None = None,
        cache_dir: str | None = None,
    ):
        self.names = [str(n) for n in names or ()]
        self.every_n_steps, self.output_dir, self.cache_dir = int(every_n_steps), output_dir, cache_dir
        self.overrides = {str(k): v for k, v in (overrides or {}).items()}
        choices = benchmark_choices() if self.names else []
        unknown = [n for n in [*self.names, *self.overrides] if n not in choices]
        if unknown:
            raise ValueError(
                f"callbacks.benchmarks: unknown benchmark(s) {', '.join(unknown)}; choose among "
                f"{', '.join(choices)}"
            )
        if self.every_n_steps < 1:
            raise ValueError(
                f"callbacks.benchmarks.every_n_steps={every_n_steps}: give a number of steps >= 1"
            )
        self.benchmarks: list[Benchmark] = []
        self.backend: StepBackend | None = None
        self.scored_step: int | None = None
        self.restored: dict | None = None  # the state in the checkpoint a resumed fit goes on from

    def state_dict(self) -> dict:
        return {"scored_step": self.scored_step}

    def load_state_dict(self, state_dict: dict) -> None:
        self.restored = dict(state_dict)

    def _config(self, name: str) -> DictConfig:
        paths = {"output_dir": str(Path(self.output_dir or ".") / "benchmarks" / name)}
        paths.update({"cache_dir": str(self.cache_dir)} if self.cache_dir else {})
        settings = flat_overrides({"paths": paths}) + flat_overrides(self.overrides.get(name))
        return compose_benchmark([f"task={name}", *settings])

    def on_fit_start(self, trainer, pl_module: PragexpTask) -> None:
        if not self.names or self.benchmarks:
            return
        prompted = pl_module.prompted
        if prompted is None or not prompted.learns:
            raise ValueError(
                "callbacks.benchmarks scores LLM benchmarks on the LLM being trained (model=llm "
                f"llm.finetune=lora|full); this run trains {type(pl_module.net).__name__}"
            )
        require(prompted, TunedModel, f"model {type(prompted).__name__}")
        self.backend = StepBackend(prompted.tuning)
        self.benchmarks = [Benchmark(n, self._config(n), self.backend) for n in self.names]

    def on_train_start(self, trainer, pl_module) -> None:
        if self.backend is not None:  # each fit (a resumed one too) names its own weights
            self.backend.new_fit()
        # A new fit scores its first step; a resumed one goes on as the fit it resumes would have.
        restored, self.restored = self.restored, None
        self.scored_step = None if restored is None else restored.get("scored_step")
        if restored is None or trainer.global_step % self.every_n_steps == 0:
            self._score(trainer, pl_module)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if trainer.global_step % self.every_n_steps == 0:
            self._score(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        self._score(trainer, pl_module)

    def _score(self, trainer, pl_module) -> None:
        """Each benchmark once at this step (several batches end at one step under gradient accumulation)."""
        step = trainer.global_step
        if not self.benchmarks or step == self.scored_step:
            return
        self.scored_step = step
        values: dict[str, float] = {}
        with frozen_pass(pl_module):
            self.backend.settle(step)
            for benchmark in self.benchmarks:
                started = time.monotonic()
                figures = benchmark.score()
                figures["seconds"] = time.monotonic() - started
                values.update({f"{PREFIX}/{benchmark.name}/{k}": v for k, v in figures.items()})
        log.info(
            "step %d: %s", step, " ".join(f"{k}={v:.4g}" for k, v in values.items() if k.endswith("/acc"))
        )
        for logger in trainer.loggers:
            logger.log_metrics(values, step=step)
            logger.save()
