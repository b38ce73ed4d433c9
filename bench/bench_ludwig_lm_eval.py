"""LUDWIG beside the peer, each as its users run it: lm-evaluation-harness's own command line against
`python -m pragexp.eval task=ludwig`, on the same pairs, from cold processes, one after the other.

    python bench/bench_ludwig_lm_eval.py --path do-pigs-fly/data [--test-file test_conversational_implicatures.csv]
        [--pairs N] [--batch-sizes 1,16,64] [--threads 2] [--model smollm2]

Needs lm-evaluation-harness: `pip install 'pragexp[bench]'` (not part of `make install`).

The pairs are read once by pragexp's reader (the release's quirks handled as pragexp handles them) and written
twice: as a release-format CSV for `pragexp.eval` and as a plain CSV (utterance, response, label) for an
lm-evaluation-harness task YAML written here: LUDWIG's template 0 at 0-shot ("Does the following response to the
question imply yes or no?", a blank line, "question: ...\\nresponse: ...\\nimplicature:"), choices "yes" and "no"
after a space, `output_type: multiple_choice`. lm-evaluation-harness runs through its CLI (`lm_eval --model hf`,
the same GGUF file, float32, CPU, `--log_samples`) at each of `--batch-sizes`, the fastest counting as its best
setting; pragexp through its CLI (template 0, 0-shot, no response cache). Each command is timed from its start to
its exit (model loading and data reading included). Printed: wall seconds per pair for each, the ratio of
lm-evaluation-harness's best to pragexp's, whether every pair got the same decision, the largest difference of
the log-likelihoods (both record them per pair and option), and whether both scored the same contexts.
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
from pragexp.utils.pretrained import SMOLLM2, resolve  # noqa: E402

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
    """The pairs as the release writes them (for pragexp) and as lm-eval's task reads them; returns the latter."""
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


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} ... failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def run_pragexp(folder: Path, args, env: dict) -> tuple[float, dict]:
    out = folder / "pragexp_run"
    command = [
        sys.executable,
        "-m",
        "pragexp.eval",
        "task=ludwig",
        f"data.path={folder}",
        "data.test_file=test.csv",
    ]
    command += ["data.types_file=null", "prompt.template=0", "prompt.shots=0", "model.use_cache=false"]
    command += [
        f"llm.model={args.model}",
        "llm.dtype=float32",
        "llm.device=cpu",
        "logger=csv",
        "print_config=false",
    ]
    command += [f"hydra.run.dir={out}", *([f"threads={args.threads}"] if args.threads else [])]
    seconds = timed(command, env)
    scores = {}
    for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        logliks = dict(zip(record["continuations"], record["loglik"], strict=True))
        scores[record["index"]] = (record["prompt"], [logliks[" yes"], logliks[" no"]])
    return seconds, scores


def run_lm_eval(folder: Path, args, batch_size: int, env: dict) -> tuple[float, dict]:
    model = resolve(args.model, "llm.model")
    model_args = f"pretrained={model.source},dtype=float32,add_bos_token=False"
    if model.gguf_file:
        model_args += f",gguf_file={model.gguf_file}"
    out = folder / f"lm_eval_{batch_size}"
    command = [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", model_args]
    command += ["--tasks", "ludwig_pragexp_bench", "--include_path", str(folder / "tasks"), "--device", "cpu"]
    command += ["--batch_size", str(batch_size), "--log_samples", "--output_path", str(out)]
    seconds = timed(command, env)
    (samples,) = glob.glob(str(out / "**" / "samples_ludwig_pragexp_bench_*.jsonl"), recursive=True)
    scores = {}
    for line in Path(samples).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        arguments = record["arguments"]  # [[context, continuation], ...], or {"gen_args_0": {"arg_0": ...}}
        first = arguments[0] if isinstance(arguments, list) else next(iter(arguments.values()))
        context = first[0] if isinstance(first, list) else first.get("arg_0")
        logliks = [float(r[0][0] if isinstance(r[0], list) else r[0]) for r in record["resps"]]
        scores[int(record["doc_id"])] = (context, logliks)
    return seconds, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, required=True, help="LUDWIG's data/ folder")
    parser.add_argument("--test-file", default=TEST_FILE)
    parser.add_argument("--pairs", type=int, default=None, help="the first N test pairs (default: all)")
    parser.add_argument("--batch-sizes", default="1,16,64")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--model", default=SMOLLM2)
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
        ours_s, ours = run_pragexp(folder, args, env)
        theirs = {b: run_lm_eval(folder, args, b, env) for b in map(int, args.batch_sizes.split(","))}
    report(len(pairs), ours_s, ours, theirs)


def report(n: int, ours_s: float, ours: dict, theirs: dict) -> None:
    best = min(theirs, key=lambda b: theirs[b][0])
    best_s, best_scores = theirs[best]
    print(
        f"{n} LUDWIG test pairs, template 0, 0-shot, 2 options; load average {os.getloadavg()[0]:.2f} at the end"
    )
    print(f"pragexp.eval (cold process): {ours_s:.1f} s, {ours_s / n:.3f} s/pair")
    for b, (seconds, _) in sorted(theirs.items()):
        print(f"lm_eval --batch_size {b} (cold process): {seconds:.1f} s, {seconds / n:.3f} s/pair")
    print(f"ratio lm-eval (best: batch {best}) / pragexp, wall per pair: {best_s / ours_s:.2f}")
    d = max(abs(a - b) for i in ours for a, b in zip(ours[i][1], best_scores[i][1], strict=True))
    same = sum((ours[i][1][0] > ours[i][1][1]) == (best_scores[i][1][0] > best_scores[i][1][1]) for i in ours)
    contexts = sum(ours[i][0] == best_scores[i][0] for i in ours if best_scores[i][0] is not None)
    print(f"same decision on {same}/{n} pairs; max |d loglik| {d:.2e}; same context on {contexts}/{n} pairs")


if __name__ == "__main__":
    main()
