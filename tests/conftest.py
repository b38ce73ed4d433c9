"""Shared test helpers: compose configs as the command line would, with tiny settings."""

from __future__ import annotations

import atexit
import copy
import functools
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import forked_runs
import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf, open_dict
from slurm_cluster import slurm, slurm_cluster  # noqa: F401  (fixtures: a one-node SLURM cluster)
from small_disk import small_disk  # noqa: F401  (fixture: a full disk, a small tmpfs)

from pragexp.data.releases.resolver import register as register_release_resolver

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
FIXTURES = ROOT / "tests" / "fixtures"  # small invented files the tests ship, in the released formats
GRICE_FIXTURE = FIXTURES / "grice" / "impl_dial_sample.json"
CIRCA_FIXTURE = FIXTURES / "circa" / "circa-data.tsv"
INTENTIONS_FIXTURE = FIXTURES / "intentions" / "hu_gpt4augmented_turn2_data.csv"
PRAGMATICQA_FIXTURE = FIXTURES / "pragmaticqa"  # train/val/test.jsonl and PragmatiCQA-sources/
HU_FIXTURE = FIXTURES / "hu_pragmatics"  # prompts/ and human_data/fj/, as the repository lays them out
LUDWIG_FIXTURE = FIXTURES / "ludwig"  # the release's data/ folder
BIGBENCH_FIXTURE = FIXTURES / "bigbench_implicatures" / "implicatures.jsonl"
# Real excerpts of the public releases, beside a developer's checkout (not in a user's clone): the
# conformance tests read them when they are there and are skipped, saying why, when they are not.
SAMPLES = ROOT.parent / "shared" / "samples"
needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"real-data excerpts not present ({SAMPLES}): conformance test skipped"
)

# The tests' data folder is their own, empty (a test that needs a fetched release makes one), and no mirror.
os.environ["PRAGEXP_DATA_DIR"] = tempfile.mkdtemp(prefix="pragexp-data-")
atexit.register(shutil.rmtree, os.environ["PRAGEXP_DATA_DIR"], ignore_errors=True)
os.environ.pop("PRAGEXP_DATA_MIRROR", None)
register_release_resolver()  # as the entry points do: `${release:NAME}` in conf/data/

for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(var, "1")
# Under pytest-xdist each worker gets its share of the cores for torch's threads (and so do the processes it
# starts): two workers with every core each would fight over them. Set before torch is imported.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ:
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, _threads)
os.environ.setdefault("WANDB_MODE", "offline")
# A .gguf model (SmolLM2) is converted once per test session, in a temporary folder, never the user's cache.
if "PRAGEXP_MODEL_CACHE" not in os.environ:
    os.environ["PRAGEXP_MODEL_CACHE"] = tempfile.mkdtemp(prefix="pragexp-models-")
    atexit.register(shutil.rmtree, os.environ["PRAGEXP_MODEL_CACHE"], ignore_errors=True)


@pytest.fixture(autouse=True)
def models_kept_per_test():
    """A test's models are its own: a model kept for the next job of the process (`pretrained.loaded`) is let
    go after each test, so that a test that replaces a loader (an engineered tiny model) sees its own."""
    yield
    from pragexp.pretrained import loaded

    loaded.clear()


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """Tests marked `gpu` run where torch sees a CUDA device and are skipped, saying so, elsewhere (as
    lightning-hydra-template's RunIf does); `slow` ones run in `make test` and not in `make test-fast`.

    Under pytest-xdist (`--dist loadgroup`, as `make test` runs) a test that shares something costly with
    others runs on the same worker as they do: the tests marked `slurm` (one cluster serves them all) and
    the tests of a module with a module-scoped fixture (built once, not once per worker). The modules of long
    tests are handed out first (those with cluster tests, then those with `slow` ones; each module in its own
    order), so that no worker is left with a long test at the end."""
    import torch

    def module(item) -> str:
        return item.nodeid.split("::")[0]

    rank: dict[str, int] = {}
    for item in items:
        kind = 0 if "slurm" in item.keywords else 1 if "slow" in item.keywords else 2
        rank[module(item)] = min(kind, rank.get(module(item), 2))
        if kind == 0:
            item.add_marker(pytest.mark.xdist_group("slurm"))
        elif _uses_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(module(item)))
    items.sort(key=lambda item: rank[module(item)])  # stable: each module's own order is kept
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch sees none): runs where one is")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


class _GroupsTaken:
    """On a pytest-xdist worker of `--dist loadgroup`: a test whose group did not take (pytest-xdist renames a
    grouped test's node id `<id>@<group>`; under a pytest it does not know, it silently cannot) stops the run,
    as the tests that share a cluster or a module's fixture would run apart."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        lost = [
            item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid
        ]
        if lost:
            raise pytest.UsageError(
                f"pytest-xdist's --dist loadgroup ignored the groups of {len(lost)} tests ({lost[0]}, ...) "
                f"under pytest {pytest.__version__}: install the versions pyproject.toml's dev extra names"
            )


def pytest_configure(config):
    if getattr(config.option, "loadgroup", False):
        config.pluginmanager.register(_GroupsTaken(), "pragexp-xdist-groups-taken")


def _uses_module_fixture(item) -> bool:
    """Whether a test uses a fixture built once per module."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(fixturedef.scope == "module" for chain in defs for fixturedef in chain)


def predictions(cfg) -> list[dict]:
    """The prediction records a run wrote (predictions.jsonl in its output folder)."""
    return [
        json.loads(line) for line in Path(cfg.paths.output_dir, "predictions.jsonl").read_text().splitlines()
    ]


def choices(group: str) -> list[str]:
    """The options of a config group as the command line names them (`_name` files are shared bases)."""
    return sorted(p.stem for p in (CONF / group).glob("*.yaml") if not p.stem.startswith("_"))


# Settings that make each data source and model train in seconds, keyed by config choice.
# A new data/ or model/ config adds its entry here (an entry may be empty).
TINY_DATA = {
    "grice": [
        "data.generate.train_dialogs=60",
        "data.generate.val_dialogs=20",
        "data.generate.test_dialogs=20",
    ],
    "grice_official": [],
    "circa": [
        f"data.path={CIRCA_FIXTURE}",
        "data.batch_size=8",
        "data.tiny_vocab_size=300",
    ],
    "nli": [
        f"data.train_path={FIXTURES / 'transfer' / 'multinli_1.0_train.jsonl'}",
        f"data.test_path={FIXTURES / 'transfer' / 'MNLI_dev_matched.tsv'}",
        "data.dev_fraction=0.2",
        "data.batch_size=8",
        "data.tiny_vocab_size=300",
    ],
    "boolq": [
        f"data.train_path={FIXTURES / 'transfer' / 'boolq_train.jsonl'}",
        f"data.test_path={FIXTURES / 'transfer' / 'boolq_dev.jsonl'}",
        "data.dev_fraction=0.2",
        "data.batch_size=8",
        "data.tiny_vocab_size=300",
    ],
    "intentions": [f"data.path={INTENTIONS_FIXTURE}"],
    "hu_pragmatics": [f"data.path={HU_FIXTURE / 'prompts'}"],
    "ludwig": [f"data.path={LUDWIG_FIXTURE}"],
    "bigbench_implicatures": [f"data.path={BIGBENCH_FIXTURE}"],
    # the authors' protocol draws 5 batches of 50 stories: the fixture's seven stories give 5 batches of one
    "opentom": [f"data.path={FIXTURES / 'opentom'}", "data.batch_stories=1"],
    "pragmaticqa": [
        f"data.path={PRAGMATICQA_FIXTURE}",
        "data.corpus=sources",
        f"data.sources_path={PRAGMATICQA_FIXTURE / 'PragmatiCQA-sources'}",
        "data.passage_words=20",
        "data.max_query_tokens=48",
        "data.max_input_length=96",
        "data.max_target_length=48",
        "data.tiny_vocab_size=600",
        "data.eval_batch_size=4",
        "retriever.query_encoder=tiny",
        "retriever.passage_encoder=tiny",
        "retriever.max_query_length=64",
        "retriever.max_passage_length=64",
        "metrics.q_scorer=tiny",
        "metrics.recall_ks=[1,5]",
    ],
}
TINY_MODEL = {
    "lstm": ["model.embed_dim=16", "model.hidden_dim=16", "model.fusion_dim=32"],
    "memnn": ["model.embed_dim=16", "model.hidden_dim=16", "model.fusion_dim=32"],
    "entnet": ["model.embed_dim=16", "model.hidden_dim=16", "model.fusion_dim=32", "model.slots=4"],
    "relnet": ["model.embed_dim=16", "model.hidden_dim=16", "model.fusion_dim=32", "model.relation_dim=32"],
    "lstm_gen": [
        "model.reader.embed_dim=16",
        "model.reader.hidden_dim=16",
        "model.reader.fusion_dim=32",
        "model.embed_dim=16",
        "model.decoder_dim=32",
    ],
    "memnn_gen": [
        "model.reader.embed_dim=16",
        "model.reader.hidden_dim=16",
        "model.reader.fusion_dim=32",
        "model.embed_dim=16",
        "model.decoder_dim=32",
    ],
    "memnn_inf": [
        "model.inference_ckpt=null",
        "model.embed_dim=16",
        "model.hidden_dim=16",
        "model.fusion_dim=32",
        "model.max_explicit_len=8",
        "model.inference_model.reader.embed_dim=16",
        "model.inference_model.reader.hidden_dim=16",
        "model.inference_model.reader.fusion_dim=32",
        "model.inference_model.embed_dim=16",
        "model.inference_model.decoder_dim=32",
    ],
    "bert": ["model.pretrained=tiny"],
    "majority": [],
    "none": [],
    "fid": ["model.pretrained=tiny"],
    "oracle": [],
    "lead": [],
    "llm": ["llm=tiny"],
    "transferred": [],  # its checkpoint comes from a tiny Circa run the test makes first
}

# A one-epoch LSTM run on the CPU, quiet: the launchers' and sweeps' trainings (tests/test_cluster.py,
# test_optuna_sweeps.py, test_multinode_fake_slurm.py)
FAST = [
    "model=lstm",
    "logger=none",
    "trainer.max_epochs=1",
    "trainer.accelerator=cpu",
    "callbacks.progress_bar=null",
    "print_config=false",
    *TINY_MODEL["lstm"],
]


def encoded_example(datamodule, split: str, i: int) -> tuple[list[int], list[int]]:
    """Token ids and type ids of one text example, as its batch gives them (padding removed)."""
    inputs = datamodule.collate_fn()([datamodule.datasets[split][i]])["inputs"]
    keep = inputs["attention_mask"][0].bool()
    return inputs["input_ids"][0][keep].tolist(), inputs["token_type_ids"][0][keep].tolist()


def compose_config(overrides: list[str], output_dir: Path, config_name: str = "train") -> DictConfig:
    """The config `python -m pragexp.<config_name> <overrides>` would run, writing into output_dir: a copy of
    the one composition of these overrides (Hydra takes about half a second a composition, and the suite
    composes the same lists again and again)."""
    cfg = copy.deepcopy(_composed(tuple(overrides), config_name, os.getcwd()))
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.output_dir = str(output_dir)
    return cfg


RELEASE_DEFAULTS = ("${release:", "${release_unless:")  # conf/data/'s defaults of a fetched release


def fetched_paths_replaced(cfg: DictConfig, by: str = "/not/fetched") -> DictConfig:
    """`cfg` with each `${release:...}` default of `data` (a fetched release's path, conf/data/) replaced by
    `by`: the tests' data folder is empty, and tests/test_release_paths.py checks those defaults."""
    if "data" not in cfg:
        return cfg
    data = OmegaConf.to_container(cfg.data, resolve=False)
    for key, value in data.items():
        if isinstance(value, str) and value.startswith(RELEASE_DEFAULTS):
            data[key] = by
        elif isinstance(value, list) and any(str(v).startswith(RELEASE_DEFAULTS) for v in value):
            data[key] = [by if str(v).startswith(RELEASE_DEFAULTS) else v for v in value]
    with open_dict(cfg):
        cfg.data = data
    return cfg


@functools.lru_cache(maxsize=512)
def _composed(overrides: tuple[str, ...], config_name: str, cwd: str) -> DictConfig:
    """One Hydra composition, kept for the process: never handed out (the caller copies it), so no test sees
    another's changes. `cwd` is part of the key: Hydra records the working directory in the config."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name, overrides=list(overrides), return_hydra_config=True)


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def make_config(tmp_path, cache_dir):
    """make_config(overrides) -> the composed config with tiny data (and model), outputs under tmp_path."""

    def make(overrides=(), name: str = "train", out: str = "run", tiny_model: bool = True) -> DictConfig:
        common = [
            f"paths.cache_dir={cache_dir}",
            "logger=none",
            "trainer.max_epochs=1",
            "trainer.accelerator=cpu",
            "callbacks.progress_bar=null",
        ]
        choices = compose_config([*common, *overrides], tmp_path / out, name).hydra.runtime.choices
        tiny_data = TINY_DATA.get(choices.data, _fixture_folder(choices.data))
        missing = [f"data={choices.data}"] if tiny_data is None else []
        missing += [f"model={choices.model}"] if tiny_model and choices.model not in TINY_MODEL else []
        assert not missing, (
            f"add tiny settings for {missing} to TINY_DATA/TINY_MODEL in tests/conftest.py (or "
            "tests/fixtures/<data>/)"
        )
        tiny = tiny_data + (TINY_MODEL[choices.model] if tiny_model else [])
        # Tiny settings first, so a test's own overrides of the same keys win (a group chosen twice is an
        # error in Hydra: the test's choice replaces the tiny one).
        own = {o.split("=", 1)[0] for o in overrides}
        tiny = [t for t in tiny if t.split("=", 1)[0] not in own]
        return compose_config([*common, *tiny, *overrides], tmp_path / out, name)

    return make


def _fixture_folder(data: str) -> list[str] | None:
    """A benchmark's invented files in tests/fixtures/<data>/ (a new benchmark needs no entry in
    TINY_DATA)."""
    folder = FIXTURES / data
    return [f"data.path={folder}"] if folder.is_dir() else None


def run_module(
    module: str, args: list[str], cwd: Path, timeout: int = 600, fork: bool | None = None
) -> subprocess.CompletedProcess:
    """Runs `python -m <module> <args>` as a user would, offline: forked from a process that has imported the
    heavy libraries already (tests/forked_runs.py), or a real subprocess with fork=False."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PRAGEXP_OUTPUTS": str(cwd / "outputs")}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = forked_runs.start(module, args, cwd, env, out.fileno(), err.fileno(), fork=fork)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess([module, *args], proc.returncode, out.read(), err.read())


@functools.cache
def migration():
    """experiments/migrate_runs.py, the script that writes run.json into run folders of an older pragexp."""
    spec = importlib.util.spec_from_file_location("migrate_runs", ROOT / "experiments" / "migrate_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def migrated(run_dir: Path) -> Path:
    """A run folder invented the way Hydra lays one out (`.hydra/`, metrics.json), given the run.json a run of
    today writes, derived by the migration script (tests/test_run_record.py checks that both are the same);
    written again where the folder had one."""
    from pragexp.runs.record import write_run_record

    write_run_record(run_dir, migration().derived_record(run_dir))
    return run_dir
