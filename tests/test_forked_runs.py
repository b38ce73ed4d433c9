"""The tests' forked runs (tests/forked_runs.py) behave as `python -m` in a subprocess does: the same output,
working directory, arguments, sys.path, environment and exit (codes, exceptions, signals, threads joined,
atexit handlers run); a run whose environment the server's imports could have read differently forks from a
server of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import forked_runs
import pytest

PROBE = """
import atexit, json, os, sys, threading, time

def late():
    time.sleep(0.3)
    print("thread joined", flush=True)

threading.Thread(target=late).start()
atexit.register(lambda: print("atexit ran", flush=True))
print(json.dumps({
    "argv": sys.argv[1:], "argv0": os.path.basename(sys.argv[0]), "name": __name__, "cwd": os.getcwd(),
    "path0": sys.path[0], "probe": os.environ.get("PRAGEXP_PROBE"), "spec": __spec__.name,
}), flush=True)
how = sys.argv[1]
if how == "raise":
    raise ValueError("probe failed")
if how == "message":
    sys.exit("probe says no")
if how == "wait":
    print("waiting", flush=True)
    time.sleep(60)
sys.exit(int(how))
"""

HF_PROBE = """
import os
import huggingface_hub.constants

print(huggingface_hub.constants.HF_HOME, os.environ["PRAGEXP_PROBE"])
"""


def _run(tmp_path, how: str, fork: bool, env: dict | None = None, probe: str = PROBE):
    (tmp_path / "probe_module.py").write_text(textwrap.dedent(probe))
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PRAGEXP_PROBE": "x", **(env or {})}
    out, err = tmp_path / f"out-{how}-{fork}", tmp_path / f"err-{how}-{fork}"
    with out.open("w") as o, err.open("w") as e:
        proc = forked_runs.start("probe_module", [how], tmp_path, env, o.fileno(), e.fileno(), fork=fork)
    return proc, out, err


def _ended(tmp_path, how: str, fork: bool, env: dict | None = None, probe: str = PROBE):
    proc, out, err = _run(tmp_path, how, fork, env, probe)
    code = proc.wait(timeout=120)
    return type(proc), code, out.read_text(), err.read_text()


@pytest.mark.parametrize("how", ["0", "3", "raise", "message"])
def test_a_forked_run_ends_as_the_same_module_in_a_subprocess(tmp_path, how):
    kind, code, out, err = _ended(tmp_path, how, fork=True)
    _, plain_code, plain_out, plain_err = _ended(tmp_path, how, fork=False)
    assert kind is forked_runs.ForkedRun
    assert (code, out) == (plain_code, plain_out)
    assert code == {"0": 0, "3": 3}.get(how, 1)
    facts = json.loads(out.splitlines()[0])
    assert facts == {
        "argv": [how],
        "argv0": "probe_module.py",
        "name": "__main__",
        "cwd": str(tmp_path),
        "path0": str(tmp_path),
        "probe": "x",
        "spec": "probe_module",
    }
    assert out.splitlines()[1:] == ["thread joined", "atexit ran"]
    # The traceback's frames differ (runpy's own above the module's), its last line does not.
    assert err.strip().splitlines()[-1:] == plain_err.strip().splitlines()[-1:]
    if how == "message":
        assert err.strip() == "probe says no"


def test_a_forked_run_has_its_own_pid_and_dies_of_the_signal_it_is_sent(tmp_path):
    proc, out, _ = _run(tmp_path, "wait", fork=True)
    deadline = time.monotonic() + 60
    while "waiting" not in out.read_text():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    assert proc.pid != os.getpid() and proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.1)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=60) == -signal.SIGTERM


def test_a_run_forks_from_a_server_whose_imports_saw_its_environment(tmp_path):
    """huggingface_hub (imported with transformers) reads HF_HOME as it is imported: a run under another
    HF_HOME gets a server started under it, and a variable read at run time only does not."""
    homes = {}
    for home in ("one", "two", "one"):
        env = {"HF_HOME": str(tmp_path / home), "PRAGEXP_PROBE": home}
        kind, code, out, _ = _ended(tmp_path, "0", fork=True, env=env, probe=HF_PROBE)
        assert kind is forked_runs.ForkedRun and code == 0
        assert out.splitlines()[0] == f"{tmp_path / home} {home}"
        homes[home] = forked_runs.server_for({**os.environ, **env})
    assert homes["one"] is not homes["two"]
    assert forked_runs.import_env(os.environ) != forked_runs.import_env(
        {**os.environ, "OMP_NUM_THREADS": "7"}
    )
    safe = {**os.environ, "PRAGEXP_OUTPUTS": "elsewhere", "STOP_AT": "1", "PYTHONPATH": "x"}
    assert forked_runs.import_env(os.environ) == forked_runs.import_env(safe)


def test_the_server_starts_no_thread_while_importing():
    """A fork copies only the thread that forks: a lock another thread held would stay locked in the child.
    (With OMP_NUM_THREADS=1, as tests/conftest.py sets it for pytest's workers: numpy's BLAS starts a pool
    otherwise, which handles a fork itself.)"""
    script = (
        "import os\nfor m in forked_runs.PRELOAD: __import__(m)\nprint(len(os.listdir('/proc/self/task')))"
    )
    env = {**os.environ, "PYTHONPATH": os.path.dirname(forked_runs.__file__), "OMP_NUM_THREADS": "1"}
    threads = subprocess.run(
        [sys.executable, "-c", "import forked_runs\n" + script], env=env, capture_output=True, text=True
    )
    assert threads.returncode == 0 and threads.stdout.strip() == "1", threads.stderr[-2000:]


def test_a_run_that_cannot_start_exits_1_and_the_server_serves_the_next(tmp_path):
    """A child that fails before its module runs (here: its folder is gone) never returns into the server's
    loop."""
    (tmp_path / "probe_module.py").write_text(textwrap.dedent(PROBE))
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PRAGEXP_PROBE": "x"}
    with (tmp_path / "err").open("w") as err:
        gone = forked_runs.start(
            "probe_module", ["0"], tmp_path / "gone", env, err.fileno(), err.fileno(), fork=True
        )
        assert gone.wait(timeout=120) == 1
    assert "FileNotFoundError" in (tmp_path / "err").read_text()
    assert _ended(tmp_path, "3", fork=True)[:2] == (forked_runs.ForkedRun, 3)
