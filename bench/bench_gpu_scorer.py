"""pragexp's option scorer against lm-evaluation-harness's HF backend on a GPU, on the same requests and the
same model: a ~1B-parameter Llama (the architecture of Llama 2/3, TinyLlama's shape) with random weights, in
float32 and bfloat16. Speed does not need trained weights; the choices are compared all the same (every item's
best option should be the same on both sides, and its log-likelihoods close).

    python bench/bench_gpu_scorer.py --data circa-data.tsv --tokenizer DIR [--items 1024]
        [--dtypes float32,bfloat16] [--lm-eval-batch-sizes 16,64,256] [--layers 16]
        [--tables default,8192/8/512] [--vllm] [--json out.json]

Needs a CUDA GPU and lm-evaluation-harness (`pip install 'pragexp[bench]'`). The requests: the first `--items`
labelled rows of a Circa file, each a plain-text context ("Context: ...\\nX: ...\\nY: ...\\nDoes Y mean yes or
no?\\nAnswer:") with the four RELAXED labels as options after a space. The tokenizer is any saved Hugging Face
tokenizer folder (SmolLM2's works: `--tokenizer` takes it); the model's vocabulary is sized to it. The model
is built once per dtype from one seed, saved to a temporary folder and loaded by `HFBackend` as a user's local
model would be; lm-eval's `HFLM` scores the very model object the backend loaded. pragexp's scorer has no
batch size to set: its passes have shapes fixed by each item and the shape table (`generation/scoring/
passes.py`, `llm.pass_shapes`), so that a score does not depend on the call; `--tables` names the tables to
time (`default`: the device's and dtype's default; `T/B/R`: T tokens a pass, widths of B, at most R rows),
each printed with its padding share; lm-eval runs at each of `--lm-eval-batch-sizes` (pairs per pass), its
fastest counting as its best setting. Printed per dtype: items per second of each; then pragexp's speed over
lm-eval's best (both measured in this run; issue 55's target: at least 1.5), max |d loglik| and the share of
items whose choices agree. `--vllm`: also `llm=vllm` (prompt log-probs) and lm-eval's vllm backend on the
same requests and weights, where vLLM is installed and a GPU is there (skipped, saying why, elsewhere).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from option_scoring import compare, lm_eval_alone, padding_line, scorer_alone  # noqa: E402

from pragexp.generation.backends.hf import HFBackend  # noqa: E402
from pragexp.generation.scoring.passes import PassShapes  # noqa: E402
from pragexp.generation.scoring.requests import ChoiceRequest  # noqa: E402

LABELS = ("yes", "no", "in the middle, neither yes nor no", "yes, subject to some conditions")


def circa_requests(path: Path, items: int) -> list[ChoiceRequest]:
    """The first `items` rows with a RELAXED label (goldstandard2) as plain-text choice requests."""
    requests = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if (row.get("goldstandard2") or "").strip() in ("", "NA", "nan"):
                continue
            context = (
                f"Context: {row['context']}\nX: {row['question-X']}\nY: {row['answer-Y']}\n"
                "Does Y mean yes or no?\nAnswer:"
            )
            requests.append(ChoiceRequest(context, tuple(f" {label}" for label in LABELS)))
            if len(requests) == items:
                break
    return requests


def random_llama(tokenizer_dir: Path, layers: int, dtype: torch.dtype, folder: Path, device: str) -> int:
    """A ~1B-parameter Llama with random weights (seed 0) saved with the tokenizer into `folder`; its size."""
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=2048,
        intermediate_size=5632,
        num_hidden_layers=layers,
        num_attention_heads=32,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        torch_dtype=dtype,
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    size = sum(p.numel() for p in model.parameters())
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a Circa TSV (circa-data.tsv)")
    parser.add_argument("--tokenizer", type=Path, required=True, help="a saved tokenizer folder")
    parser.add_argument("--items", type=int, default=1024)
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--lm-eval-batch-sizes", type=_sizes, default=[16, 64, 256], help="pairs per pass")
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--device", default="cuda", help="cpu: a dry run of the script itself (few layers)")
    parser.add_argument(
        "--tables", default="default", help="shape tables to time: default or T/B/R[/O][/<n>l][/pow2], ..."
    )
    parser.add_argument("--vllm", action="store_true", help="also llm=vllm and lm-eval's vllm backend")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    requests = circa_requests(args.data, args.items)
    n = len(requests)
    where = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"{n} Circa items x {len(LABELS)} options; {where}", flush=True)
    figures = {name: one_dtype(args, name, requests) for name in args.dtypes.split(",")}
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


def one_dtype(args, name: str, requests: list[ChoiceRequest]) -> dict:
    n = len(requests)
    out: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        size = random_llama(args.tokenizer, args.layers, getattr(torch, name), Path(folder), args.device)
        backend = HFBackend(model=folder, device=args.device, dtype=name)
        backend.load()
        say(
            f"{name}: {size / 1e9:.2f}B parameters (built, saved, loaded in "
            f"{time.perf_counter() - start:.1f} s)"
        )
        runs, default = [], backend.pass_shapes
        for table in args.tables.split(","):
            backend.pass_shapes = _table(table, default)
            say(f"{name}: {padding_line(backend, requests)}")
            seconds, scores = scorer_alone(backend, requests)
            say(f"{name}: pragexp scorer, table {table}: {n / seconds:.1f} items/s ({seconds:.2f} s)")
            runs.append((seconds, scores))
            out[f"pragexp {table}"] = n / seconds
        ours_s, ours = runs[0]  # the first table: the default unless told otherwise
        theirs_s, theirs = lm_eval_best(args, backend, requests, name, out)
        d, agree = compare(ours, theirs)
        say(
            f"{name}: pragexp (table {args.tables.split(',')[0]}) / lm-eval HFLM's best batch, speed: "
            f"{theirs_s / ours_s:.2f} (target >= 1.5); max |d loglik| {d:.2e}; choices equal {agree}/{n} "
            f"({agree / n:.1%})"
        )
        out.update(ratio=theirs_s / ours_s, max_d_loglik=d, choices_equal=agree, items=n)
        if args.vllm:
            out["vllm"] = vllm_rows(folder, name, requests, ours)
    if args.device == "cuda":
        torch.cuda.empty_cache()
    return out


def lm_eval_best(args, backend, requests, name: str, out: dict) -> tuple[float, list]:
    """lm-eval's HFLM at each batch size; its fastest run (seconds, scores)."""
    n, runs = len(requests), []
    for batch in args.lm_eval_batch_sizes:
        seconds, scores = lm_eval_alone(backend, requests, batch)
        say(f"{name}: lm-eval HFLM, batch {batch}: {n / seconds:.1f} items/s ({seconds:.2f} s)")
        runs.append((seconds, scores))
        out[f"lm-eval batch {batch}"] = n / seconds
    return min(runs, key=lambda r: r[0])


def _table(text: str, default: PassShapes) -> PassShapes:
    if text == "default":
        return default
    return PassShapes.parse(text)


def vllm_rows(folder: str, dtype: str, requests: list[ChoiceRequest], ours: list) -> dict:
    """llm=vllm's scores (prompt log-probs) and lm-eval's vllm backend on the same requests and weights."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        say("vllm rows: skipped (vLLM is not installed: pip install 'pragexp[vllm]')")
        return {"skipped": "vLLM is not installed"}
    if not torch.cuda.is_available():
        say("vllm rows: skipped (no CUDA GPU)")
        return {"skipped": "no CUDA GPU"}
    from lm_eval.api.instance import Instance
    from lm_eval.models.vllm_causallms import VLLM

    from pragexp.generation.backends.vllm import VLLMBackend

    n, out = len(requests), {}
    backend = VLLMBackend(model=folder, dtype=dtype, gpu_memory_utilization=0.35)
    backend.loglikelihood_many(requests[:2])  # warm-up (and the engine's start)
    start = time.perf_counter()
    mine = [[s.loglik for s in row] for row in backend.loglikelihood_many(requests)]
    out["pragexp_vllm"] = n / (time.perf_counter() - start)
    d, agree = compare(ours, mine)
    say(
        f"{dtype}: pragexp llm=vllm: {out['pragexp_vllm']:.1f} items/s; vs llm=hf: max |d loglik| {d:.2e}, "
        f"choices equal {agree}/{n}"
    )
    del backend
    lm = VLLM(pretrained=folder, dtype=dtype, gpu_memory_utilization=0.35, add_bos_token=False)
    pairs = [
        Instance("loglikelihood", {}, (r.context, o), j) for r in requests for j, o in enumerate(r.options)
    ]
    start = time.perf_counter()
    lm.loglikelihood(pairs, disable_tqdm=True)
    out["lm_eval_vllm"] = n / (time.perf_counter() - start)
    say(f"{dtype}: lm-eval vllm loglikelihood: {out['lm_eval_vllm']:.1f} items/s")
    return out


def say(line: str) -> None:
    print(line, flush=True)


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


if __name__ == "__main__":
    main()
