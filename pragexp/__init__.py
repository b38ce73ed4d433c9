"""pragexp: experiments on pragmatic reasoning in dialogue (GRICE, Circa, PragmatiCQA, intentions)."""

import time
from pathlib import Path

__version__ = "0.1.0"
# When this process first imported pragexp. `python -m pragexp.train` imports the package before torch,
# Lightning and Hydra, so the wall time of its first job (in the summary line) counts their import too.
STARTED = time.monotonic()
# The configs: conf/ sits beside the package (editable install); an absolute path works however they are
# composed (the entry points, tests, `python -m pragexp.data.pragmaticqa`).
CONFIG_DIR = Path(__file__).resolve().parent.parent / "conf"
