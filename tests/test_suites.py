"""Suites (`experiment=suite/<name>`, hydra_plugins/pragexp_suite_sweeper): a suite of three fixture
benchmarks run as a user types it (one subprocess), its plan, progress and scorecard; the same command
again skips every finished run; `suite.limit` in run.json and the scorecard; an entry's overrides; a bad
entry's error; and with launcher=slurm on the one-node cluster of the tests marked `slurm`."""

import json
import sys

import pytest
from conftest import FIXTURES, run_module
from hydra.core.global_hydra import GlobalHydra

from hydra_plugins.pragexp_suite_sweeper._jobs import SuiteError
from pragexp.runs.record import read_run_record

LIMIT = 3
ENTRIES = {  # one line each, as a suite's file writes them; the data from the fixtures
    "hu_pragmatics": "{task: hu_pragmatics, overrides: "
    f"[data.path={FIXTURES / 'hu_pragmatics' / 'prompts'}]}}",
    "ludwig": f"{{task: ludwig, overrides: [data.path={FIXTURES / 'ludwig'}, 'prompt.template=0,1']}}",
    "bigbench": "{task: bigbench_implicatures, overrides: "
    f"[data.path={FIXTURES / 'bigbench_implicatures' / 'implicatures.jsonl'}]}}",
}
JOBS = ("hu_pragmatics", "ludwig-0", "ludwig-1", "bigbench")


def write_suite(conf, name: str, entries: dict[str, str]) -> None:
    """A suite's file in a config dir of its own (`hydra.searchpath`), built on pragexp's `_suite`."""
    lines = [f"    {entry}: {text}" for entry, text in entries.items()]
    head = ["# @package _global_", "defaults:", "  - /experiment/suite/_suite", "  - _self_", "suite:"]
    text = "\n".join([*head, f"  name: {name}", "  benchmarks:", *lines, ""])
    (conf / "experiment" / "suite").mkdir(parents=True, exist_ok=True)
    (conf / "experiment" / "suite" / f"{name}.yaml").write_text(text)


def suite_args(conf, name: str, *extra: str) -> list[str]:
    line = ["-m", f"experiment=suite/{name}", f"hydra.searchpath=[file://{conf}]", "llm=tiny"]
    return [*line, "logger=none", "print_config=false", *extra]


def run_in_process(args: list[str], monkeypatch, capsys) -> str:
    """`python -m pragexp.eval ARGS` in this process (the basic launcher runs the jobs here); its stdout."""
    from pragexp import eval as entry

    monkeypatch.setattr(sys, "argv", ["pragexp.eval", *args])
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")  # the error itself, not Hydra's exit
    GlobalHydra.instance().clear()
    try:
        entry.main()
    finally:
        GlobalHydra.instance().clear()
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    conf = root / "conf"
    write_suite(conf, "fixtures", ENTRIES)
    done = run_module("pragexp.eval", suite_args(conf, "fixtures", f"suite.limit={LIMIT}"), root)
    assert done.returncode == 0, done.stderr[-3000:]
    sweep = root / "outputs" / "suite" / "fixtures" / "tiny"
    return {"root": root, "conf": conf, "sweep": sweep, "out": done.stdout}


@pytest.mark.slow
def test_a_suite_prints_its_plan_and_progress_and_writes_one_scorecard(suite):
    out, sweep = suite["out"], suite["sweep"]
    plan = out.split(
        "suite fixtures: 4 jobs, 4 to run, at most 3 test items per benchmark (suite.limit=3)", 1
    )[1]
    for job in JOBS:
        assert f"  {job} " in plan.split("to run:", 1)[0]
    # Items: the limit of each (the fixture's BIG-bench has 4 examples); requests: their options (two for a
    # yes/no benchmark, Hu et al.'s fixture items have 3 or 4).
    lines = {line.split()[0]: line.split()[1:3] for line in plan.splitlines()[1:6] if line.startswith("  ")}
    assert lines["ludwig-0"] == lines["ludwig-1"] == lines["bigbench"] == ["3", "6"]
    assert lines["hu_pragmatics"][0] == "3" and int(lines["hu_pragmatics"][1]) >= 9
    assert "suite: 1/4 jobs done (hu_pragmatics)" in out and "about" in out.split("suite: 1/4", 1)[1]
    assert "suite: 4/4 jobs done (bigbench)" in out
    card = (sweep / "scorecard.md").read_text()
    assert card in out  # printed as written
    rows = [line.split("|")[1].strip() for line in card.splitlines() if line.startswith("| ")]
    ours = [row for row in rows if row.startswith("tiny")]
    assert ours == [f"tiny 0-shot (data.limit={LIMIT})"]  # one row for the model, its limit in its name
    assert {"text-davinci-002 (paper)", "human_average (paper)", "chance"} <= set(rows)
    assert "| Hu et al. acc | LUDWIG 0-shot acc | LUDWIG best-k acc | BIG-bench implicatures acc |" in card
    assert f"at most {LIMIT} test items per benchmark (suite.limit={LIMIT})" in card


@pytest.mark.slow
def test_suite_limit_lands_in_each_run_json_and_entry_overrides_apply(suite):
    sweep = suite["sweep"]
    for job in JOBS:
        record = read_run_record(sweep / job)
        assert record.data.setting["limit"] == LIMIT and record.items == LIMIT
        assert f"data.limit={LIMIT}" in record.settings.task
        # the job is its own command: no experiment
        assert record.model.llm.name == "tiny" and record.experiment is None
    templates = {job: read_run_record(sweep / job).model.llm.prompting.template for job in JOBS[1:3]}
    assert templates == {"ludwig-0": "question_response_implicature", "ludwig-1": "esther_juan"}
    overrides = (sweep / "bigbench" / ".hydra" / "overrides.yaml").read_text()
    assert "implicatures.jsonl" in overrides and "task=bigbench_implicatures" in overrides


@pytest.mark.slow
def test_the_same_command_again_skips_every_finished_run(suite, monkeypatch, capsys):
    sweep = suite["sweep"]
    before = {job: (sweep / job / "metrics.json").stat().st_mtime_ns for job in JOBS}
    monkeypatch.setenv("PRAGEXP_OUTPUTS", str(suite["root"] / "outputs"))
    out = run_in_process(suite_args(suite["conf"], "fixtures", f"suite.limit={LIMIT}"), monkeypatch, capsys)
    assert "suite fixtures: 4 jobs, 0 to run" in out
    assert all(f"  {job} (finished: skipped)" in out for job in JOBS)
    assert "pragexp: " not in out and "jobs done" not in out  # no job ran: no summary line, no progress
    assert {job: (sweep / job / "metrics.json").stat().st_mtime_ns for job in JOBS} == before
    assert "## Scorecard" in out


@pytest.mark.slow
def test_an_unknown_task_names_the_suite_file_and_the_entry(tmp_path, monkeypatch, capsys):
    entries = {**ENTRIES, "typo": "{task: hu_pragmatic}"}
    write_suite(tmp_path / "conf", "bad", entries)
    monkeypatch.setenv("PRAGEXP_OUTPUTS", str(tmp_path / "outputs"))
    with pytest.raises(SuiteError) as error:
        run_in_process(suite_args(tmp_path / "conf", "bad"), monkeypatch, capsys)
    file = tmp_path / "conf" / "experiment" / "suite" / "bad.yaml"
    assert f"{file}, suite entry 'typo': task=hu_pragmatic is not a task" in str(error.value)
    assert "hu_pragmatics" in str(error.value)  # the tasks listed
    assert not (tmp_path / "outputs").exists()  # nothing ran


def test_a_finished_run_of_other_settings_is_never_overwritten(tmp_path, monkeypatch, capsys):
    write_suite(tmp_path / "conf", "one", {"bigbench": ENTRIES["bigbench"]})
    run_dir = tmp_path / "outputs" / "suite" / "one" / "tiny" / "bigbench"
    (run_dir / ".hydra").mkdir(parents=True)
    for name in ("metrics.json", "run.json"):
        (run_dir / name).write_text("{}")
    (run_dir / ".hydra" / "overrides.yaml").write_text("- task=bigbench_implicatures\n- llm.dtype=float16\n")
    monkeypatch.setenv("PRAGEXP_OUTPUTS", str(tmp_path / "outputs"))
    with pytest.raises(SuiteError, match="holds a finished run of other settings .*llm.dtype=float16"):
        run_in_process(suite_args(tmp_path / "conf", "one"), monkeypatch, capsys)
    assert json.loads((run_dir / "metrics.json").read_text()) == {}


def test_a_task_on_the_suites_command_line_is_refused(tmp_path, monkeypatch, capsys):
    write_suite(tmp_path / "conf", "one", {"bigbench": ENTRIES["bigbench"]})
    monkeypatch.setenv("PRAGEXP_OUTPUTS", str(tmp_path / "outputs"))
    with pytest.raises(SuiteError, match="task=circa: a suite's entries choose their tasks"):
        run_in_process(suite_args(tmp_path / "conf", "one", "task=circa"), monkeypatch, capsys)


@pytest.mark.slow
@pytest.mark.slurm
def test_a_suite_runs_on_slurm_like_any_multirun(slurm, tmp_path):
    """launcher=slurm: the suite's jobs are one SLURM job array, each job's run dir its entry's, then the
    scorecard (tests/slurm_cluster.py starts the cluster)."""
    from test_signals import SLURM_JOB

    write_suite(tmp_path / "conf", "cluster", {"ludwig": ENTRIES["ludwig"], "bigbench": ENTRIES["bigbench"]})
    done = run_module("pragexp.eval", suite_args(tmp_path / "conf", "cluster", *SLURM_JOB), tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    sweep = tmp_path / "outputs" / "suite" / "cluster" / "tiny"
    (script,) = (sweep / ".submitit").glob("*/*_submission.sh")
    assert "#SBATCH --array=0-2%" in script.read_text()  # the three jobs, submitted together
    for job in ("ludwig-0", "ludwig-1", "bigbench"):
        assert read_run_record(sweep / job).model.llm.name == "tiny"
        assert (sweep / job / ".submitit").is_symlink()  # SLURM's logs beside the job's outputs
    assert "suite: 3/3 jobs done" in done.stdout and (sweep / "scorecard.md").is_file()


def test_the_time_left_counts_scored_and_generated_requests_apart():
    """A generated answer costs tens of scored options: the scored jobs' pace must not promise the generating
    jobs' time; a kind not yet timed is said, not guessed."""
    from types import SimpleNamespace

    from hydra_plugins.pragexp_suite_sweeper._plan import Count, Progress

    jobs = [SimpleNamespace(name=n) for n in ("scored-a", "scored-b", "gen-a", "gen-b")]
    counts = [Count(10, 100), Count(10, 100), Count(10, 10, generates=True), Count(10, 10, generates=True)]
    progress = Progress(jobs, counts)
    lines = []
    for job, seconds in zip(jobs, (10, 10, 60, 60), strict=True):
        progress.last -= seconds  # the job took that long
        lines.append(progress.line([job]))
    assert lines[0].endswith(", about 10 s left, besides 2 generating jobs not yet timed")
    assert lines[1].endswith(" elapsed, 2 generating jobs not yet timed")
    assert lines[2].endswith(", about 1 min 0 s left")  # 10 generated requests at 6 s each, not 0.1 s
    assert lines[3].startswith("suite: 4/4 jobs done (gen-b)") and "left" not in lines[3]
