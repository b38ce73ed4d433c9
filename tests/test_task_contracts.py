"""What a task reads from its data module is declared (`data_contract`, a Protocol beside the task): every
real data module provides its task's contract, a task reads nothing else (its runs pass with a data module
that offers only the contract), and a data module that lacks part of it is refused, naming what is missing.
What a task asks of its model is declared too (`ModelClass`: the class's traits; `PromptedModel`,
`LabelObserver`, a task's own reader contracts) and checked at start, naming what is missing."""

from types import SimpleNamespace

import pytest
from conftest import CONF, choices, compose_config
from hydra.utils import get_class, instantiate

from pragexp.models.traits import ModelTraits
from pragexp.run import run
from pragexp.tasks.base import PragexpTask
from pragexp.tasks.classification import ClassificationData, ClassificationTask
from pragexp.tasks.contracts import PromptData, TaskData
from pragexp.utils.contracts import ContractError, contract_members, missing_members


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


def offering_only(datamodule, *contracts: type):
    """An object with the contracts' members, read from `datamodule`, and nothing else."""
    members = {
        name: property(lambda self, name=name: getattr(datamodule, name))
        for contract in contracts
        for name in contract_members(contract)
    }
    return type(f"Only{contracts[0].__name__}", (), members)()


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
    ("circa", "llm", []),  # prompt items
    ("intentions_mc", "llm", []),
    ("intentions_reply", "llm", []),
]


@pytest.mark.slow
@pytest.mark.parametrize(("task", "model", "extra"), PAIRS)
def test_a_task_reads_nothing_its_contract_does_not_declare(task, model, extra, make_config, monkeypatch):
    cfg = make_config([f"task={task}", f"model={model}", "debug=fdr", *extra])
    cls = task_class(cfg)
    # A model that reads prompts also reads them from the data module (`PromptData`), and nothing more.
    contracts = (cls.data_contract, PromptData) if model == "llm" else (cls.data_contract,)
    monkeypatch.setattr(
        cls, "data", property(lambda self: offering_only(self.trainer.datamodule, *contracts))
    )
    assert run(cfg)


def test_a_data_module_lacking_part_of_the_contract_is_refused_by_name(make_config):
    fake = SimpleNamespace(group_names=(), describe=lambda split, index: {}, num_labels=2, vocab_size=None)
    assert missing_members(fake, ClassificationData) == ["sampling_unit", "label_names", "label_slugs"]
    # A classification task given the intention items: refused before any network is built.
    cfg = make_config(["task=circa", "model=majority", "data=intentions"])
    with pytest.raises(TypeError, match=r"ClassificationTask reads num_labels, label_names, label_slugs"):
        run(cfg)


def test_circa_nli_and_boolq_are_one_task_class():
    for task in ("circa", "nli", "boolq"):
        cfg = compose_config([f"task={task}"], CONF.parent / "outputs" / "unused")
        assert task_class(cfg) is ClassificationTask


@pytest.mark.parametrize("model", choices("model"))
def test_every_model_class_declares_its_traits(model):
    cfg = compose_config([f"model={model}"], CONF.parent / "outputs" / "unused")
    if cfg.model is None:
        return  # model=none: the task has no network of its own
    traits = get_class(cfg.model._target_).traits()
    assert isinstance(traits, ModelTraits)
    assert traits.learns_weights == (model not in ("oracle", "lead", "majority", "llm", "transferred"))
    assert traits.observes_labels == (model == "majority")
    assert traits.reads_prompts == (model in ("llm", "transferred"))
    assert traits.owns_loss == (model in ("lstm_gen", "memnn_gen"))


def test_a_model_class_without_traits_or_a_prompted_model_without_its_members_is_refused_by_name(make_config):
    from torch import nn

    class Bare(nn.Module):
        pass

    with pytest.raises(ContractError, match=r"model class Bare lacks traits \(ModelClass\).*PragexpModel"):
        PragexpTask(model=Bare)

    class Mute(nn.Module):  # reads prompts, keeps no records, draws no demonstrations
        @classmethod
        def traits(cls, **config):
            return ModelTraits(learns_weights=False, reads_prompts=True)

    cfg = make_config(["task=circa", "model=llm"], name="eval")
    task = instantiate(cfg.task, model=Mute, optimizer=None)
    with pytest.raises(
        ContractError, match=r"model Mute lacks shots, generates, learns, demonstrate, take_records"
    ):
        task.build_prompted(SimpleNamespace(prompt_items=lambda split: []))


def test_the_reply_task_refuses_a_prompted_model_that_cannot_draw_replies_by_name(make_config):
    """intentions_reply asks more of its model than a choice task does (`Replier`: a template and `draw`)."""
    from torch import nn

    class Chooser(nn.Module):  # a PromptedModel that only chooses among options
        shots, generates, learns = 0, False, False

        @classmethod
        def traits(cls, **config):
            return ModelTraits(learns_weights=False, reads_prompts=True)

        def demonstrate(self, training_items): ...
        def take_records(self):
            return []

        def close(self): ...
        def save_adapter(self, folder):
            return None

    cfg = make_config(["task=intentions_reply"], name="eval")
    task = instantiate(cfg.task, model=Chooser, judge=SimpleNamespace(backend=None))
    with pytest.raises(ContractError, match=r"model Chooser lacks template, draw \(Replier\)"):
        task.build_network(SimpleNamespace(prompt_items=lambda split: []))
