"""The entry points' side of Hydra (`pragexp.train`, `pragexp.eval` and `pragexp.run`): the command line
checked before Hydra (command_line), the frameworks imported once (frameworks), a config composed outside them
(composition), printed (config_tree) and turned into loggers and callbacks (instantiate), and what Hydra's
configs name by string (hydra_callbacks, search_space). Imports runs/ and utils/ only."""
