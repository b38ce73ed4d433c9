"""A dataset's `data.path` defaults to its fetched release (`${release:NAME,SUBPATH}` in conf/data/):
unfetched, the run stops naming the `python -m pragexp.data fetch NAME` to run and `data.path=`; fetched and
verified, the path is the release's folder in the data folder; an explicit `data.path` wins. The tests' data
folder is their own (tests/conftest.py), so each test here fetches its release by hand: the fixture's files
and the marker."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import CONF, FIXTURES, GRICE_FIXTURE, compose_config, run_module
from hydra.utils import instantiate
from omegaconf import OmegaConf
from omegaconf.errors import InterpolationResolutionError

from pragexp.data.releases.check import write_marker
from pragexp.data.releases.registry import load_registry

RELEASE = re.compile(r"\$\{release(?:_unless:\$\{data\.path\})?[:,](\w+)(?:,([^}]*))?\}")
# conf/data/<choice>.yaml -> a task that reads it
DEFAULTS = {
    "hu_pragmatics": "hu_pragmatics",
    "ludwig": "ludwig",
    "multiprageval": "multiprageval",
    "tomato": "tomato",
    "bigtom": "bigtom",
    "hitom": "hitom",
    "opentom": "opentom",
    "intentions": "intentions_mc",
    "pragmaticqa": "pragmaticqa",
    "circa": "circa",
}


def test_every_release_a_config_names_is_in_the_registry_and_every_github_release_is_read():
    named = {m.group(1) for p in (CONF / "data").glob("*.yaml") for m in RELEASE.finditer(p.read_text())}
    assert named == set(load_registry()) and len(named) == 11


@pytest.mark.parametrize("choice", sorted(DEFAULTS))
def test_a_datasets_path_is_its_fetched_release_or_an_error_naming_the_fetch(choice, tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    monkeypatch.setenv("PRAGEXP_DATA_DIR", str(data_dir))
    cfg = compose_config([f"task={DEFAULTS[choice]}"], tmp_path)
    name, subpath = RELEASE.fullmatch(OmegaConf.to_container(cfg.data)["path"]).groups()
    with pytest.raises(InterpolationResolutionError) as refused:
        cfg.data.path  # noqa: B018  (resolving is the check)
    assert f"run `python -m pragexp.data fetch {name}`" in str(refused.value)
    assert "data.path=" in str(refused.value) and str(data_dir) in str(refused.value)
    write_marker(load_registry()[name], data_dir / name)  # as a fetch leaves it (the files are not read here)
    assert cfg.data.path == str(data_dir / name / (subpath or "")).rstrip("/")
    explicit = compose_config([f"task={DEFAULTS[choice]}", "data.path=/my/copy"], tmp_path)
    assert explicit.data.path == "/my/copy"


def test_grices_official_test_files_default_to_the_release(tmp_path, monkeypatch):
    monkeypatch.setenv("PRAGEXP_DATA_DIR", str(tmp_path))
    write_marker(load_registry()["grice"], tmp_path / "grice")
    cfg = compose_config(["task=grice_recovery", "data=grice_official"], tmp_path)
    kinds = [p.rsplit("_", 1)[1] for p in cfg.data.test_path]
    assert kinds == ["cb.json", "ig.json", "li.json", "re.json", "st.json"]
    assert all(p.startswith(str(tmp_path / "grice" / "data")) for p in cfg.data.test_path)


def test_grices_own_files_in_data_path_need_no_release(tmp_path):
    """`data.path` replaces GRICE's `test_path`: given, the release's defaults resolve to nothing (not fetched
    here, they would stop the run) and the files read are the user's."""
    own = f"data.path={GRICE_FIXTURE}"
    cfg = compose_config(["task=grice_recovery", "data=grice_official", own], tmp_path)
    assert OmegaConf.to_container(cfg.data, resolve=True)["test_path"] is None
    assert instantiate(cfg.data).paths["test"] == [GRICE_FIXTURE]
    unfetched = compose_config(["task=grice_recovery", "data=grice_official"], tmp_path)
    with pytest.raises(InterpolationResolutionError, match="python -m pragexp.data fetch grice"):
        OmegaConf.to_container(unfetched.data, resolve=True)


def test_a_fetched_release_is_read_with_no_data_path(tmp_path, monkeypatch):
    """Hi-ToM's data module reads the fixture put where a fetch puts the release."""
    monkeypatch.setenv("PRAGEXP_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "data" / "hitom"
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "hitom" / "Hi-ToM_data.json", folder / "Hi-ToM_data.json")
    write_marker(load_registry()["hitom"], folder)
    cfg = compose_config(["task=hitom", "model=llm"], tmp_path)
    datamodule = instantiate(cfg.data)
    datamodule.setup("test")
    assert len(datamodule.datasets["test"]) > 0 and cfg.data.path == str(folder)


@pytest.mark.slow
def test_the_entry_point_says_which_fetch_to_run(tmp_path):
    done = run_module("pragexp.eval", ["task=hitom", "model=llm", "logger=none"], tmp_path)
    assert done.returncode != 0
    assert "run `python -m pragexp.data fetch hitom`, or give your own copy with data.path=" in done.stderr


def test_the_configs_data_folder_is_the_commands(tmp_path, monkeypatch):
    """paths.data_dir (what a run reads) and the fetch command's default folder follow the same rule."""
    from pragexp.data.releases.registry import default_data_dir

    monkeypatch.setenv("PRAGEXP_DATA_DIR", str(tmp_path / "mine"))
    assert compose_config([], tmp_path).paths.data_dir == str(default_data_dir()) == str(tmp_path / "mine")
    monkeypatch.delenv("PRAGEXP_DATA_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    expected = tmp_path / "home" / ".cache" / "pragexp" / "data"
    assert compose_config([], tmp_path).paths.data_dir == str(default_data_dir()) == str(expected)
