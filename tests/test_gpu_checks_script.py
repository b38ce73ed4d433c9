"""bench/gpu_checks.sh, the one script a lent GPU runs (issue 55): its plan and argument handling, on the CPU
(`--dry-run` runs nothing but the benches' `--help`)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "gpu_checks.sh"


def _run(tmp_path, *args):
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": sys.executable}
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_dry_run_lists_every_step_within_the_time_limit(tmp_path):
    done = _run(tmp_path, "--dry-run", "--limit", "300")
    assert done.returncode == 0, done.stderr[-2000:]
    summary = (tmp_path / "out" / "summary.txt").read_text()
    for name in (
        "install-lm-eval",
        "tests",
        "scorer",
        "generate-bfloat16",
        "generate-float32",
        "vllm-scorer",
    ):
        assert f"\n{name} (at most" in f"\n{summary}"
    budgets = [
        int(line.split("(at most ")[1].split(" s)")[0]) for line in summary.splitlines() if "at most" in line
    ]
    assert max(budgets) <= 300  # no step may run past the limit
    assert "-m gpu" in summary and "--dtypes float32,bfloat16" in summary


def test_bad_arguments_are_refused_before_anything_runs(tmp_path):
    assert _run(tmp_path, "--limit", "soon").returncode == 2
    done = _run(tmp_path, "--bogus")
    assert done.returncode == 2 and "unknown argument" in done.stderr
    assert not (tmp_path / "out").exists()
