"""LUDWIG beside the peer, each as its users run it: lm-evaluation-harness's own command line against
`python -m pragexp.eval task=ludwig`, on the same pairs, from cold processes, one after the other.

    python bench/bench_ludwig_lm_eval.py --path do-pigs-fly/data
        [--test-file test_conversational_implicatures.csv] [--pairs N] [--batch-sizes 1,16,64]
        [--threads 2] [--model smollm2] [--sweep]

Needs lm-evaluation-harness: `pip install 'pragexp[bench]'` (not part of `make install`).

The pairs are read once by pragexp's reader (the release's quirks handled as pragexp handles them) and written
twice: as a release-format CSV for `pragexp.eval` and as a plain CSV (utterance, response, label) for an
lm-evaluation-harness task YAML written here: LUDWIG's template 0 at 0-shot ("Does the following response to
the question imply yes or no?", a blank line, "question: ...\\nresponse: ...\\nimplicature:"), choices "yes"
and "no" after a space, `output_type: multiple_choice`. lm-evaluation-harness runs through its CLI (`lm_eval
--model hf`, the same GGUF file, float32, CPU, `--log_samples`) at each of `--batch-sizes`, the fastest
counting as its best setting; pragexp through its CLI (template 0, 0-shot, no response cache). Each command is
timed from its start to its exit (model loading and data reading included). Printed: wall seconds per pair for
each, the ratio of lm-evaluation-harness's best to pragexp's, whether every pair got the same decision, the
largest difference of the log-likelihoods (both record them per pair and option), and whether both scored the
same contexts.

`--sweep`: the six templates at 0-shot, each side in one invocation, as its users would run a sweep: pragexp's
Hydra multirun (`-m prompt.template=0,1,2,3,4,5`: one process, the model loaded once) against one `lm_eval`
command with six tasks (`--tasks` naming all six, at the first of `--batch-sizes`). lm-eval's six task files
read the contexts and continuations pragexp's jobs recorded (`doc_to_text: context`, `doc_to_choice: choices`,
no target delimiter), so both score the very same requests: writing the six templates again as Jinja would
repeat pragexp's prompt group (template 0's independent YAML, above, is the check of the rendering). Printed
per template and in all: the wall times, the ratio, the decisions that agree and the largest log-likelihood
difference.

Before the timed commands, one untimed process imports both frameworks, so neither pays for a cold disk cache.
"""

from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pragexp.data.ludwig.io import DEV_FILE, PAIR_COLUMNS, TEST_FILE, read_pairs  # noqa: E402
from pragexp.pretrained import SMOLLM2, resolve  # noqa: E402

INSTRUCTION = "Does the following response to the question imply yes or no?"
TASK_YAML = """task: ludwig_pragexp_bench
dataset_path: csv
dataset_kwargs:
  data_files:
    test: {csv}
test_split: test
output_type: multiple_choice
doc_to_text: "{instruction}\\n\\nquestion: {{{{utterance}}}}\\nresponse: {{{{response}}}}\\nimplicature:"
doc_to_choice: ["yes", "no"]
doc_to_target: label
target_delimiter: " "
metric_list:
  - metric: acc
"""


def write_inputs(folder: Path, pairs, dev_path: Path) -> Path:
    """The pairs as the release writes them (for pragexp) and as lm-eval's task reads them; returns the
    latter."""
    with open(folder / "test.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(PAIR_COLUMNS)
        writer.writerows([(p.utterance, p.response, p.label.capitalize() + ".") for p in pairs])
    (folder / DEV_FILE).write_bytes(dev_path.read_bytes())
    plain = folder / "lm_eval_pairs.csv"
    with open(plain, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(("utterance", "response", "label"))
        writer.writerows([(p.utterance, p.response, ("yes", "no").index(p.label)) for p in pairs])
    (folder / "tasks").mkdir()
    (folder / "tasks" / "ludwig_bench.yaml").write_text(TASK_YAML.format(csv=plain, instruction=INSTRUCTION))
    return plain


SWEEP_TASK_YAML = """task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {jsonl}
test_split: test
output_type: multiple_choice
doc_to_text: context
doc_to_choice: choices
doc_to_target: label
target_delimiter: ""
metric_list:
  - metric: acc
"""
TEMPLATES = range(6)


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def pragexp_command(folder: Path, args, templates: str) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "pragexp.eval",
        "task=ludwig",
        f"data.path={folder}",
        "data.test_file=test.csv",
    ]
    command += [
        "data.types_file=null",
        f"prompt.template={templates}",
        "prompt.shots=0",
        "model.use_cache=false",
    ]
    command += [
        f"llm.model={args.model}",
        "llm.dtype=float32",
        "llm.device=cpu",
        "logger=csv",
        "print_config=false",
    ]
    return command + ([f"threads={args.threads}"] if args.threads else [])


def recorded(
    predictions: Path, order: tuple[str, ...] | None = None
) -> dict[int, tuple[str, list[float], dict]]:
    """{pair index: (the context the model read, its options' log-likelihoods, the record)}: in `order` (the
    continuations as named there: LUDWIG draws each pair's option order), else in the record's own."""
    scores = {}
    for line in predictions.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        logliks = dict(zip(record["continuations"], record["loglik"], strict=True))
        scored = [logliks[c] for c in order] if order else record["loglik"]
        scores[record["index"]] = (record["prompt"], scored, record)
    return scores


def run_pragexp(folder: Path, args, env: dict) -> tuple[float, dict]:
    out = folder / "pragexp_run"
    seconds = timed([*pragexp_command(folder, args, "0"), f"hydra.run.dir={out}"], env)
    return seconds, recorded(out / "predictions.jsonl", order=(" yes", " no"))  # the task YAML's choices


def run_lm_eval(
    folder: Path, args, batch_size: int, env: dict, tasks=("ludwig_pragexp_bench",), tag=""
) -> tuple:
    """Seconds of one `lm_eval` command over `tasks`, and per task its {doc id: (context, logliks)}."""
    model = resolve(args.model, "llm.model")
    model_args = f"pretrained={model.source},dtype=float32,add_bos_token=False"
    if model.gguf_file:
        model_args += f",gguf_file={model.gguf_file}"
    out = folder / f"lm_eval_{batch_size}{tag}"
    command = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", model_args]
    command += ["--tasks", ",".join(tasks), "--include_path", str(folder / "tasks"), "--device", "cpu"]
    command += ["--batch_size", str(batch_size), "--log_samples", "--output_path", str(out)]
    seconds = timed(command, env)
    found = {task: lm_eval_samples(out, task) for task in tasks}
    return (seconds, found[tasks[0]]) if len(tasks) == 1 else (seconds, found)


def lm_eval_samples(out: Path, task: str) -> dict[int, tuple[str | None, list[float]]]:
    (samples,) = glob.glob(str(out / "**" / f"samples_{task}_*.jsonl"), recursive=True)
    scores = {}
    for line in Path(samples).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        arguments = record["arguments"]  # [[context, continuation], ...], or {"gen_args_0": {"arg_0": ...}}
        first = arguments[0] if isinstance(arguments, list) else next(iter(arguments.values()))
        context = first[0] if isinstance(first, list) else first.get("arg_0")
        logliks = [float(r[0][0] if isinstance(r[0], list) else r[0]) for r in record["resps"]]
        scores[int(record["doc_id"])] = (context, logliks)
    return scores


def run_sweep(folder: Path, args, env: dict) -> tuple[float, float, dict, dict]:
    """pragexp's six-template multirun, then one lm_eval command over six tasks made of what its jobs
    recorded."""
    sweep = folder / "pragexp_sweep"
    templates = ",".join(map(str, TEMPLATES))
    ours_s = timed(sweep_command(folder, args, sweep), env)
    ours = {}
    for job in sorted(p for p in sweep.iterdir() if (p / "predictions.jsonl").exists()):
        scores = recorded(job / "predictions.jsonl")
        ours[next(iter(scores.values()))[2]["template"]] = scores
    if len(ours) != len(TEMPLATES):
        sys.exit(f"pragexp's sweep ({templates}) left {len(ours)} jobs with predictions in {sweep}")
    tasks = []
    for name, scores in ours.items():
        jsonl, task = folder / f"sweep_{name}.jsonl", f"ludwig_pragexp_{name}"
        rows = [
            {"context": c, "choices": r["continuations"], "label": r["gold"]} for c, _, r in scores.values()
        ]
        jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        (folder / "tasks" / f"{task}.yaml").write_text(SWEEP_TASK_YAML.format(name=task, jsonl=jsonl))
        tasks.append(task)
    batch = int(args.batch_sizes.split(",")[0])
    theirs_s, theirs = run_lm_eval(folder, args, batch, env, tuple(tasks), tag="_sweep")
    return ours_s, theirs_s, ours, {name: theirs[f"ludwig_pragexp_{name}"] for name in ours}


def sweep_command(folder: Path, args, sweep: Path) -> list[str]:
    command = pragexp_command(folder, args, ",".join(map(str, TEMPLATES)))
    return [*command[:3], "-m", *command[3:], f"hydra.sweep.dir={sweep}"]


def report_sweep(n: int, batch: int, ours_s: float, theirs_s: float, ours: dict, theirs: dict) -> None:
    print(
        f"{n} LUDWIG test pairs x {len(ours)} templates, 0-shot, 2 options; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(f"pragexp.eval -m (one process, {len(ours)} jobs): {ours_s:.1f} s")
    print(f"lm_eval --tasks <{len(theirs)} tasks> --batch_size {batch} (one process): {theirs_s:.1f} s")
    print(f"ratio lm-eval / pragexp, wall: {theirs_s / ours_s:.2f}")
    for name, scores in ours.items():
        mine = {i: (c, ll) for i, (c, ll, _) in scores.items()}
        # lm-eval's doc ids are the JSONL's rows, written in pragexp's record order
        peer = {index: theirs[name][row] for row, index in enumerate(scores)}
        print(f"  {name}: " + agreement(n, mine, peer))


def agreement(n: int, ours: dict, theirs: dict) -> str:
    d = max(abs(a - b) for i in ours for a, b in zip(ours[i][1], theirs[i][1], strict=True))
    same = sum((ours[i][1][0] > ours[i][1][1]) == (theirs[i][1][0] > theirs[i][1][1]) for i in ours)
    contexts = sum(ours[i][0] == theirs[i][0] for i in ours if theirs[i][0] is not None)
    return f"same decision on {same}/{n} pairs; max |d loglik| {d:.2e}; same context on {contexts}/{n} pairs"


def warm_disk_cache(env: dict) -> None:
    """Import both frameworks once, untimed: the first timed command would otherwise read them from disk."""
    subprocess.run(
        [sys.executable, "-c", "import lm_eval.models.huggingface, pragexp.eval, pragexp.run"], env=env
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, required=True, help="LUDWIG's data/ folder")
    parser.add_argument("--test-file", default=TEST_FILE)
    parser.add_argument("--pairs", type=int, default=None, help="the first N test pairs (default: all)")
    parser.add_argument("--batch-sizes", default="1,16,64")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--model", default=SMOLLM2)
    parser.add_argument("--sweep", action="store_true", help="six templates, one invocation each side")
    args = parser.parse_args()
    try:
        import lm_eval  # noqa: F401
    except ImportError:
        sys.exit("this benchmark needs lm-evaluation-harness: pip install 'pragexp[bench]'")
    pairs, _ = read_pairs(args.path / args.test_file)
    pairs = pairs[: args.pairs] if args.pairs else pairs
    threads = {"OMP_NUM_THREADS": str(args.threads)} if args.threads else {}
    env = {
        **os.environ,
        **threads,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    env["HF_DATASETS_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, pairs, args.path / DEV_FILE)
        warm_disk_cache(env)
        if args.sweep:
            report_sweep(len(pairs), int(args.batch_sizes.split(",")[0]), *run_sweep(folder, args, env))
            return
        ours_s, ours = run_pragexp(folder, args, env)
        theirs = {b: run_lm_eval(folder, args, b, env) for b in map(int, args.batch_sizes.split(","))}
    report(len(pairs), ours_s, {i: (c, ll) for i, (c, ll, _) in ours.items()}, theirs)


def report(n: int, ours_s: float, ours: dict, theirs: dict) -> None:
    best = min(theirs, key=lambda b: theirs[b][0])
    best_s, best_scores = theirs[best]
    print(
        f"{n} LUDWIG test pairs, template 0, 0-shot, 2 options; load average {os.getloadavg()[0]:.2f} at the "
        "end"
    )
    print(f"pragexp.eval (cold process): {ours_s:.1f} s, {ours_s / n:.3f} s/pair")
    for b, (seconds, _) in sorted(theirs.items()):
        print(f"lm_eval --batch_size {b} (cold process): {seconds:.1f} s, {seconds / n:.3f} s/pair")
    print(f"ratio lm-eval (best: batch {best}) / pragexp, wall per pair: {best_s / ours_s:.2f}")
    print(agreement(n, ours, best_scores))


if __name__ == "__main__":
    main()
