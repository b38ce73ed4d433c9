"""`python -m pragexp.train task=... model=...`: train, then test the best checkpoint."""

import sys

import hydra
from omegaconf import DictConfig

from pragexp.run import CONFIG_DIR, job_started, run
from pragexp.utils.task_groups import exit_on_misplaced_groups


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="train")
def main(cfg: DictConfig) -> float | None:
    metrics = run(cfg, started=job_started())
    # Sweepers that optimise (e.g. Optuna) read the returned value.
    return metrics.get(cfg.get("optimized_metric") or "")


if __name__ == "__main__":
    exit_on_misplaced_groups(sys.argv[1:], "train")
    main()
