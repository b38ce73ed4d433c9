"""LLM option scoring: pragexp's shared-prefix scorer vs lm-evaluation-harness's HF backend, same requests.

    python bench/bench_llm_scoring.py [--items 16] [--shots 0,5] [--model smollm2|tiny] [--path circa.tsv]
                                      [--batch-size 16] [--threads N]

Needs lm-evaluation-harness: `pip install 'pragexp[bench]'` (not part of `make install`).

The requests: `--items` Circa items (question-X, answer-Y from the Circa sample, else the test fixture,
repeated to N), each with the 4 RELAXED label verbalisations as options ("Yes", "No", "Yes, subject to some
conditions", "In the middle, neither yes nor no"); the prompt is the model's chat template around an
instruction, `k` labelled demonstrations (the file's first rows, which are not scored) and the item, and the
assistant turn begins with "Answer:". Each setting (0-shot, 5-shot) runs the same N x 4 (context, option)
pairs, float32 on the CPU, through

- pragexp: `HFBackend.loglikelihood_many` (choices.score_choices: shared prefix once, its KV cache reused
  by every item and option, items batched by length);
- lm-eval: `lm_eval.models.huggingface.HFLM(pretrained=<the same model object>, tokenizer=<the same
  tokenizer>, add_bos_token=False, prefix_token_id=eos)` and `loglikelihood` on `Instance`s (one forward
  pass per (context, option), with its one-token-continuation logits cache on).

The same model object and tokenizer serve both; each is warmed up on two items first. Prints, per setting,
`pragexp items/s`, `lm-eval items/s`, `ratio` (pragexp / lm-eval) and `max |d loglik|` over every option.
Targets (issue 17): max |d loglik| <= 1e-4, ratio >= 1.0 at 0-shot and >= 1.5 at 5-shot. The issue's
setting is `--items 500`; the default is small enough for a few minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from pragexp.generation.choices import ChoiceRequest  # noqa: E402
from pragexp.generation.hf import HFBackend  # noqa: E402

SAMPLE = ROOT.parent / "shared" / "samples" / "circa" / "circa-sample.tsv"
FIXTURE = ROOT / "tests" / "fixtures" / "circa" / "circa-data.tsv"
LABELS = ("Yes", "No", "Yes, subject to some conditions", "In the middle, neither yes nor no")
TARGETS = {0: 1.0, 5: 1.5}
MAX_D = 1e-4
INSTRUCTION = (
    "X asks Y a yes/no question and Y answers indirectly. Classify what Y means as one of: "
    + "; ".join(LABELS)
    + "."
)


def read_rows(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r for r in rows if (r.get("question-X") or "").strip() and (r.get("answer-Y") or "").strip()]


def build(backend: HFBackend, rows: list[dict], n: int, shots: int) -> list[ChoiceRequest]:
    demos = [r for r in rows if r.get("goldstandard2") in LABELS][:shots]
    pool = [r for r in rows if r not in demos] or rows
    lines = [INSTRUCTION, ""]
    for d in demos:
        lines += [f"X: {d['question-X']}", f"Y: {d['answer-Y']}", f"Answer: {d['goldstandard2']}", ""]
    head = "\n".join(lines)
    requests = []
    for i in range(n):
        row = pool[i % len(pool)]
        text = f"{head}X: {row['question-X']}\nY: {row['answer-Y']}\nWhat does Y mean?"
        requests.append(ChoiceRequest(backend.render(text) + "Answer: ", LABELS))
    return requests


def run_pragexp(backend: HFBackend, requests: list[ChoiceRequest]) -> tuple[float, list[float]]:
    start = time.perf_counter()
    scores = backend.loglikelihood_many(requests)
    seconds = time.perf_counter() - start
    return seconds, [s.loglik for row in scores for s in row]


def run_lm_eval(lm, requests: list[ChoiceRequest]) -> tuple[float, list[float]]:
    from lm_eval.api.instance import Instance

    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=(r.context, o), idx=j)
        for i, r in enumerate(requests)
        for j, o in enumerate(r.options)
    ]
    start = time.perf_counter()
    out = lm.loglikelihood(instances, disable_tqdm=True)
    seconds = time.perf_counter() - start
    return seconds, [float(ll) for ll, _ in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=SAMPLE if SAMPLE.is_file() else FIXTURE)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--shots", default="0,5")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        sys.exit("this benchmark needs lm-evaluation-harness: pip install 'pragexp[bench]'")

    backend = HFBackend(model=args.model, device="cpu", dtype="float32", batch_size=args.batch_size)
    model, tokenizer = backend.load()
    lm = HFLM(
        pretrained=model,
        tokenizer=tokenizer,
        batch_size=args.batch_size,
        add_bos_token=False,  # pragexp adds no special token: the chat template writes its own
        prefix_token_id=tokenizer.eos_token_id,  # an empty context is end-of-text in pragexp
        max_length=getattr(model.config, "max_position_embeddings", 2048),
    )
    rows = read_rows(args.path)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.items} items x {len(LABELS)} options from {args.path.name} ({len(rows)} rows), model "
        f"{args.model} float32 cpu, batch {args.batch_size}, {torch.get_num_threads()} threads, "
        f"load average {load:.2f}"
    )
    failed = []
    for shots in [int(s) for s in args.shots.split(",")]:
        requests = build(backend, rows, args.items, shots)
        warm = build(backend, rows[::-1], 2, shots)
        run_pragexp(backend, warm), run_lm_eval(lm, warm)
        ours_s, ours = run_pragexp(backend, requests)
        theirs_s, theirs = run_lm_eval(lm, requests)
        d = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
        ratio = theirs_s / ours_s
        tokens = len(tokenizer(requests[0].context, add_special_tokens=False)["input_ids"])
        target = TARGETS.get(shots, 1.0)
        print(
            f"{shots}-shot (prompt ~{tokens} tokens): pragexp items/s {args.items / ours_s:.2f}  "
            f"lm-eval items/s {args.items / theirs_s:.2f}  ratio {ratio:.2f} (target >= {target})  "
            f"max |d loglik| {d:.2e} (target <= {MAX_D:.0e})"
        )
        if d > MAX_D or ratio < target:
            failed.append(shots)
    if failed:
        sys.exit(f"targets missed at {failed}-shot")


if __name__ == "__main__":
    main()
