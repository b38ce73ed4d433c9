"""pragexp's Optuna sweeper (hydra_plugins/pragexp_optuna_sweeper), as users type it, on this machine:
submitit_local jobs, a study resumed after an interruption, the report of a sweep, pruning, several
objectives, the search space; and that pragexp installs beside current Optuna and SQLAlchemy."""

import json
import re
import subprocess
import sys

import optuna
import pytest
import yaml
from conftest import FAST, ROOT, TINY_DATA, compose_config, migrated, run_module
from omegaconf import OmegaConf

from pragexp import report
from pragexp.entry.search_space import around_task_settings

pytestmark = pytest.mark.slow  # sweeps: subprocesses and studies


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
