"""The suites pragexp ships (conf/experiment/suite/): `suite/all` is the others composed, and every entry's
job composes and scores exactly `data.limit` test items of its data (here the fixtures), so that
`suite.limit` means the same on every benchmark; the limit itself (`SplitsDataModule.scored`)."""

import pytest
from conftest import GRICE_FIXTURE, compose_config
from hydra.utils import instantiate
from omegaconf import OmegaConf

from hydra_plugins.pragexp_suite_sweeper._jobs import SuiteError, _entry_overrides
from pragexp.data.common.datamodules.base import SplitsDataModule


def benchmarks(name: str, tmp_path) -> dict:
    cfg = compose_config([f"experiment=suite/{name}"], tmp_path, "eval")
    assert (
        cfg.hydra.sweeper._target_.endswith("suite_sweeper.SuiteSweeper")
        and cfg.hydra.mode.name == "MULTIRUN"
    )
    return OmegaConf.to_container(cfg.suite.benchmarks)


def test_suite_all_is_the_pragmatics_suite_then_the_theory_of_mind_one(tmp_path):
    pragmatics, tom = benchmarks("pragmatics", tmp_path), benchmarks("theory_of_mind", tmp_path)
    assert list(benchmarks("all", tmp_path).items()) == [*pragmatics.items(), *tom.items()]
    assert {e["task"] for e in pragmatics.values()} >= {"hu_pragmatics", "ludwig", "circa", "intentions_mc"}
    assert [e["task"] for e in tom.values()] == ["tomato", "bigtom", "hitom", "opentom"]


ENTRIES = list(OmegaConf.load("conf/experiment/suite/pragmatics.yaml").suite.benchmarks.items())
ENTRIES += list(OmegaConf.load("conf/experiment/suite/theory_of_mind.yaml").suite.benchmarks.items())


@pytest.mark.parametrize("entry", [name for name, _ in ENTRIES])
def test_every_entry_composes_and_scores_data_limit_items(entry, make_config):
    spec = dict(ENTRIES)[entry]
    # a sweep in an entry (LUDWIG's templates): its first job
    overrides = [o.split(",", 1)[0] for o in spec.get("overrides", [])]
    if "data=grice_official" in overrides:  # the release by default (not fetched here)
        overrides.append(f"data.path={GRICE_FIXTURE}")
    cfg = make_config([f"task={spec.task}", *overrides, "data.limit=2"], name="eval")
    datamodule = instantiate(cfg.data)
    datamodule.prepare_data()
    datamodule.setup("test")
    assert datamodule.limit == 2 and datamodule.test_size() == 2 < len(datamodule.datasets["test"])
    assert sum(len(batch["index"]) for batch in datamodule.test_dataloader()) == 2


class Items(SplitsDataModule):
    def __init__(self, n: int, limit):
        super().__init__(4, 4, 0, limit=limit)
        self.datasets = {"test": [{"index": i} for i in range(n)], "train": [{"index": i} for i in range(n)]}


def test_a_limit_spreads_its_items_over_the_split_and_leaves_the_other_splits_whole():
    assert [e["index"] for e in Items(10, 4).scored("test")] == [0, 2, 5, 7]
    assert [e["index"] for e in Items(3, 5).scored("test")] == [0, 1, 2]  # fewer than the limit: all
    assert len(Items(10, 4).scored("train")) == 10
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="data.limit="):
            Items(10, bad)


def test_an_entry_is_a_task_and_its_overrides_and_nothing_else():
    def entry(text: str) -> list[str]:
        return _entry_overrides("e", OmegaConf.create(text), "suite.yaml, suite entry 'e'")

    assert entry("{task: ludwig}") == ["task=ludwig"]
    assert entry("{task: ludwig, overrides: [prompt.shots=5]}") == ["task=ludwig", "prompt.shots=5"]
    for bad, said in (
        ("{task: ludwig, override: [prompt.shots=5]}", "'override' is not an entry's key"),
        ("{task: ludwig, overrides: prompt.shots=5}", "overrides must be a list"),
        ("{overrides: [prompt.shots=5]}", "task=None is not a task"),
    ):
        with pytest.raises(SuiteError, match=f"suite.yaml, suite entry 'e': {said}"):
            entry(bad)
