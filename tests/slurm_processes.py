"""Ending what the test SLURM cluster (tests/slurm_cluster.py) started: a daemon dies with the process that
started it (Linux's PR_SET_PDEATHSIG), a process is ended by its pid (SIGTERM, a wait, SIGKILL), and every
process whose environment names the cluster's SLURM_CONF (a job's slurmstepd and its processes, which outlive
slurmd) is found in /proc and ended; the watchdog does the same when the process that started the cluster
dies."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path


def dies_with_parent(parent: int, signum: int):
    """A preexec_fn: the child gets `signum` when `parent` dies (Linux's PR_SET_PDEATHSIG), or at once if it
    already has."""
    libc = ctypes.CDLL(None, use_errno=True)

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # (the parent died before the call)
            os.kill(os.getpid(), signum)

    return arm


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def end_process(pid: int, wait, timeout: float = 5) -> None:
    """SIGTERM, up to `timeout` seconds for it to exit, then SIGKILL. `wait(timeout=...)`: the process's own
    (a child's Popen.wait), or a poll of /proc."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(
            subprocess.TimeoutExpired
        ):  # (one in the kernel's hands: go on with the rest)
            wait(timeout=timeout)


def end_started_by(conf: Path, but: tuple[int, ...] = ()) -> list[int]:
    """Ends every process (but these) whose environment names this cluster's SLURM_CONF: its daemons, its
    jobs' slurmstepd and their processes, which SLURM starts with the environment of whoever submitted them.
    Returns their pids."""
    pids = [pid for pid in _environment_has(f"SLURM_CONF={conf}") if pid not in (os.getpid(), *but)]
    for pid in pids:
        end_process(pid, lambda timeout, pid=pid: _wait_gone(pid, timeout))
    return pids


def _environment_has(entry: str) -> list[int]:
    needle = entry.encode() + b"\0"
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if needle in (proc / "environ").read_bytes() and not gone(int(proc.name)):
                    pids.append(int(proc.name))
    return pids


def gone(pid: int) -> bool:
    """Whether a process has ended (no longer there, or a zombie no one has reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not gone(pid):
        if time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(f"pid {pid}", timeout)
        time.sleep(0.1)


def watch(conf: Path) -> None:
    """The watchdog: waits for SIGTERM (sent by the kernel when the process that started the cluster dies, or
    by `stop`), then ends what the cluster started."""
    signal.signal(signal.SIGTERM, lambda *_: None)
    signal.pause()
    end_started_by(conf)
