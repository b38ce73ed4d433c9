"""hydra-optuna-sweeper's sweeper, resumable: `hparams_search=optuna` names it (conf/hparams_search/).

Hydra imports this module on every start to discover plugins, so it stays light: Optuna and the
plugin's implementation are imported only when a sweep begins (`_resume`)."""

from __future__ import annotations

from typing import Any

from hydra_plugins.hydra_optuna_sweeper.optuna_sweeper import OptunaSweeper


class ResumableOptunaSweeper(OptunaSweeper):
    """The plugin's `OptunaSweeper` with the same config, where `n_trials` is the number of finished
    trials the study should end with, so re-running an interrupted sweep finishes it (see `_resume`)."""

    def __init__(self, **kwargs: Any) -> None:
        from ._resume import ResumableSweep

        self.sweeper = ResumableSweep(**kwargs)
