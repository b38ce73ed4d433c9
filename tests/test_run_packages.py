"""A run names a missing optional package before any work (pragexp imports each only where it is used)."""

from __future__ import annotations

import importlib.util

import pytest
from omegaconf import OmegaConf

from pragexp.generation.backends.hf import HFBackend
from pragexp.run import check_packages


@pytest.fixture
def without(monkeypatch):
    def hide(name: str) -> None:
        find_spec = importlib.util.find_spec
        monkeypatch.setattr(
            importlib.util, "find_spec", lambda n, *a: None if n == name else find_spec(n, *a)
        )

    return hide


def test_retrieval_without_faiss_is_refused_before_any_work(without):
    check_packages(
        OmegaConf.create({"retriever": {"query_encoder": "minilm"}})
    )  # FAISS installed: nothing said
    without("faiss")
    check_packages(OmegaConf.create({"task_name": "circa"}))  # no retrieval: FAISS not needed
    with pytest.raises(ImportError, match="retrieval .* needs FAISS: pip install faiss-cpu"):
        check_packages(OmegaConf.create({"retriever": {"query_encoder": "minilm"}}))


def test_an_adapter_without_peft_is_refused_when_the_backend_is_built(without, tmp_path):
    (tmp_path / "adapter_config.json").write_text("{}")
    without("peft")
    with pytest.raises(ImportError, match="llm.adapter needs the peft package"):
        HFBackend(model="tiny", device="cpu", adapter=str(tmp_path))
