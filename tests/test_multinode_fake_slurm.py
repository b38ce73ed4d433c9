"""Multi-node DDP under launcher=slurm, the one thing the real one-node test cluster (tests/slurm_cluster.py)
cannot show: two nodes. SLURM's commands are imitated here (tests/fake_slurm.py: srun starts one process per
task with SLURM's variables); every other SLURM test runs on the real cluster (tests/test_cluster.py)."""

import json
import os
import re

import fake_slurm
import pytest
from conftest import FAST, GRICE_FIXTURE, run_module

pytestmark = pytest.mark.slow  # a fake SLURM job of two DDP ranks in subprocesses


def test_slurm_launcher_starts_two_nodes_of_ddp_and_counts_every_example_once(tmp_path, monkeypatch):
    # SLURM's commands, imitated on this machine: srun starts one process per task with SLURM's variables.
    monkeypatch.setenv("PATH", f"{fake_slurm.install(tmp_path / 'bin')}:{os.environ['PATH']}")
    rounds = sum(len(d["dialog"]) for d in json.loads(GRICE_FIXTURE.read_text())["data"]["dialogs"])
    assert rounds % 2 == 1  # odd: the distributed sampler repeats one example to even out 2 ranks
    sweep = tmp_path / "sweep"
    args = [
        "launcher=slurm",  # no -m: a launcher implies a multirun
        "trainer=ddp",
        "trainer.num_nodes=2",
        "trainer.devices=1",
        "hydra.launcher.gpus_per_node=null",  # CPU ranks (gloo) here
        "hydra.launcher.partition=debug",
        "hydra.launcher.account=pragmatics",
        "+hydra.launcher.additional_parameters.mail-type=END",
        *FAST,
        "data=grice_official",
        f"data.train_path={GRICE_FIXTURE}",
        f"data.val_path={GRICE_FIXTURE}",
        f"data.test_path={GRICE_FIXTURE}",
        "data.eval_batch_size=4",
        f"hydra.sweep.dir={sweep}",
    ]
    proc = run_module("pragexp.train", args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (script,) = (sweep / ".submitit").glob("*/*_submission.sh")
    flags = dict(re.findall(r"^#SBATCH --([\w-]+)=(.*)$", script.read_text(), re.MULTILINE))
    assert flags["nodes"] == "2" and flags["ntasks-per-node"] == "1"  # one task per device
    assert flags["partition"] == "debug" and flags["account"] == "pragmatics" and flags["mail-type"] == "END"
    assert flags["time"] == "720" and "gpus-per-node" not in flags
    logs = sweep / "0" / ".submitit"
    # Lightning's own lines go through the job's logging (Hydra's console handler: stdout), its warnings to
    # stderr
    rank1 = "".join(p.read_text() for p in logs.glob("*_1_log.*"))
    assert "GLOBAL_RANK: 1, MEMBER: 2/2" in rank1  # the second task joined as rank 1 of 2
    metrics = json.loads((sweep / "0" / "metrics.json").read_text())
    assert metrics["test/count"] == rounds
