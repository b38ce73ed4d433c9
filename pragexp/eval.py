"""`python -m pragexp.eval task=... ckpt_path=...`: test a trained checkpoint, on any data."""

import sys

import hydra
from omegaconf import DictConfig

from pragexp.run import CONFIG_DIR, job_started, run
from pragexp.utils.task_groups import exit_on_misplaced_groups


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="eval")
def main(cfg: DictConfig) -> None:
    run(cfg, started=job_started())


if __name__ == "__main__":
    exit_on_misplaced_groups(sys.argv[1:], "eval")
    main()
