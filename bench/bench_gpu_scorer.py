"""pragexp's option scorer against lm-evaluation-harness's HF backend on a GPU, on the same requests and the
same model: a ~1B-parameter Llama (the architecture of Llama 2/3, TinyLlama's shape) with random weights, in
float32 and bfloat16. Speed does not need trained weights; the choices are compared all the same (every item's
best option should be the same on both sides, and its log-likelihoods close).

    python bench/bench_gpu_scorer.py --data circa-data.tsv --tokenizer DIR [--items 1024]
        [--dtypes float32,bfloat16] [--lm-eval-batch-sizes 16,64,256] [--layers 16]

Needs a CUDA GPU and lm-evaluation-harness (`pip install 'pragexp[bench]'`). The requests: the first `--items`
labelled rows of a Circa file, each a plain-text context ("Context: ...\\nX: ...\\nY: ...\\nDoes Y mean yes or
no?\\nAnswer:") with the four RELAXED labels as options after a space. The tokenizer is any saved Hugging Face
tokenizer folder (SmolLM2's works: `--tokenizer` takes it); the model's vocabulary is sized to it. The model
is built once per dtype from one seed, saved to a temporary folder and loaded by `HFBackend` as a user's local
model would be; lm-eval's `HFLM` scores the very model object the backend loaded. pragexp's scorer has no
batch size to set: its passes have shapes fixed by each item (`generation/scoring/passes.py`), so that a score
does not depend on the call; lm-eval runs at each of `--lm-eval-batch-sizes` (pairs per pass), its fastest
counting as its best setting. Printed per dtype: items per second of each; then the ratio (lm-eval's best
seconds over pragexp's, both measured in this run), max |d loglik| and how many items' choices agree.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from option_scoring import compare, lm_eval_alone, scorer_alone  # noqa: E402

from pragexp.generation.backends.hf import HFBackend  # noqa: E402
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
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    requests = circa_requests(args.data, args.items)
    n = len(requests)
    where = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"{n} Circa items x {len(LABELS)} options; {where}", flush=True)
    for name in args.dtypes.split(","):
        one_dtype(args, name, requests)


def one_dtype(args, name: str, requests: list[ChoiceRequest]) -> None:
    n = len(requests)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        size = random_llama(args.tokenizer, args.layers, getattr(torch, name), Path(folder), args.device)
        backend = HFBackend(model=folder, device=args.device, dtype=name)
        backend.load()
        built = time.perf_counter() - start
        ours_s, ours = scorer_alone(backend, requests)
        print(f"{name}: pragexp scorer: {n / ours_s:.1f} items/s ({ours_s:.2f} s)", flush=True)
        runs = []
        for batch in args.lm_eval_batch_sizes:
            seconds, scores = lm_eval_alone(backend, requests, batch)
            print(
                f"{name}: lm-eval HFLM, batch {batch}: {n / seconds:.1f} items/s ({seconds:.2f} s)",
                flush=True,
            )
            runs.append((seconds, scores))
        theirs_s, theirs = min(runs, key=lambda r: r[0])
        d, agree = compare(ours, theirs)
        print(
            f"{name}: {size / 1e9:.2f}B parameters (built, saved, loaded in {built:.1f} s); ratio lm-eval "
            f"(its best batch) / pragexp {theirs_s / ours_s:.2f}; max |d loglik| {d:.2e}; choices agree "
            f"{agree}/{n}",
            flush=True,
        )
    if args.device == "cuda":
        torch.cuda.empty_cache()


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


if __name__ == "__main__":
    main()
