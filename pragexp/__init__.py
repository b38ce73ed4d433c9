"""pragexp: experiments on pragmatic reasoning in dialogue (GRICE, Circa, PragmatiCQA, intentions)."""

import time

__version__ = "0.1.0"
# When this process first imported pragexp. `python -m pragexp.train` imports the package before torch,
# Lightning and Hydra, so the wall time of its first job (in the summary line) counts their import too.
STARTED = time.monotonic()
