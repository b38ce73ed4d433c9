"""The frameworks a job needs (torch, transformers, Lightning: `pragexp.run`), imported without the garbage
collector's passes over them.

Importing them makes about half a million objects that live as long as the process. Python's collector walks
them again and again while they load (about 0.9 s of a 4.4 s import on a 2-core machine) and again as the
interpreter exits (about 1 s). So the entry points import them with the collector paused, then move what
exists out of its sight (`gc.freeze`: the collector no longer traverses them; reference counting still frees
them), once per process: a multirun's later jobs and a test calling `main()` again find them loaded and freeze
nothing of theirs. `bench/bench_startup.py` measures it.
"""

from __future__ import annotations

import contextlib
import gc
import sys


@contextlib.contextmanager
def importing_frameworks():
    """Pauses the collector for the block on the first job of the process, then freezes what it imported."""
    # a later job: the frameworks are imported already, and the job's own objects must stay collectable
    if "pytorch_lightning" in sys.modules:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
