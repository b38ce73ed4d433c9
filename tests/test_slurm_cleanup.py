"""The test cluster always cleans up (tests/slurm_cluster.py): a test session killed with SIGKILL leaves no
daemon, no job and no job step behind, and `stop` ends every daemon by its pid even when the controller does
not answer scancel and squeue. Each test starts a cluster of its own (about 5 s), beside the session's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from slurm_cluster import SlurmCluster, missing
from slurm_processes import _environment_has, gone

pytestmark = [pytest.mark.slurm, pytest.mark.slow]
TESTS = Path(__file__).resolve().parent

# A process that starts a cluster, has it run a job (a shell sleeping 5 minutes), says the pids, and waits.
STARTS_A_CLUSTER = """
import json, signal, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from slurm_cluster import SlurmCluster

cluster = SlurmCluster(Path(sys.argv[2])).start()
submitted = cluster.run("sbatch", "--parsable", f"--output={sys.argv[2]}/job.out", "--wrap", "sleep 300")
job = submitted.stdout.strip()
deadline = time.monotonic() + 60  # a job that never runs fails the test, instead of hanging it
while cluster.run("squeue", "--noheader", "--format=%T", "-j", job).stdout.strip() != "RUNNING":
    if time.monotonic() > deadline:
        sys.exit(f"job {job} not running after 60 s: " + cluster.logs())
    time.sleep(0.2)
print(json.dumps({name: proc.pid for name, proc in cluster.procs}), flush=True)
signal.pause()
"""


@pytest.fixture(autouse=True)
def needs_slurm():
    if missing():
        pytest.skip(missing())


def started_by(conf: Path) -> list[int]:
    """What a cluster started that is still there (its SLURM_CONF in their environment)."""
    return _environment_has(f"SLURM_CONF={conf}")


def wait_until_gone(pids, timeout: float = 15) -> list[int]:
    deadline = time.monotonic() + timeout
    while [p for p in pids if not gone(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    return [p for p in pids if not gone(p)]


def test_a_killed_test_session_leaves_no_daemon_nor_job_behind(tmp_path):
    conf = tmp_path / "cluster" / "etc" / "slurm.conf"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(STARTS_A_CLUSTER), str(TESTS), str(tmp_path / "cluster")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        daemons = json.loads(child.stdout.readline())
    finally:
        everything = started_by(conf)  # the daemons, the watchdog, the job's slurmstepd, its shell and sleep
        child.send_signal(signal.SIGKILL)  # the test session dies: no teardown, no stop()
        assert child.wait(timeout=60) == -signal.SIGKILL
    names = {"watchdog", "munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd"}
    assert set(daemons) == names and set(daemons.values()) <= set(everything)
    assert len(everything) >= len(names) + 2, everything  # and the job's processes
    assert wait_until_gone(everything) == []


def test_stop_ends_every_daemon_by_pid_when_the_controller_does_not_answer(tmp_path):
    cluster = SlurmCluster(tmp_path / "cluster").start()
    try:
        job = cluster.run("sbatch", "--parsable", f"--output={tmp_path}/job.out", "--wrap", "sleep 300")
        job = job.stdout.strip()
        deadline = time.monotonic() + 60
        while cluster.run("squeue", "--noheader", "--format=%T", "-j", job).stdout.strip() != "RUNNING":
            assert time.monotonic() < deadline, cluster.logs()
            time.sleep(0.2)
        everything = started_by(cluster.conf)
        (ctld,) = [proc.pid for name, proc in cluster.procs if name == "slurmctld"]
        os.kill(ctld, signal.SIGSTOP)  # scancel and squeue now wait for an answer that never comes
    finally:
        started = time.monotonic()
        cluster.stop()
        took = time.monotonic() - started
    assert wait_until_gone(everything, timeout=5) == [] and cluster.procs == []
    assert took < 60, f"stop took {took:.0f} s"
    print(f"stop with a frozen controller: {took:.1f} s")
