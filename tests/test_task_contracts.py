"""What a task reads from its data module is declared (`data_contract`, a Protocol beside the task): every real
data module provides its task's contract, a task reads nothing else (its runs pass with a data module that
offers only the contract), and a data module that lacks part of it is refused, naming what is missing."""

from types import SimpleNamespace

import pytest
from conftest import CONF, choices, compose_config
from hydra.utils import get_class, instantiate

from pragexp.run import run
from pragexp.tasks.base import TaskData, contract_members, missing_members
from pragexp.tasks.classification import ClassificationData, ClassificationTask


def task_class(cfg) -> type:
    return get_class(cfg.task._target_)


@pytest.mark.parametrize("task", choices("task"))
def test_every_data_module_provides_its_tasks_contract(task, make_config):
    cfg = make_config([f"task={task}"], name="eval")
    contract = task_class(cfg).data_contract
    dm = instantiate(cfg.data)
    dm.prepare_data()
    dm.setup("test")
    assert missing_members(dm, contract) == []
    assert isinstance(dm, contract)
    assert set(contract_members(TaskData)) <= set(
        contract_members(contract)
    )  # every contract extends the base


def offering_only(datamodule, contract: type):
    """An object with the contract's members, read from `datamodule`, and nothing else."""
    members = {
        name: property(lambda self, name=name: getattr(datamodule, name))
        for name in contract_members(contract)
    }
    return type(f"Only{contract.__name__}", (), members)()


# Each task, and each model whose network reads the data module its own way.
PAIRS = [
    ("grice_recovery", "memnn", []),
    ("grice_recovery", "bert", []),  # subword text
    ("grice_qa", "memnn_inf", []),  # checks its word ids against the vocabulary
    ("grice_qa", "bert", []),
    ("circa", "majority", []),
    ("nli", "bert", []),
    ("pragmaticqa", "fid", []),
    ("pragmaticqa", "lead", ["retriever.scope=community"]),  # searches each community's own passages
    ("llm_intent_mc", "none", []),
    ("llm_response_eval", "none", []),
]


@pytest.mark.parametrize(("task", "model", "extra"), PAIRS)
def test_a_task_reads_nothing_its_contract_does_not_declare(task, model, extra, make_config, monkeypatch):
    cfg = make_config([f"task={task}", f"model={model}", "debug=fdr", *extra])
    cls = task_class(cfg)
    monkeypatch.setattr(
        cls, "data", property(lambda self: offering_only(self.trainer.datamodule, cls.data_contract))
    )
    assert run(cfg)


def test_a_data_module_lacking_part_of_the_contract_is_refused_by_name(make_config):
    fake = SimpleNamespace(group_names=(), describe=lambda split, index: {}, num_labels=2, vocab_size=None)
    assert missing_members(fake, ClassificationData) == ["label_names", "label_slugs"]
    # A classification task given the intention items: refused before any network is built.
    cfg = make_config(["task=circa", "model=majority", "data=intentions"])
    with pytest.raises(TypeError, match=r"ClassificationTask reads num_labels, label_names, label_slugs"):
        run(cfg)


def test_circa_nli_and_boolq_are_one_task_class():
    for task in ("circa", "nli", "boolq"):
        cfg = compose_config([f"task={task}"], CONF.parent / "outputs" / "unused")
        assert task_class(cfg) is ClassificationTask
