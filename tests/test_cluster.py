"""Beyond one machine, as users type it: multi-node DDP under launcher=slurm (through a stand-in for
sbatch/srun/sacct, tests/fake_slurm.py), and an Optuna sweep whose trials run as launcher=submitit_local
jobs, interrupted and resumed."""

import json
import os
import re

import fake_slurm
import optuna
import pytest
import yaml
from conftest import GRICE_FIXTURE, TINY_DATA, TINY_MODEL, compose_config, run_module
from omegaconf import OmegaConf

from pragexp import report
from pragexp.utils.search_space import around_task_settings

pytestmark = pytest.mark.slow  # launchers, sweeps and fake SLURM jobs: subprocesses and studies

FAST = [
    "model=lstm",
    "logger=none",
    "trainer.max_epochs=1",
    "trainer.accelerator=cpu",
    "callbacks.progress_bar=null",
    "print_config=false",
    *TINY_MODEL["lstm"],
]


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
    # Lightning's own lines go through the job's logging (Hydra's console handler: stdout), its warnings to stderr
    rank1 = "".join(p.read_text() for p in logs.glob("*_1_log.*"))
    assert "GLOBAL_RANK: 1, MEMBER: 2/2" in rank1  # the second task joined as rank 1 of 2
    metrics = json.loads((sweep / "0" / "metrics.json").read_text())
    assert metrics["test/count"] == rounds


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
        if loss is not None:
            (job / "metrics.json").write_text(json.dumps({"val/loss": loss, "test/loss": loss + 0.05}))
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
