"""Generation against lm-evaluation-harness's `generate_until`: tokens per second on the same prompts, the
same model object, greedy, the same number of new tokens (issue 55, item 3).

    python bench/bench_generate_vs_lm_eval.py [--data Hi-ToM_data.json] [--prompts 8] [--max-new-tokens 256]
        [--model smollm2|tiny|<folder>] [--batch-size 8] [--lm-eval-batch-size 8] [--device cpu|cuda]
        [--dtype float32] [--threads 1] [--vllm] [--json out.json]

The prompts: Hi-ToM's questions in the authors' CoTP protocol (`conf/prompt/hitom.yaml`, template
`authors_cotp`: its system turn and its user turn through the model's chat template), the first `--prompts`
questions of the file (`../shared/samples/hitom/sample.json`, else the test fixture). Both sides get the same
templated text and generate exactly `--max-new-tokens` tokens per prompt (end-of-text suppressed until then:
pragexp's `ignore_eos`, transformers' `min_new_tokens` through lm-eval's generation kwargs), so that tokens
per second compare the same work:

1. pragexp: `HFBackend.generate_samples` (`llm=hf`: each prompt prefilled alone, `--batch-size` rows
   decoded at once, `generation/backends/row_decoding.py`);
2. lm-eval: `HFLM(pretrained=<the same model>, tokenizer=<the same>, batch_size=<--lm-eval-batch-size>)
   .generate_until` with `until: []` (its end-of-text stop only), `max_gen_toks`, `do_sample: false`;
3. with `--vllm`, where vLLM is installed and a GPU is there: `llm=vllm` and lm-eval's `vllm` backend on the
   same prompts (each loads the model itself; skipped, saying why, elsewhere).

Printed: each side's seconds and generated tokens per second (tokens counted by re-encoding each reply with
the model's tokenizer, the same way for every side), the ratio, and how many replies are identical (greedy:
they differ only where two tokens are within float rounding of each other).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from pragexp.data.hitom.io import read_questions  # noqa: E402
from pragexp.generation.backends.base import GenerationParams, Prompt  # noqa: E402
from pragexp.generation.backends.hf import HFBackend  # noqa: E402

SAMPLE = ROOT.parent / "shared" / "samples" / "hitom" / "sample.json"
FIXTURE = ROOT / "tests" / "fixtures" / "hitom" / "Hi-ToM_data.json"


def cotp_texts(path: Path, n: int, backend) -> list[str]:
    """The first `n` questions as the authors' CoTP prompt, through the model's chat template."""
    templates = OmegaConf.load(ROOT / "conf" / "prompt" / "hitom.yaml").templates
    cotp = next(t for t in templates if t.name == "authors_cotp")
    texts = []
    for q in read_questions(path)[:n]:
        user = cotp.input.format(story=q.story, question=q.question, choices=q.choices)
        messages = [{"role": "system", "content": cotp.system}, {"role": "user", "content": user}]
        texts.append(backend.chat_text(messages) or f"{cotp.system}\n\n{user}\n")
    return texts


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def pragexp_side(backend: HFBackend, texts: list[str], new_tokens: int, device: str):
    params = GenerationParams(max_new_tokens=new_tokens, ignore_eos=True)
    prompts = [Prompt(t, templated=True) for t in texts]
    backend.generate_samples(prompts[:1], GenerationParams(max_new_tokens=4), 0)  # warm-up
    synchronize(device)
    start = time.perf_counter()
    replies = backend.generate_samples(prompts, params, 0)
    synchronize(device)
    return time.perf_counter() - start, replies


def lm_eval_side(backend: HFBackend, texts: list[str], new_tokens: int, batch: int, device: str):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    model, tokenizer = backend.load()
    lm = HFLM(
        pretrained=model,
        tokenizer=tokenizer,
        batch_size=batch,
        add_bos_token=False,  # the chat template writes what the model reads first
        max_length=getattr(model.config, "max_position_embeddings", 2048),
    )
    kwargs = {"until": [], "max_gen_toks": new_tokens, "do_sample": False, "min_new_tokens": new_tokens}
    instances = [
        Instance(request_type="generate_until", doc={}, arguments=(t, dict(kwargs)), idx=0) for t in texts
    ]
    warm = {**kwargs, "max_gen_toks": 4, "min_new_tokens": 4}
    lm.generate_until([Instance("generate_until", {}, (texts[0], warm), 0)], disable_tqdm=True)
    synchronize(device)
    start = time.perf_counter()
    replies = lm.generate_until(instances, disable_tqdm=True)
    synchronize(device)
    return time.perf_counter() - start, replies


def tokens(tokenizer, replies: list[str]) -> int:
    return sum(len(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SAMPLE if SAMPLE.is_file() else FIXTURE)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--batch-size", type=int, default=8, help="llm.batch_size: rows of a batch")
    parser.add_argument("--lm-eval-batch-size", type=int, default=None, help="default: --batch-size")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--vllm", action="store_true", help="also llm=vllm and lm-eval's vllm backend")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here too")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: torch sees no CUDA device")
    backend = HFBackend(model=args.model, device=args.device, dtype=args.dtype, batch_size=args.batch_size)
    model, tokenizer = backend.load()
    texts = cotp_texts(args.data, args.prompts, backend)
    lengths = [len(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts]
    where = (
        torch.cuda.get_device_name() if args.device == "cuda" else f"cpu, {torch.get_num_threads()} threads"
    )
    say(
        f"{len(texts)} Hi-ToM CoTP prompts from {args.data.name} ({min(lengths)}-{max(lengths)} tokens), "
        f"{args.max_new_tokens} new tokens each, greedy; model {args.model} {args.dtype}; {where}"
    )
    figures = {"prompts": len(texts), "new_tokens": args.max_new_tokens, "model": args.model}
    ours_s, ours = pragexp_side(backend, texts, args.max_new_tokens, args.device)
    figures["pragexp"] = row("pragexp llm=hf", ours_s, tokens(tokenizer, ours), f"batch {args.batch_size}")
    batch = args.lm_eval_batch_size or args.batch_size
    theirs_s, theirs = lm_eval_side(backend, texts, args.max_new_tokens, batch, args.device)
    figures["lm_eval_hf"] = row(
        "lm-eval HFLM generate_until", theirs_s, tokens(tokenizer, theirs), f"batch {batch}"
    )
    same = sum(a == b for a, b in zip(ours, theirs, strict=True))
    figures["ratio"] = figures["pragexp"]["tokens_per_s"] / figures["lm_eval_hf"]["tokens_per_s"]
    say(f"ratio pragexp / lm-eval (tokens/s): {figures['ratio']:.2f}; identical replies {same}/{len(texts)}")
    figures["identical_replies"] = same
    if args.vllm:
        figures["vllm"] = vllm_rows(args, backend, texts)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


def row(name: str, seconds: float, n_tokens: int, note: str = "") -> dict:
    rate = n_tokens / seconds
    say(f"{name}{f' ({note})' if note else ''}: {n_tokens} tokens in {seconds:.2f} s = {rate:.1f} tokens/s")
    return {"seconds": seconds, "tokens": n_tokens, "tokens_per_s": rate}


def vllm_rows(args, backend: HFBackend, texts: list[str]) -> dict:
    """llm=vllm and lm-eval's vllm backend on the same prompts and weights (the model HFBackend loaded, saved
    to a folder that both load), where vLLM and a GPU are there."""
    why = vllm_missing()
    if why:
        say(f"vllm rows: skipped ({why})")
        return {"skipped": why}
    import tempfile

    from lm_eval.api.instance import Instance
    from lm_eval.models.vllm_causallms import VLLM

    from pragexp.generation.backends.vllm import VLLMBackend

    model, tokenizer = backend.load()
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        ours = VLLMBackend(model=folder, dtype=args.dtype, gpu_memory_utilization=0.35)
        params = GenerationParams(max_new_tokens=args.max_new_tokens, ignore_eos=True)
        prompts = [Prompt(t, templated=True) for t in texts]
        ours.generate_samples(prompts[:1], GenerationParams(max_new_tokens=4), 0)  # warm-up
        start = time.perf_counter()
        replies = ours.generate_samples(prompts, params, 0)
        out["pragexp_vllm"] = row("pragexp llm=vllm", time.perf_counter() - start, tokens(tokenizer, replies))
        lm = VLLM(pretrained=folder, dtype=args.dtype, gpu_memory_utilization=0.35, add_bos_token=False)
        n = args.max_new_tokens
        kwargs = {"until": [], "max_gen_toks": n, "do_sample": False, "min_tokens": n}
        start = time.perf_counter()
        theirs = lm.generate_until([Instance("generate_until", {}, (t, dict(kwargs)), 0) for t in texts])
        seconds = time.perf_counter() - start
        out["lm_eval_vllm"] = row("lm-eval vllm generate_until", seconds, tokens(tokenizer, theirs))
    return out


def vllm_missing() -> str | None:
    """Why the vllm rows cannot run here (None: they can)."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        return "vLLM is not installed: pip install 'pragexp[vllm]'"
    if not torch.cuda.is_available():
        return "no CUDA GPU"
    return None


def say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    main()
