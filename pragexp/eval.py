"""`python -m pragexp.eval task=... ckpt_path=...`: test a trained checkpoint, on any data."""

import hydra
from omegaconf import DictConfig

from pragexp.run import CONFIG_DIR, job_started, run


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="eval")
def main(cfg: DictConfig) -> None:
    run(cfg, started=job_started())


if __name__ == "__main__":
    main()
