"""Beyond one machine, as users type it. On a real one-node SLURM cluster that the tests start
(tests/slurm_cluster.py): a launcher=slurm sweep with a job that fails, DDP over two tasks, an Optuna sweep of
SLURM jobs killed and resumed. On this machine: pragexp's Optuna sweeper
(hydra_plugins/pragexp_optuna_sweeper) resuming an interrupted study, pruning, several objectives, the search
space; and that pragexp installs beside current Optuna and SQLAlchemy."""

import json
import os
import re
import signal
import subprocess
import sys

import optuna
import pytest
import yaml
from conftest import GRICE_FIXTURE, ROOT, TINY_DATA, TINY_MODEL, compose_config, migrated, run_module
from omegaconf import OmegaConf
from test_signals import SLURM_JOB, Job, job_states, submitit_logs

from pragexp import report
from pragexp.utils.search_space import around_task_settings

pytestmark = pytest.mark.slow  # launchers, sweeps and SLURM jobs: subprocesses and studies

FAST = [
    "model=lstm",
    "logger=none",
    "trainer.max_epochs=1",
    "trainer.accelerator=cpu",
    "callbacks.progress_bar=null",
    "print_config=false",
    *TINY_MODEL["lstm"],
]


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


# -- Optuna ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def optuna_sweep(tmp_path_factory, cache_dir):
    """A 3-trial study run as on a cluster: its first 2 trials run together as 2 submitit jobs, then the
    sweep is stopped while a third is running (what a killed sweeper leaves: a RUNNING trial in the study
    and a job dir without metrics), then the same command with n_trials=3 is run again (here without
    submitit, so the resumed trial runs in the sweeper's process)."""
    root = tmp_path_factory.mktemp("optuna")
    sweep = root / "sweep"
    args = ["hparams_search=optuna", *FAST, *TINY_DATA["grice"], f"paths.cache_dir={cache_dir}"]
    args.append(f"hydra.sweep.dir={sweep}")
    batch = ["launcher=submitit_local", "hydra.sweeper.n_trials=2", "hydra.sweeper.n_jobs=2"]
    first = run_module("pragexp.train", [*args, *batch], root)
    assert first.returncode == 0, first.stderr[-3000:]
    before = {job: (sweep / job / "metrics.json").read_bytes() for job in ("0", "1")}

    storage = f"sqlite:///{sweep}/optuna.db"
    study = optuna.load_study(study_name="grice_recovery-lstm", storage=storage)
    interrupted = study.ask()
    around_task_settings(OmegaConf.load(sweep / "multirun.yaml"), interrupted)
    (sweep / "2" / ".hydra").mkdir(parents=True)
    overrides = [f"{k}={v}" for k, v in interrupted.params.items()]
    (sweep / "2" / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))

    second = run_module("pragexp.train", [*args, "hydra.sweeper.n_trials=3"], root)
    assert second.returncode == 0, second.stderr[-3000:]
    return {
        "dir": sweep,
        "study": optuna.load_study(study_name="grice_recovery-lstm", storage=storage),
        "before": before,
        "interrupted": interrupted.params,
        "log": second.stdout + second.stderr,
    }


def test_submitit_local_runs_each_job_in_its_own_dir_with_its_logs(optuna_sweep):
    sweep, study = optuna_sweep["dir"], optuna_sweep["study"]
    for job in ("0", "1"):  # the first invocation's 2 trials, launched together as 2 local submitit jobs
        assert "test/r@1" in json.loads((sweep / job / "metrics.json").read_text())
        lr = study.trials[int(job)].params["optimizer.lr"]
        assert OmegaConf.load(sweep / job / ".hydra" / "config.yaml").optimizer.lr == lr
        logs = sweep / job / ".submitit"  # a link to submitit's folder for this job
        assert logs.is_symlink() and logs.resolve().parent == (sweep / ".submitit").resolve()
        (out,) = logs.glob("*_0_log.out")
        assert f"({sweep / job}, " in out.read_text()  # the job's own stdout, ending with its summary line
    assert not (sweep / "3" / ".submitit").exists()  # the resumed trial ran in the sweeper's process


def test_optuna_sweep_resumes_without_losing_or_repeating_a_trial(optuna_sweep):
    sweep, study = optuna_sweep["dir"], optuna_sweep["study"]
    states = [t.state.name for t in study.trials]
    assert states == ["COMPLETE", "COMPLETE", "FAIL", "COMPLETE"]
    assert "2 of 3 trials finished, 1 to run" in optuna_sweep["log"]
    # The finished trials were neither run again nor overwritten; the interrupted one ran again as trial 3.
    assert {job: (sweep / job / "metrics.json").read_bytes() for job in ("0", "1")} == optuna_sweep["before"]
    assert study.trials[3].params == optuna_sweep["interrupted"]
    assert not (sweep / "2" / "metrics.json").exists()
    finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len({tuple(sorted(t.params.items())) for t in finished}) == 3  # three different settings
    for trial in finished:  # each trial's value is its job's monitored metric, in the job's own dir
        job = sweep / str(trial.number)
        assert trial.value == pytest.approx(json.loads((job / "metrics.json").read_text())["val/r@1"])
        overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text())
        assert f"optimizer.lr={trial.params['optimizer.lr']}" in overrides
        assert {"optimizer.lr", "data.batch_size", "model.dropout"} == set(trial.params)
    assert study.direction == optuna.study.StudyDirection.MAXIMIZE  # the task's monitor_mode


def test_report_on_a_sweep_ranks_trials_and_prints_the_best_as_a_command(optuna_sweep, tmp_path, capsys):
    sweep, study = optuna_sweep["dir"], optuna_sweep["study"]
    plot = tmp_path / "sweep.png"
    assert report.main([str(sweep), "--sweep-plot", str(plot)]) == 0
    text = capsys.readouterr().out
    section = text.split(f"## sweep {sweep}\n", 1)[1]
    assert "3 of 4 trials finished." in section
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    order = [row.split("|")[1].strip() for row in rows]
    ranked = sorted((t for t in study.trials if t.value is not None), key=lambda t: -t.value)
    assert order == [str(t.number) for t in ranked] + ["2"]  # best first; the interrupted trial last
    assert "failed or interrupted" in rows[-1]
    best = study.best_trial
    assert f"Best: trial {best.number}, val/r@1 = {best.value:.4f}" in section
    command = section.split("```\n", 1)[1].split("\n", 1)[0]
    assert command.startswith("python -m pragexp.train ")
    assert f"optimizer.lr={best.params['optimizer.lr']}" in command and "model=lstm" in command
    assert "hparams_search" not in command and "hydra." not in command
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


GRICE_DATA = (
    "pragexp.data.grice.datamodule.GriceDataModule"  # what a report reads of a run made before run.json
)


def test_report_ranks_a_grid_sweep_in_the_monitored_direction(tmp_path, capsys):
    """A minimised metric ranks lowest first; a categorical parameter (model=...) is plotted by name."""
    sweep = tmp_path / "grid"
    (sweep / "multirun.yaml").parent.mkdir()
    (sweep / "multirun.yaml").write_text("hydra: {}\n")
    jobs = [("lstm", "1e-3", 0.9), ("memnn", "1e-3", 0.4), ("lstm", "1e-4", 0.7), ("memnn", "1e-4", None)]
    for n, (model, lr, loss) in enumerate(jobs):
        job = sweep / str(n)
        (job / ".hydra").mkdir(parents=True)
        overrides = [f"model={model}", f"optimizer.lr={lr}", "seed=0", "launcher=submitit_local"]
        (job / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
        (job / ".hydra" / "config.yaml").write_text(
            yaml.safe_dump({"monitor": "val/loss", "monitor_mode": "min", "data": {"_target_": GRICE_DATA}})
        )
        if loss is not None:  # a finished trial: its metrics and the run.json a job of today writes
            (job / "metrics.json").write_text(json.dumps({"val/loss": loss, "test/loss": loss + 0.05}))
            migrated(job)
    plot = tmp_path / "grid.png"
    assert report.main([str(sweep), "--sweep-plot", str(plot)]) == 0
    section = capsys.readouterr().out.split(f"## sweep {sweep}\n", 1)[1]
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [row.split("|")[1].strip() for row in rows] == ["1", "2", "0", "3"]
    assert rows[0].split("|")[2:6] == [" memnn ", " 0.001 ", " 0.4000 ", " 0.4500 "]  # model, lr, val, test
    assert "| trial | model | optimizer.lr | val/loss (min) | test/loss |" in section  # seed did not vary
    assert "python -m pragexp.train model=memnn optimizer.lr=1e-3 seed=0\n" in section
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("task", "model", "lr", "batch_sizes", "has_dropout"),
    [
        ("grice_recovery", "memnn", 1e-3, [32, 64, 128], True),
        ("circa", "bert", 3e-5, [16, 32, 64], True),  # fine-tuning: a range 30x lower
        ("circa", "majority", 3e-5, [16, 32, 64], False),  # no dropout to tune
    ],
)
def test_search_space_is_centred_on_each_tasks_settings(tmp_path, task, model, lr, batch_sizes, has_dropout):
    cfg = compose_config(["hparams_search=optuna", f"task={task}", f"model={model}"], tmp_path)
    assert cfg.hydra.sweeper.direction == "maximize" and cfg.hydra.sweeper.study_name == f"{task}-{model}"
    trial = optuna.create_study().ask()
    around_task_settings(cfg, trial)
    distributions = trial.distributions
    assert (distributions["optimizer.lr"].low, distributions["optimizer.lr"].high) == pytest.approx(
        (lr / 10, lr * 10)
    )
    assert list(distributions["data.batch_size"].choices) == batch_sizes
    assert ("model.dropout" in distributions) is has_dropout
    # What the command line sweeps itself (hydra.sweeper.params) is left alone.
    fixed = optuna.create_study().ask()
    fixed.suggest_float("optimizer.lr", 0.1, 0.2)
    around_task_settings(cfg, fixed)
    assert (fixed.distributions["optimizer.lr"].low, fixed.distributions["optimizer.lr"].high) == (0.1, 0.2)


def test_a_pruned_trial_stops_after_the_epoch_its_pruner_refuses_and_is_told_so(tmp_path, cache_dir):
    # A threshold no validation r@1 reaches: every trial is pruned at its first report after the warm-up
    # epoch.
    sweep = tmp_path / "sweep"
    pruner = "{_target_:optuna.pruners.ThresholdPruner,lower:1.01,n_warmup_steps:1}"
    args = ["hparams_search=optuna", *FAST, "trainer.max_epochs=4", "callbacks.early_stopping=null"]
    args += [
        *TINY_DATA["grice"],
        "hydra.sweeper.n_trials=2",
        "hydra.sweeper.pruner=null",
        f"+hydra.sweeper.pruner={pruner}",
    ]
    proc = run_module(
        "pragexp.train", [*args, f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep}"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]  # pruned trials are not failures
    study = optuna.load_study(study_name="grice_recovery-lstm", storage=f"sqlite:///{sweep}/optuna.db")
    for trial in study.trials:
        assert trial.state.name == "PRUNED"
        assert sorted(trial.intermediate_values) == [0, 1]  # epoch 0 (warm-up) and 1, then it stopped
        assert not (sweep / str(trial.number) / "metrics.json").exists()
        assert (
            f"Trial {trial.number} pruned: trial {trial.number} pruned at epoch 1: val/r@1 = "
            in proc.stdout + proc.stderr
        )
    results = yaml.safe_load((sweep / "optimization_results.yaml").read_text())
    assert results["trials"]["pruned"] == 2 and results["best"] == []


def test_a_study_of_two_objectives_keeps_its_pareto_front(tmp_path, cache_dir):
    sweep = tmp_path / "sweep"
    args = ["hparams_search=optuna", *FAST, *TINY_DATA["grice"], "hydra.sweeper.n_trials=2"]
    args += ["optimized_metric=[val/r@1,val/loss]", "hydra.sweeper.direction=[maximize,minimize]"]
    proc = run_module(
        "pragexp.train", [*args, f"paths.cache_dir={cache_dir}", f"hydra.sweep.dir={sweep}"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    study = optuna.load_study(study_name="grice_recovery-lstm", storage=f"sqlite:///{sweep}/optuna.db")
    assert [d.name for d in study.directions] == ["MAXIMIZE", "MINIMIZE"]
    for trial in study.trials:
        metrics = json.loads((sweep / str(trial.number) / "metrics.json").read_text())
        assert trial.values == pytest.approx([metrics["val/r@1"], metrics["val/loss"]])
    results = yaml.safe_load((sweep / "optimization_results.yaml").read_text())
    front = sorted(t.number for t in study.best_trials)
    assert front and [b["trial"] for b in results["best"]] == front
    best = results["best"][0]
    assert OmegaConf.load(best["config"]).optimizer.lr == pytest.approx(best["params"]["optimizer.lr"])
    assert f"optimizer.lr={best['params']['optimizer.lr']}" in best["overrides"]


def test_hydra_sweep_syntax_becomes_optuna_distributions():
    from hydra_plugins.pragexp_optuna_sweeper._search_space import parse

    distributions, fixed = parse(
        [
            "model=lstm,memnn",
            "a=choice(1,2)",
            "b=range(1,10,3)",
            "c=interval(0,1.5)",
            "d=tag(log,interval(1e-4,1e-2))",
            "e=tag(int,interval(2,8))",
            "seed=3",
        ]
    )
    assert list(distributions["model"].choices) == ["lstm", "memnn"] and list(distributions["a"].choices) == [
        1,
        2,
    ]
    assert (distributions["b"].low, distributions["b"].high, distributions["b"].step) == (1, 7, 3)
    assert (
        isinstance(distributions["c"], optuna.distributions.FloatDistribution)
        and distributions["c"].high == 1.5
    )
    assert distributions["d"].log and distributions["d"].low == pytest.approx(1e-4)
    assert (
        isinstance(distributions["e"], optuna.distributions.IntDistribution) and distributions["e"].high == 8
    )
    assert fixed == {"seed": "3"}


def test_pragexp_installs_beside_current_optuna_and_sqlalchemy_without_downgrading_them(tmp_path):
    """What a researcher's environment has today: pip resolves pragexp[cluster] with optuna 5 and SQLAlchemy
    2."""
    report_file = tmp_path / "report.json"
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report_file)]
    proc = subprocess.run(
        [*pip, "-e", f"{ROOT}[cluster]", "optuna==5.0.0", "sqlalchemy>=2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    planned = {
        item["metadata"]["name"].lower(): item["metadata"]["version"]
        for item in json.loads(report_file.read_text())["install"]
    }
    from importlib.metadata import version

    optuna_version = planned.get("optuna", version("optuna"))
    sqlalchemy_version = planned.get("sqlalchemy", version("sqlalchemy"))
    assert optuna_version == "5.0.0" and int(sqlalchemy_version.split(".")[0]) >= 2, planned
