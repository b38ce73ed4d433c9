from conftest import compose_config
from omegaconf import OmegaConf, open_dict

from pragexp.entry.instantiate import build_callbacks, hydra_sweep_group, public_config


def test_wandb_group_is_the_sweep_dir_under_multirun(tmp_path):
    compose_config(
        ["hydra.mode=MULTIRUN", "hydra.sweep.dir=/x/outputs/multirun/grice_qa/2026-11-21_10-00-00"], tmp_path
    )
    assert hydra_sweep_group() == "grice_qa/2026-11-21_10-00-00"
    compose_config([], tmp_path)
    assert hydra_sweep_group() is None  # a single run has no group of its own


def test_logged_config_hides_credentials(tmp_path):
    cfg = compose_config(["logger=wandb"], tmp_path)
    with open_dict(cfg):
        cfg.logger.wandb.api_key = "secret-value"
        cfg.extra = {"hf_token": "hf_abc", "nested": [{"password": "p"}]}
    logged = public_config(cfg)
    text = OmegaConf.to_yaml(logged)
    assert "secret-value" not in text and "hf_abc" not in text and "password: p" not in text
    assert logged["logger"]["wandb"]["project"] == "pragexp" and "hydra" not in logged
    with open_dict(cfg):
        cfg.extra = {"api_key_env": "OPENAI_API_KEY", "api_key": "sk-123"}
    extra = public_config(cfg)["extra"]
    # The name of the variable that holds a key is not a secret; the key is.
    assert extra == {"api_key_env": "OPENAI_API_KEY", "api_key": "***"}


def test_lr_monitor_is_dropped_without_a_logger(tmp_path):
    cfg = compose_config([], tmp_path)
    names = {type(c).__name__ for c in build_callbacks(cfg.callbacks, has_logger=False)}
    assert "LearningRateMonitor" not in names and "ModelCheckpoint" in names
    names = {type(c).__name__ for c in build_callbacks(cfg.callbacks, has_logger=True)}
    assert "LearningRateMonitor" in names


def test_logged_config_hides_the_password_of_a_storage_url(tmp_path):
    """An Optuna study on a database server: the sweep's storage URL reaches each job's callback config."""
    cfg = compose_config(["hparams_search=optuna"], tmp_path)
    with open_dict(cfg):
        cfg.callbacks.optuna_pruning.storage = "mysql+pymysql://optuna:s3cr3t@db.lab:3306/studies"
        cfg.extra = {"url": "sqlite:////tmp/optuna.db", "endpoint": "http://127.0.0.1:8000/v1"}
    logged = public_config(cfg)
    assert (
        logged["callbacks"]["optuna_pruning"]["storage"] == "mysql+pymysql://optuna:***@db.lab:3306/studies"
    )
    assert logged["extra"] == {"url": "sqlite:////tmp/optuna.db", "endpoint": "http://127.0.0.1:8000/v1"}
