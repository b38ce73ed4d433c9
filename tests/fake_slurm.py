"""A stand-in for SLURM's `sbatch`, `srun`, `sacct`, `scancel` and `scontrol` on one machine, for the one test
that the real one-node test cluster cannot run: multi-node DDP (tests/test_multinode_fake_slurm.py).

It does what the real commands do for the jobs submitit writes, no more: `sbatch FILE` prints a job
id and, in the background, runs the script once per array task with the variables SLURM sets for a
batch job (job and array ids, node and task counts, the node list, from the script's `#SBATCH` flags);
`srun` starts `nodes x ntasks-per-node` copies of its command, each with its own SLURM_PROCID,
SLURM_LOCALID and SLURM_NODEID, as on a cluster where every "node" is this machine; `sacct` reports
each job's state (RUNNING, then COMPLETED or FAILED). `scancel --signal=SIG JOB` sends a signal to the
job's tasks (what SLURM does `--signal=USR2@120` before the time limit, or a test in its place);
`scontrol requeue JOB` records the request (in `requeued.log`) and, once the job's script has exited, runs
it again (state REQUEUED, then RUNNING, SLURM_RESTART_COUNT counting the runs). What a cluster adds
(queueing, real nodes, GPUs, time limits and their signals, killing a job it requeues) is not imitated.

`install(bin_dir)` writes the commands into bin_dir (which also keeps the jobs' states); put it first on PATH.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path


def install(bin_dir: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    for command in ("sbatch", "srun", "sacct", "scancel", "scontrol"):
        shim = bin_dir / command
        shim.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" "{bin_dir}" {command} "$@"\n'
        )
        shim.chmod(0o755)
    return bin_dir


def _array_indices(spec: str | None) -> list[int | None]:
    if not spec:
        return [None]
    first, last = spec.split("%")[0].split("-")
    return list(range(int(first), int(last) + 1))


def _set_state(state_dir: Path, job: str, state: str) -> None:
    tmp = state_dir / f".{job}.tmp"
    tmp.write_text(state)
    tmp.replace(state_dir / f"{job}.state")


def sbatch(state_dir: Path, script: Path) -> int:
    """Prints the job id at once (submitit moves the job's pickle under that id only afterwards) and runs
    the job in a process of its own."""
    job_id = str(random.randint(100_000, 899_999))
    subprocess.Popen(
        [sys.executable, __file__, str(state_dir), "run", str(script), job_id],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    print(f"Submitted batch job {job_id}")
    return 0


def run(state_dir: Path, script: Path, job_id: str) -> int:
    text = script.read_text()
    flags = {k: v for k, v in re.findall(r"^#SBATCH --([\w-]+)=?(.*)$", text, re.MULTILINE)}
    nodes, per_node = int(flags.get("nodes", 1)), int(flags.get("ntasks-per-node", 1))
    indices = _array_indices(flags.get("array"))
    names = [job_id if index is None else f"{job_id}_{index}" for index in indices]
    for name in names:
        _set_state(state_dir, name, "PENDING")
    for i, (index, name) in enumerate(zip(indices, names, strict=True)):
        env = {
            **os.environ,
            "SLURM_JOB_ID": str(int(job_id) + i),
            "SLURM_JOB_NAME": flags.get("job-name", "sbatch"),
            "SLURM_NNODES": str(nodes),
            "SLURM_JOB_NUM_NODES": str(nodes),
            "SLURM_NTASKS": str(nodes * per_node),
            "SLURM_NTASKS_PER_NODE": str(per_node),
            "SLURM_NODELIST": ",".join(["localhost"] * nodes),
            "SLURM_JOB_NODELIST": ",".join(["localhost"] * nodes),
        }
        if index is not None:
            env |= {"SLURM_ARRAY_JOB_ID": job_id, "SLURM_ARRAY_TASK_ID": str(index)}
        code = _run_until_not_requeued(state_dir, script, name, env)
        _set_state(state_dir, name, "COMPLETED" if code == 0 else "FAILED")
    return 0


def _run_until_not_requeued(state_dir: Path, script: Path, name: str, env: dict) -> int:
    for restarts in range(10):
        _set_state(state_dir, name, "RUNNING")
        code = subprocess.run(
            ["bash", str(script)], env={**env, "SLURM_RESTART_COUNT": str(restarts)}
        ).returncode
        request = state_dir / f"{name}.requeue"
        if not request.exists():
            return code
        request.unlink()
        _set_state(state_dir, name, "REQUEUED")
    return code


def _expand(pattern: str, rank: int) -> str:
    env = os.environ
    array_job, array_task = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
    job = f"{array_job}_{array_task}" if array_job else env["SLURM_JOB_ID"]
    return (
        pattern.replace("%A", array_job or job)
        .replace("%a", array_task or "0")
        .replace("%j", job)
        .replace("%t", str(rank))
    )


def srun(state_dir: Path, args: list[str]) -> int:
    files = {"--output": None, "--error": None}
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag in files:
            files[flag] = args.pop(0)
    per_node = int(os.environ["SLURM_NTASKS_PER_NODE"])
    procs = []
    for rank in range(int(os.environ["SLURM_NTASKS"])):
        env = {
            **os.environ,
            "SLURM_PROCID": str(rank),
            "SLURM_LOCALID": str(rank % per_node),
            "SLURM_NODEID": str(rank // per_node),
            "SLURM_STEP_ID": "0",
        }
        out = {}
        for flag, name in (("--output", "stdout"), ("--error", "stderr")):
            if files[flag]:
                path = Path(_expand(files[flag], rank))
                path.parent.mkdir(parents=True, exist_ok=True)
                out[name] = path.open("a")
        procs.append(subprocess.Popen(args, env=env, **out))
    (state_dir / f"{_expand('%j', 0)}.pids").write_text(" ".join(str(p.pid) for p in procs))  # for scancel
    return max(p.wait() for p in procs)


def sacct(state_dir: Path, args: list[str]) -> int:
    print("JobID|State|NodeList")
    for i, arg in enumerate(args):
        if arg == "-j":
            for path in sorted(state_dir.glob(f"{args[i + 1]}*.state")):
                print(f"{path.name.removesuffix('.state')}|{path.read_text()}|localhost")
    return 0


def scancel(state_dir: Path, args: list[str]) -> int:
    """`scancel --signal=NAME JOB`: the signal to every task of the job's step (not to its batch script)."""
    (flag,) = [a for a in args if a.startswith("--signal=")]
    name = flag.split("=", 1)[1].removeprefix("SIG")
    for pid in (state_dir / f"{args[-1]}.pids").read_text().split():
        os.kill(int(pid), getattr(signal, f"SIG{name}"))
    return 0


def scontrol(state_dir: Path, args: list[str]) -> int:
    """`scontrol requeue JOB`: the job runs again once its script has exited."""
    assert args[0] == "requeue", args
    (state_dir / f"{args[1]}.requeue").touch()
    with (state_dir / "requeued.log").open("a") as log:
        log.write(f"{args[1]}\n")
    return 0


if __name__ == "__main__":
    state_dir, command, *rest = sys.argv[1:]
    state_dir = Path(state_dir)
    if command == "sbatch":
        sys.exit(sbatch(state_dir, Path(rest[-1])))
    if command == "run":
        sys.exit(run(state_dir, Path(rest[0]), rest[1]))
    commands = {"srun": srun, "sacct": sacct, "scancel": scancel, "scontrol": scontrol}
    sys.exit(commands[command](state_dir, rest))
