"""`python -m <module> <args>` for the tests, without paying the imports each time.

Most of a test run's seconds in a subprocess go to importing torch, Lightning and transformers (about five of
a small run's six on this machine's cores), and the suite starts hundreds of them. So each pytest worker keeps
one server process that has imported those once and forks a child for each run. The child is a process of its
own, with its own pid, working directory, environment, arguments and standard streams; it runs the module as
`python -m` does (`runpy`, `sys.argv`, `sys.path[0]` = the working directory) and exits as the interpreter
does (non-daemon threads joined, atexit handlers run, the exit code or the signal that ended it reported).

A run forks only from a server whose imports saw the same environment: one started with the same variables
outside SAFE_PREFIXES (a run in another environment gets a server of its own, and the worker's idle servers
of other environments are stopped). PRAGEXP_TEST_FORK=0 (or `fork=False`) runs a real subprocess instead.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

# Read at run time, never at import by what the server imports (pragexp itself is imported afresh in each
# child); PYTHONPATH's effect, sys.path, is rebuilt in the child.
SAFE_PREFIXES = ("PRAGEXP_", "PYTEST_", "STOP_AT", "WANDB_", "HYDRA_", "PYTHONPATH")
# What a run imports that costs: torch, Lightning (and through it torchmetrics, scipy, torch._dynamo),
# transformers, Hydra. Nothing here starts a thread with OMP_NUM_THREADS=1 (tests/test_forked_runs.py).
PRELOAD = ("torch", "pytorch_lightning", "transformers", "hydra", "hydra._internal.utils", "omegaconf")
POLL_S = 0.05


class ForkedRun:
    """A run the server forked: the parts of subprocess.Popen the tests use (pid, poll, wait, returncode)."""

    def __init__(self, conn: socket.socket, args: list[str]):
        self.conn, self.args, self.returncode = conn, args, None
        self.pid = json.loads(conn.recv(4096))["pid"]

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self.conn], [], [], 0)[0]:
            self._ended()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self.conn], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._ended()
        return self.returncode

    def _ended(self) -> None:
        message = self.conn.recv(4096)
        self.conn.close()
        if not message:
            raise RuntimeError(f"the fork server ended before run {self.pid} did")
        self.returncode = json.loads(message)["returncode"]

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """A server process of this pytest worker, started in `env` and stopped (by pid) when no longer needed."""

    def __init__(self, env: dict):
        self.folder = Path(tempfile.mkdtemp(prefix="pragexp-forks-"))
        self.path = str(self.folder / "socket")
        self.runs: list[ForkedRun] = []  # those not seen to end yet
        self.proc = subprocess.Popen([sys.executable, __file__, self.path], env=env, stdin=subprocess.DEVNULL)
        atexit.register(self.stop)
        deadline = time.monotonic() + 120
        while not os.path.exists(self.path):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the fork server did not start (exit {self.proc.returncode})")
            time.sleep(POLL_S)

    def start(self, module, args, cwd, env, stdout, stderr) -> ForkedRun:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(self.path)
        request = {"module": module, "args": args, "cwd": str(cwd), "env": env}
        with open(os.devnull) as stdin:
            socket.send_fds(conn, [json.dumps(request).encode()], [stdin.fileno(), stdout, stderr])
        self.runs.append(ForkedRun(conn, [module, *args]))
        return self.runs[-1]

    def idle(self) -> bool:
        self.runs = [run for run in self.runs if run.poll() is None]
        return not self.runs

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # it ends its runs and removes its folder
            self.proc.wait(timeout=30)
        shutil.rmtree(self.folder, ignore_errors=True)


# The worker's servers, by the part of their environment an import may read (`import_env`): one in use, and
# any other that still has a run going.
_servers: dict[tuple, ForkServer] = {}


def import_env(env: dict) -> tuple:
    """What of `env` a server's imports may have read: a run forks from a server started with the same."""
    return tuple(sorted((k, v) for k, v in env.items() if not k.startswith(SAFE_PREFIXES)))


def server_for(env: dict) -> ForkServer:
    key = import_env(env)
    for other in [k for k, server in _servers.items() if k != key and server.idle()]:
        _servers.pop(other).stop()
    if key not in _servers:
        _servers[key] = ForkServer(env)
    return _servers[key]


def start(
    module: str, args: list[str], cwd: Path, env: dict, stdout: int, stderr: int, fork: bool | None = None
):
    """`python -m module args` in cwd with env, its output to the file descriptors stdout and stderr: a
    ForkedRun from the worker's server for env's import-time variables where `fork` (by default
    PRAGEXP_TEST_FORK != 0), else a subprocess.Popen."""
    if os.environ.get("PRAGEXP_TEST_FORK", "1") != "0" if fork is None else fork:
        return server_for(env).start(module, args, cwd, env, stdout, stderr)
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
    )


# The server side, run as `python tests/forked_runs.py <socket path>`.


def serve(path: str) -> None:
    for name in PRELOAD:
        __import__(name)
    base_path = [p for p in sys.path[1:] if p not in os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # the client waits for the name: it appears once the server listens
    runs: dict[int, socket.socket] = {}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    worker = os.getppid()
    try:
        while os.getppid() == worker:  # a worker killed outright takes its server along
            for conn in select.select([listener, *runs.values()], [], [], POLL_S)[0]:
                if conn is listener:
                    _fork(listener, runs, base_path)
                else:  # a client that hangs up before its run has ended: the run goes with it
                    os.kill(next(p for p, c in runs.items() if c is conn), signal.SIGKILL)
            _reap(runs)
    finally:
        for pid in runs:
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _fork(listener: socket.socket, runs: dict[int, socket.socket], base_path: list[str]) -> None:
    client = listener.accept()[0]
    message, fds, _, _ = socket.recv_fds(client, 1 << 20, 3)
    pid = os.fork()
    if pid == 0:
        try:  # the child never returns into the server's loop, whatever fails before the module runs
            listener.close()
            for conn in (client, *runs.values()):
                conn.close()
            _child(json.loads(message), fds, base_path)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(1)
    for fd in fds:
        os.close(fd)
    client.send(json.dumps({"pid": pid}).encode())
    runs[pid] = client


def _reap(runs: dict[int, socket.socket]) -> None:
    while runs:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = runs.pop(pid)
        try:
            conn.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
        except OSError:
            pass  # the client has gone
        conn.close()


def _child(request: dict, fds: list[int], base_path: list[str]) -> None:
    """In the forked child: become `python -m module args` and exit as the interpreter would."""
    import runpy
    import threading

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.getcwd(), *extra, *base_path]
    sys.argv = [request["module"], *request["args"]]
    code, interrupted = 0, False
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = _exit_code(stop.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        interrupted = True
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    if interrupted:  # as the interpreter does: die of SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    serve(sys.argv[1])
