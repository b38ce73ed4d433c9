"""Beyond one machine, as users type it, on a real one-node SLURM cluster that the tests start
(tests/slurm_cluster.py): a launcher=slurm sweep with a job that fails, DDP over two tasks, an Optuna sweep of
SLURM jobs killed and resumed, one on a database server. The Optuna sweeper on this machine:
tests/test_optuna_sweeps.py."""

import json
import os
import re
import signal

import optuna
import pytest
from conftest import FAST, GRICE_FIXTURE, ROOT, TINY_DATA, run_module
from test_signals import SLURM_JOB, Job, job_states, submitit_logs

pytestmark = pytest.mark.slow  # launchers, sweeps and SLURM jobs: subprocesses and studies


def sbatch_flags(sweep) -> dict[str, str]:
    (script,) = (sweep / ".submitit").glob("*/*_submission.sh")
    return dict(re.findall(r"^#SBATCH --([\w-]+)=(.*)$", script.read_text(), re.MULTILINE))


@pytest.mark.slurm
def test_a_slurm_sweep_runs_each_job_on_the_cluster_and_reports_the_one_that_failed(
    slurm, tmp_path, cache_dir
):
    sweep = tmp_path / "sweep"
    args = [
        *SLURM_JOB,
        "hydra.launcher.partition=debug",
        "+hydra.launcher.additional_parameters.mail-type=END",
    ]
    args += [*FAST, *TINY_DATA["grice"], f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep}"]
    proc = run_module("pragexp.train", [*args, "optimizer.lr=1e-3,-1"], tmp_path)  # -1: Adam refuses it
    log = proc.stdout + proc.stderr
    assert proc.returncode == 1, log[-3000:]
    flags = sbatch_flags(sweep)  # what pragexp has submitit write, accepted by a real sbatch
    assert flags["array"] == "0-1%2" and flags["partition"] == "debug" and flags["mail-type"] == "END"
    assert (flags["nodes"], flags["ntasks-per-node"], flags["cpus-per-task"]) == ("1", "1", "1")
    assert flags["time"] == "720" and flags["signal"] == "USR2@120" and "gpus-per-node" not in flags
    # The job that ran: its outputs in its own dir, SLURM's logs linked beside them.
    assert "test/r@1" in json.loads((sweep / "0" / "metrics.json").read_text())
    out, _ = submitit_logs(sweep / "0")
    assert f"({sweep / '0'}, " in out.read_text()  # the job's summary line
    # The one that failed: the sweep exits 1 with its error and the end of its log, which has the traceback.
    _, err = submitit_logs(sweep / "1")
    assert "ValueError: Invalid learning rate: -1" in err.read_text()
    assert f"job 1 failed; the end of its log {err}" in log and log.count("Invalid learning rate: -1") >= 2
    assert not (sweep / "1" / "metrics.json").exists()
    assert "Bypassing sacct error" not in log  # submitit read every state from SLURM's accounting


@pytest.mark.slurm
def test_a_slurm_ddp_job_of_two_tasks_counts_every_example_once(slurm, tmp_path):
    rounds = sum(len(d["dialog"]) for d in json.loads(GRICE_FIXTURE.read_text())["data"]["dialogs"])
    assert rounds % 2 == 1  # odd: the distributed sampler repeats one example to even out 2 ranks
    sweep = tmp_path / "sweep"
    args = [
        *SLURM_JOB,
        "trainer=ddp",
        "trainer.devices=2",
        "trainer.num_nodes=1",
        *FAST,
        "data=grice_official",
    ]
    args += [f"data.{split}_path={GRICE_FIXTURE}" for split in ("train", "val", "test")]
    args += ["data.eval_batch_size=4", f"hydra.sweep.dir={sweep}"]
    proc = run_module("pragexp.train", args, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sbatch_flags(sweep)["ntasks-per-node"] == "2"  # srun starts the two ranks, one task each
    logs = (sweep / "0" / ".submitit").resolve()
    rank1 = "".join(p.read_text() for p in logs.glob("*_1_log.*"))
    assert "GLOBAL_RANK: 1, MEMBER: 2/2" in rank1  # the second task joined as rank 1 of 2
    assert json.loads((sweep / "0" / "metrics.json").read_text())["test/count"] == rounds


@pytest.mark.slurm
def test_an_optuna_sweep_of_slurm_jobs_killed_and_run_again_goes_on_with_its_study(
    slurm, tmp_path, cache_dir
):
    sweep = tmp_path / "sweep"
    args = ["hparams_search=optuna", *SLURM_JOB, *FAST, *TINY_DATA["grice"], "hydra.sweeper.n_trials=2"]
    args += [f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep}"]
    first = Job("pragexp.train", args, tmp_path)
    first.wait_for(lambda: (sweep / "1" / ".submitit").exists())  # trial 1's SLURM job has started
    assert first.stop(signal.SIGKILL) == -signal.SIGKILL  # the sweep's process dies (its terminal closed)
    storage = f"sqlite:///{sweep}/optuna.db"
    killed = optuna.load_study(study_name="grice_recovery-lstm", storage=storage)
    assert [t.state.name for t in killed.trials] == ["COMPLETE", "RUNNING"]
    slurm.run("scancel", (sweep / "1" / ".submitit").resolve().name)  # its orphaned job, as a user would

    again = run_module("pragexp.train", args, tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    study = optuna.load_study(study_name="grice_recovery-lstm", storage=storage)
    assert [t.state.name for t in study.trials] == ["COMPLETE", "FAIL", "COMPLETE"]
    assert study.trials[2].params == killed.trials[1].params  # the interrupted trial ran again, as trial 2
    assert "1 of 2 trials finished, 1 to run" in again.stdout + again.stderr
    for trial in (study.trials[0], study.trials[2]):  # each a SLURM job in its trial's dir
        metrics = json.loads((sweep / str(trial.number) / "metrics.json").read_text())
        assert trial.value == pytest.approx(metrics["val/r@1"])
        assert (sweep / str(trial.number) / ".submitit").is_symlink()


def sweep_on(storage: str, sweep, tmp_path, kill: bool = False) -> Job:
    """An Optuna sweep of 3 trials with pruning (the median pruner after 1 trial), each a SLURM job, its study
    in `storage` (a URL named by the environment: OPTUNA_STORAGE). With `kill`, trial 1's job waits at its
    third batch for the test's scancel."""
    args = [
        "hparams_search=optuna",
        *SLURM_JOB,
        *FAST,
        *TINY_DATA["grice"],
        "logger=csv",
        "trainer.max_epochs=2",
    ]
    args += ["hydra.sweeper.n_trials=3", "hydra.sweeper.pruner.n_startup_trials=1"]
    args += ["hydra.sweeper.storage=${oc.env:OPTUNA_STORAGE}", f"hydra.sweep.dir={sweep}"]
    args += ["+callbacks.stop_at._target_=stop_at.StopAt", "+callbacks.stop_at.where=train"]
    args += ["+callbacks.stop_at.batch=2", "+callbacks.stop_at.how=wait", "+callbacks.stop_at.run=1"]
    env = {"OPTUNA_STORAGE": storage, **({"STOP_AT": "1"} if kill else {})}
    (tmp_path / sweep.name).mkdir()
    return Job("pragexp.train", args, tmp_path / sweep.name, pythonpath=(ROOT / "tests",), env=env)


@pytest.mark.slurm
def test_an_optuna_sweep_on_a_database_server_survives_a_killed_trial_and_finds_the_same_best(
    slurm, tmp_path
):
    """Two sweeps with the same sampler seed, each study in a database of the cluster's MariaDB (reached as a
    lab's server is, by URL and password), their jobs on the cluster: one runs through, in the other trial 1's
    job is cancelled (scancel) while it trains. That trial is FAIL, its parameters run again as trial 2, the
    sweep goes on to its 3 finished trials, and its best trial is the uninterrupted sweep's, parameters and
    value."""
    pytest.importorskip(
        "pymysql", reason="Optuna's MySQL storage needs PyMySQL (pip install -e '.[cluster]')"
    )
    password = "pr4gexp-" + os.urandom(6).hex()  # given by name (OPTUNA_STORAGE), never written to a file
    urls = {name: slurm.database(f"optuna_{name}", "optuna", password) for name in ("plain", "killed")}
    plain = sweep_on(urls["plain"], tmp_path / "plain", tmp_path)
    killed_dir = tmp_path / "killed"
    killed = sweep_on(urls["killed"], killed_dir, tmp_path, kill=True)
    killed.wait_for(lambda: "stop_at: waiting for the signal" in job_stdout(killed_dir / "1"))
    slurm.run("scancel", (killed_dir / "1" / ".submitit").resolve().name)
    for sweep in (plain, killed):
        assert sweep.proc.wait(timeout=600) == 0, sweep.log()[-3000:]

    studies = {
        name: optuna.load_study(study_name="grice_recovery-lstm", storage=url) for name, url in urls.items()
    }
    trials = studies["killed"].trials
    assert trials[1].state.name == "FAIL" and trials[2].params == trials[1].params  # run again, as trial 2
    assert (
        "Trial 1's job ended without a result" in killed.log() and "its parameters run again" in killed.log()
    )
    assert job_states(slurm, killed_dir / "1") == ["CANCELLED"]
    for study in studies.values():
        finished = [t for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")]
        assert len(finished) == 3 and all(t.intermediate_values for t in finished)  # the jobs reported
    best = {name: (study.best_trial.params, study.best_trial.value) for name, study in studies.items()}
    assert best["killed"] == best["plain"]
    # The same trials in order, but the killed one (the sampler's draws and the pruner's verdicts the same).
    ended = [(t.params, t.state, t.value, t.intermediate_values) for t in trials if t.number != 1]
    assert [(t.params, t.state, t.value, t.intermediate_values) for t in studies["plain"].trials] == ended
    for sweep_dir in (tmp_path / "plain", killed_dir):  # the password is in no file the sweeps wrote
        assert not [p for p in sweep_dir.rglob("*") if p.is_file() and password.encode() in p.read_bytes()]
    print(f"best of both: trial params {best['plain'][0]}, val/r@1 {best['plain'][1]:.4f}")


def job_stdout(run_dir) -> str:
    """A SLURM job's stdout so far ("" before it has started)."""
    logs = run_dir / ".submitit"
    return "".join(p.read_text() for p in logs.glob("*_0_log.out")) if logs.exists() else ""
