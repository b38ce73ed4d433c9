"""`python -m pragexp.train task=... model=...`: train, then test the best checkpoint."""

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from pragexp import CONFIG_DIR
from pragexp.data.releases.resolver import register as register_release_resolver
from pragexp.entry.command_line import checked_argv
from pragexp.entry.frameworks import importing_frameworks

register_release_resolver()  # `${release:NAME}` in conf/data/: a fetched release's folder


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="train")
def main(cfg: DictConfig) -> float | list[float | None] | None:
    # Torch and Lightning load only for a job: --cfg, --help, --info and a refused line answer at once.
    with importing_frameworks():
        from pragexp.run import job_started, run

    metrics = run(cfg, started=job_started())
    # Sweepers that optimise (e.g. Optuna) read the returned value; a list of metrics: one value each.
    wanted = cfg.get("optimized_metric")
    if OmegaConf.is_list(wanted):
        return [metrics.get(name) for name in wanted]
    return metrics.get(wanted or "")


if __name__ == "__main__":
    sys.argv[1:] = checked_argv(sys.argv[1:], "train")  # hydra.main reads sys.argv
    main()
