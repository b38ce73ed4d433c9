"""A one-node SLURM cluster in a folder, on 127.0.0.1, for the tests marked `slurm` (tests/test_cluster.py,
tests/test_signals.py).

Debian's packages (`slurm-wlm`, `slurmdbd`, `munge`, `mariadb-server`; `.ci/run` installs them) run as root:
munged (authentication), MariaDB and slurmdbd (accounting), slurmctld (the scheduler) and slurmd (the node,
this machine, with its cores and memory). It starts in about 3 s. Accounting is there because submitit reads
its jobs' states with `sacct`. Measured without slurmdbd (AccountingStorageType=accounting_storage/none,
JobCompType=jobcomp/filetxt): `sacct -j ID` answers "Slurm accounting storage is disabled" while the job
runs and after it ends, and submitit then takes every state as UNKNOWN, so a failed job passes for a
finished one; `sacct -c` reads the job completion log, but submitit does not call it, and that log holds
only ended jobs (no RUNNING, no REQUEUED runs). slurmdbd stores in MySQL/MariaDB only.

Every daemon runs in the foreground as a child of the tests, its config, state and log in the folder. `stop`
cancels what jobs are left (scancel and squeue each given a few seconds: a stuck controller holds up nothing),
then ends each daemon by its pid (SIGTERM, a wait, SIGKILL), then whatever the cluster started that is still
there (a job's slurmstepd and its processes, which outlive slurmd: each has this cluster's SLURM_CONF in its
environment). Nothing outlives the process that started the cluster, even one killed with SIGKILL: the kernel
kills each daemon when that process dies (PR_SET_PDEATHSIG), and a watchdog, told the same way, then ends the
rest as `stop` does. `database` makes a database and a user on the cluster's MariaDB (an Optuna study's
storage).

`python tests/slurm_cluster.py DIR` starts one and waits (Ctrl-C or `kill` stops it), to try commands by hand
with `SLURM_CONF=DIR/etc/slurm.conf`.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from slurm_processes import dies_with_parent, end_process, end_started_by, watch

COMMANDS = (
    "munged",
    "mariadbd",
    "mariadb-install-db",
    "slurmdbd",
    "slurmctld",
    "slurmd",
    "sbatch",
    "sacct",
    "sacctmgr",
)
PACKAGES = "slurm-wlm slurmdbd munge mariadb-server"
CLUSTER = "pragexp"


def missing() -> str | None:
    """Why a cluster cannot start here (None: it can)."""
    absent = [name for name in COMMANDS if _which(name) is None]
    if absent:
        return f"SLURM is not installed: no {', '.join(absent)} (Debian: apt-get install {PACKAGES})"
    if os.geteuid() != 0:
        return (
            "the test cluster's daemons run as root (slurmd starts each job as its user); "
            f"uid {os.geteuid()} here"
        )
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(name: str) -> str:
    return shutil.which(name, path=f"{os.environ['PATH']}:/usr/sbin")


class SlurmCluster:
    """`start()` brings the daemons up and waits for the node to be idle; `env` is what a client needs
    (SLURM_CONF); `stop()` ends them. `cpus` and `memory_mb` are what the node declares."""

    def __init__(self, root: Path, cpus: int | None = None, memory_mb: int = 8000):
        self.root = Path(root)
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb = memory_mb
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.conf = self.root / "etc" / "slurm.conf"
        # Unix sockets' paths are limited to 108 bytes, and slurmd's step sockets (in its spool dir) add ~20
        # to the folder's: a test's folder under pytest-xdist's popen-gwN/ goes over. Sockets live in a short
        # folder of /tmp, removed by stop().
        self.sockets = Path(tempfile.mkdtemp(prefix="slurm-", dir="/tmp"))
        self.munge_socket = self.sockets / "munge.socket"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    # -- processes -------------------------------------------------------------------------------------

    def _start(self, name: str, args: list[str], dies_with=signal.SIGKILL) -> subprocess.Popen:
        """A daemon, in a session of its own (a Ctrl-C in the tests' terminal is not theirs), that the kernel
        sends `dies_with` when this process dies."""
        log = (self.root / "log" / f"{name}.out").open("ab")
        proc = subprocess.Popen(
            [_which(args[0]), *args[1:]],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            start_new_session=True,
            preexec_fn=dies_with_parent(os.getpid(), dies_with),
        )
        self.procs.append((name, proc))
        return proc

    def _wait(self, what: str, ready, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited {proc.returncode} while waiting for {what}:\n{self.logs()}"
                    )
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} after {timeout} s:\n{self.logs()}")
            time.sleep(0.2)

    def run(self, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """A SLURM command (sinfo, squeue, sacct, scontrol ...) as a client of this cluster."""
        return subprocess.run(
            [_which(args[0]), *args[1:]],
            env=self.env,
            capture_output=True,
            text=True,
            check=check,
            timeout=timeout,
        )

    def database(self, name: str, user: str, password: str) -> str:
        """A new database `name` on the cluster's MariaDB, all of it granted to `user` (from any host, with
        `password`): its SQLAlchemy URL through PyMySQL, as a lab's server is reached."""
        statements = [
            f"CREATE DATABASE {name}",
            f"CREATE USER IF NOT EXISTS '{user}'@'%' IDENTIFIED BY '{password}'",
            f"CREATE USER IF NOT EXISTS '{user}'@'localhost' IDENTIFIED BY '{password}'",
            f"GRANT ALL ON {name}.* TO '{user}'@'%'",
            f"GRANT ALL ON {name}.* TO '{user}'@'localhost'",
        ]
        client = [
            _which("mariadb"),
            "--protocol=TCP",
            "-h",
            "127.0.0.1",
            "-P",
            str(self.db_port),
            "-u",
            "root",
        ]
        subprocess.run([*client, "-e", "; ".join(statements)], capture_output=True, check=True, timeout=60)
        return f"mysql+pymysql://{user}:{password}@127.0.0.1:{self.db_port}/{name}"

    def logs(self, lines: int = 30) -> str:
        parts = []
        for path in sorted((self.root / "log").glob("*")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"== {path.name}\n" + "\n".join(text))
        return "\n".join(parts)

    # -- the daemons -----------------------------------------------------------------------------------

    def start(self) -> SlurmCluster:
        for sub in ("etc", "munge", "db", "log", "state"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.sockets / "spool").mkdir(exist_ok=True)
        try:
            # First: it ends what the cluster started if this process dies (the daemons die with it by
            # themselves).
            self._start(
                "watchdog", [sys.executable, __file__, "--watch", str(self.conf)], dies_with=signal.SIGTERM
            )
            self._start_munge()
            self._start_database()
            self._write_configs()
            self._start("slurmdbd", ["slurmdbd", "-D"])
            self._wait("slurmdbd", lambda: self._port_open(self.dbd_port))
            self._start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
            self._wait("slurmctld", lambda: self.run("scontrol", "ping", check=False).returncode == 0)
            self._start("slurmd", ["slurmd", "-D", "-N", "localhost", "-f", str(self.conf)])
            self._wait("an idle node", self._node_idle)
            self._wait("accounting", self._accounting_ready)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munge(self) -> None:
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        args = ["munged", "-F", "--force", f"--key-file={key}", f"--socket={self.munge_socket}"]
        args += [
            f"--pid-file={self.root / 'munge' / 'munged.pid'}",
            f"--seed-file={self.root / 'munge' / 'seed'}",
        ]
        args += [f"--log-file={self.root / 'log' / 'munged.log'}"]
        self._start("munged", args)
        self._wait("munge's socket", self.munge_socket.exists)

    def _start_database(self) -> None:
        data = self.root / "db"
        self.db_port = _free_port()
        install = [_which("mariadb-install-db"), "--no-defaults", f"--datadir={data}", "--user=root"]
        install += ["--skip-test-db", "--auth-root-authentication-method=normal"]
        subprocess.run(install, capture_output=True, check=True, timeout=120)
        args = ["mariadbd", "--no-defaults", f"--datadir={data}", "--user=root", "--bind-address=127.0.0.1"]
        args += [
            f"--port={self.db_port}",
            f"--socket={self.sockets / 'mysqld.sock'}",
            f"--pid-file={data / 'mysqld.pid'}",
        ]
        args += [
            "--skip-log-bin",
            "--innodb-buffer-pool-size=32M",
            f"--log-error={self.root / 'log' / 'mariadb.log'}",
        ]
        self._start("mariadbd", args)
        self._wait("MariaDB", lambda: self._port_open(self.db_port))

    def _write_configs(self) -> None:
        self.ctld_port, self.slurmd_port, self.dbd_port = _free_port(), _free_port(), _free_port()
        host = socket.gethostname()
        etc, log, state = self.root / "etc", self.root / "log", self.root / "state"
        auth = f"AuthInfo=socket={self.munge_socket}"
        self._write_slurmdbd_conf(etc / "slurmdbd.conf", host, auth, log, state)
        self._write_slurm_conf(host, auth, log, state)

    def _write_slurmdbd_conf(self, dbd: Path, host: str, auth: str, log: Path, state: Path) -> None:
        """slurmdbd's config: accounting stored in the cluster's MariaDB."""
        dbd.write_text(
            "\n".join(
                [
                    auth,
                    "AuthType=auth/munge",
                    f"DbdHost={host}",
                    "DbdAddr=127.0.0.1",
                    f"DbdPort={self.dbd_port}",
                    "SlurmUser=root",
                    f"LogFile={log / 'slurmdbd.log'}",
                    f"PidFile={state / 'slurmdbd.pid'}",
                    "StorageType=accounting_storage/mysql",
                    "StorageHost=127.0.0.1",
                    f"StoragePort={self.db_port}",
                    "StorageUser=root",
                    "StorageLoc=slurm_acct_db",
                    "",
                ]
            )
        )
        dbd.chmod(0o600)  # slurmdbd refuses a config others can read

    def _write_slurm_conf(self, host: str, auth: str, log: Path, state: Path) -> None:
        """slurm.conf: the controller, this one node and its partition, accounting through slurmdbd."""
        self.conf.write_text(
            "\n".join(
                [
                    f"ClusterName={CLUSTER}",
                    f"SlurmctldHost={host}(127.0.0.1)",
                    f"SlurmctldPort={self.ctld_port}",
                    f"SlurmdPort={self.slurmd_port}",
                    # cred_expire: also how long a requeued job waits before it may start again (120 s)
                    f"{auth},cred_expire=10",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    f"StateSaveLocation={state}",
                    f"SlurmdSpoolDir={self.sockets / 'spool'}",
                    f"SlurmctldPidFile={state / 'slurmctld.pid'}",
                    f"SlurmdPidFile={state / 'slurmd.pid'}",
                    f"SlurmctldLogFile={log / 'slurmctld.log'}",
                    f"SlurmdLogFile={log / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",  # no cgroups in a container
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "MpiDefault=none",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core_Memory",
                    "SchedulerType=sched/backfill",
                    "DefMemPerCPU=1000",  # a job without --mem takes this, not the whole node
                    "AccountingStorageType=accounting_storage/slurmdbd",
                    "AccountingStorageHost=127.0.0.1",
                    f"AccountingStoragePort={self.dbd_port}",
                    f"AccountingStoragePass={self.munge_socket}",  # munge's socket, for slurmdbd
                    "MailProg=/bin/true",
                    "JobRequeue=1",
                    "ReturnToService=2",
                    "KillWait=10",  # SIGTERM at the time limit, SIGKILL this long after
                    "MinJobAge=600",
                    f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} "
                    "State=UNKNOWN",
                    "PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )

    @staticmethod
    def _port_open(port: int) -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    def _node_idle(self) -> bool:
        out = self.run("sinfo", "--noheader", "--format=%t", check=False).stdout.split()
        return out == ["idle"]

    def _accounting_ready(self) -> bool:
        return (
            CLUSTER
            in self.run("sacctmgr", "--noheader", "--parsable2", "list", "cluster", check=False).stdout
        )

    def stop(self) -> None:
        """Cancels the jobs still there, then ends every daemon this cluster started, by pid, the last started
        first, then what else it started (see the module docstring). scancel and squeue get a few seconds
        each."""
        if any(name == "slurmd" and proc.poll() is None for name, proc in self.procs):
            try:
                self.run("scancel", "--full", "--user=root", check=False, timeout=5)
                deadline = time.monotonic() + 30
                while self.run("squeue", "--noheader", check=False, timeout=5).stdout.strip():
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
            except subprocess.TimeoutExpired:
                pass  # a controller that does not answer: its daemons are ended all the same
        for _name, proc in reversed(self.procs):
            end_process(proc.pid, proc.wait)
        end_started_by(self.conf)  # a job's slurmstepd and its processes, left by an unanswered scancel
        self.procs.clear()
        shutil.rmtree(self.sockets, ignore_errors=True)


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """One cluster for the whole test session (it starts in about 10 s), stopped after the last test."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm")).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def slurm(slurm_cluster, monkeypatch):
    """The session's cluster, with SLURM_CONF set for this test's commands (and the jobs they submit)."""
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster.conf))
    return slurm_cluster


if __name__ == "__main__" and sys.argv[1:2] == ["--watch"]:
    watch(Path(sys.argv[2]))
elif __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops the daemons too
    cluster = SlurmCluster(Path(sys.argv[1])).start()
    print(f"export SLURM_CONF={cluster.conf}", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        cluster.stop()
