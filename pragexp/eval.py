"""`python -m pragexp.eval task=... ckpt_path=...`: test a trained checkpoint, on any data."""

import sys

import hydra
from omegaconf import DictConfig

from pragexp import CONFIG_DIR
from pragexp.data.releases.resolver import register as register_release_resolver
from pragexp.entry.command_line import checked_argv
from pragexp.entry.frameworks import importing_frameworks

register_release_resolver()  # `${release:NAME}` in conf/data/: a fetched release's folder


@hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="eval")
def main(cfg: DictConfig) -> None:
    # Torch and Lightning load only for a job: --cfg, --help, --info and a refused line answer at once.
    with importing_frameworks():
        from pragexp.run import job_started, run

    run(cfg, started=job_started())


if __name__ == "__main__":
    sys.argv[1:] = checked_argv(sys.argv[1:], "eval")  # hydra.main reads sys.argv
    main()
