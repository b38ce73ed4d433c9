"""The entry points import torch, transformers and Lightning with the garbage collector paused, then freeze
what they imported (pragexp/entry/frameworks.py): once per process, the collector left as it was."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import gc
from pragexp.entry.frameworks import importing_frameworks

assert gc.get_freeze_count() == 0
with importing_frameworks():
    assert not gc.isenabled()
    import pytorch_lightning
frozen = gc.get_freeze_count()
assert gc.isenabled() and frozen > 100_000, frozen  # the frameworks' objects, out of the collector's sight
with importing_frameworks():  # a multirun's next job: nothing paused, nothing of the job frozen
    assert gc.isenabled()
    kept = [[i] for i in range(1000)]
assert gc.get_freeze_count() == frozen
gc.disable()
gc.unfreeze()
import importlib, sys
del sys.modules["pytorch_lightning"]
with importing_frameworks():
    importlib.import_module("pytorch_lightning")
assert not gc.isenabled()  # a collector the caller had paused stays paused
print("ok")
"""


@pytest.mark.slow
def test_the_frameworks_load_with_the_collector_paused_then_frozen_once():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
