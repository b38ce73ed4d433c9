"""Re-score an LLM run's recorded decisions with a plain transformers loop, independently of pragexp's scorer.

    python experiments/llm/rescore.py outputs/llm/circa/0/predictions.jsonl
                                      [--model smollm2|<hub name|folder>] [--limit N]

For each record with `continuations` and `loglik` (model=llm with a log-likelihood scoring), every option is
scored with one full forward pass over `prompt + continuation` as lm-evaluation-harness pairs them (the
prompt's trailing whitespace belongs to the continuation), float32 on the CPU. Prints the number of options
re-scored, the largest |d loglik| against the record, and how many records' choices (argmax of the summed
log-likelihoods; ties to the first) agree; exits 1 when |d| > --tolerance (1e-3) or a choice differs (for
records scored by `sum`, where the choice is the argmax of the log-likelihoods).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pragexp.pretrained import SMOLLM2, smollm2_path  # noqa: E402  (only to find the GGUF file)


def load(name: str):
    if name == SMOLLM2:
        path = smollm2_path()
        source, kwargs = str(path.parent), {"gguf_file": path.name}
    else:
        source, kwargs = name, {}
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32, **kwargs).eval()
    return model, tokenizer


@torch.no_grad()
def loglik(model, tokenizer, prompt: str, continuation: str) -> float:
    context = prompt.rstrip()
    context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
    whole = tokenizer(prompt + continuation, add_special_tokens=False)["input_ids"]
    logp = torch.log_softmax(model(torch.tensor([whole])).logits[0].float(), -1)
    return sum(float(logp[t - 1, whole[t]]) for t in range(len(context_ids), len(whole)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("predictions", type=Path)
    p.add_argument("--model", default=SMOLLM2)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--tolerance", type=float, default=1e-3)
    args = p.parse_args(argv)
    records = [json.loads(line) for line in args.predictions.read_text().splitlines() if line.strip()]
    records = [r for r in records if r.get("continuations") and r.get("loglik")][: args.limit]
    if not records:
        print(f"{args.predictions}: no records with continuations and log-likelihoods", file=sys.stderr)
        return 2
    model, tokenizer = load(args.model)
    worst, options, agree, compared = 0.0, 0, 0, 0
    for record in records:
        ours = [loglik(model, tokenizer, record["prompt"], c) for c in record["continuations"]]
        worst = max(worst, *(abs(a - b) for a, b in zip(ours, record["loglik"], strict=True)))
        options += len(ours)
        if record.get("scoring", "sum") == "sum":
            compared += 1
            agree += max(range(len(ours)), key=lambda j: (ours[j], -j)) == record["choice"]
    print(
        f"{len(records)} records, {options} options re-scored: max |d loglik| {worst:.2e} "
        f"(tolerance {args.tolerance:g}); choices agree {agree}/{compared}"
    )
    return 0 if worst <= args.tolerance and agree == compared else 1


if __name__ == "__main__":
    sys.exit(main())
