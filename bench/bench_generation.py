"""LLM generation for the intentions' reply task: batched vs one prompt at a time, and a re-run from the
cache.

    python bench/bench_generation.py [--path dev.csv] [--model smollm2|tiny|<hub name>] [--prompts 16]
                                     [--max-new-tokens 64] [--batch-size 16] [--threads N]
                                     [--part all|batch|cache]

1. Batched generation: the same `--prompts` generation prompts (the paper's A.3 prompt at every CoT level
   over the items, so the lengths vary) with the same token budget, greedy, through HFBackend with
   `batch_size` 16 (left padding, KV cache) and with `batch_size` 1. Both give the same replies (checked);
   every reply gets the whole budget (`ignore_eos`; `--stop-at-eos` lets replies end, and then prompt
   processing dominates); throughput is generated tokens per second of wall time. Target: >= 3x on CPU.
2. Cache: the whole pipeline of task=intentions_reply on the items (generation at temperatures 0.3
   and 0.5 and the MiniLM embedding judge), first into an empty response cache, then again with fresh
   backend objects: the second run must make 0 model calls and take <= 5% of the first's wall time
   (the first includes loading the models: a re-run from the cache loads none).
Prints the measured figures and both ratios from this one run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from pragexp.data.intentions.io import read_intentions_csv  # noqa: E402
from pragexp.data.intentions.judges import EmbeddingJudge  # noqa: E402
from pragexp.data.intentions.prompt_items import prompt_item  # noqa: E402
from pragexp.generation.backends.base import GenerationParams, Prompt  # noqa: E402
from pragexp.generation.backends.encoder import EncoderBackend  # noqa: E402
from pragexp.generation.backends.hf import HFBackend  # noqa: E402
from pragexp.generation.cache.cached_backend import cached, close_caches  # noqa: E402
from pragexp.prompting import extract_reply, load_templates  # noqa: E402
from pragexp.prompting.items import JudgeRequest  # noqa: E402

BATCH_TARGET, CACHE_TARGET = 3.0, 0.05
FIXTURE = ROOT / "tests" / "fixtures" / "intentions" / "hu_gpt4augmented_turn2_data.csv"
DEV = ROOT.parent / "shared" / "samples" / "intentions" / "dev.csv"


# The reply prompt at every chain-of-thought level (plain first), as task=intentions_reply renders it.
TEMPLATES = load_templates(
    OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "prompt" / "intentions_reply.yaml").templates)
)


def reply_prompt(item, template=TEMPLATES[0]) -> Prompt:
    """One user turn, which the backend puts in the model's chat template."""
    return Prompt(template.render(item, generate=True).plain)


def bench_prompts(items, n: int) -> list[Prompt]:
    return [reply_prompt(item, template) for template in TEMPLATES for item in items][:n]


def timed_generation(backend: HFBackend, prompts, params) -> tuple[list[str], float, int]:
    _, tokenizer = backend.load()
    start = time.perf_counter()
    replies = backend.generate_samples(prompts, params, 0)
    seconds = time.perf_counter() - start
    tokens = sum(len(tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies)  # re-encoded
    return replies, seconds, tokens


def pipeline(items, model: str, cache_dir: Path, max_new_tokens: int) -> tuple[float, int]:
    """task=intentions_reply's calls for `items` (plain prompt, t=0.3 and 0.5, embedding judge)."""
    start = time.perf_counter()
    llm = cached(HFBackend(model=model, batch_size=16), cache_dir)
    judge = EmbeddingJudge(EncoderBackend("minilm"), cache_dir)
    prompts = [reply_prompt(item) for item in items]
    requests = []
    for temperature in (0.3, 0.5):
        params = GenerationParams(temperature=temperature, max_new_tokens=max_new_tokens, seed=0)
        for item, draws in zip(items, llm.generate(prompts, params), strict=True):
            requests.append(JudgeRequest(item, extract_reply(draws[0], None, item.fields["listener"])))
    judge(requests)
    close_caches()
    return time.perf_counter() - start, llm.model_calls + judge.backend.model_calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=DEV if DEV.is_file() else FIXTURE)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--part", choices=("all", "batch", "cache"), default="all")
    parser.add_argument(
        "--stop-at-eos", action="store_true", help="let replies end early (the default forces the budget)"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    items = [prompt_item(item, i) for i, item in enumerate(read_intentions_csv(args.path)[0])]
    ok = True
    if args.part in ("all", "batch"):
        ok &= bench_batching(items, args)
    if args.part in ("all", "cache"):
        ok &= bench_cache(items, args)
    return 0 if ok else 1


def bench_batching(items, args) -> bool:
    prompts = bench_prompts(items, args.prompts)
    greedy = GenerationParams(0.0, args.max_new_tokens, ignore_eos=not args.stop_at_eos)
    print(f"{len(prompts)} prompts from {args.path}, model {args.model}, {torch.get_num_threads()} threads")

    batched = HFBackend(model=args.model, batch_size=args.batch_size)
    single = HFBackend(model=args.model, batch_size=1)
    single._model, single._tokenizer = batched.load()  # the same weights, loaded once
    timed_generation(batched, prompts[:2], greedy)  # warm-up
    out_b, sec_b, tok_b = timed_generation(batched, prompts, greedy)
    out_s, sec_s, tok_s = timed_generation(single, prompts, greedy)
    same = sum(a.strip() == b.strip() for a, b in zip(out_b, out_s, strict=True))
    ratio = (tok_b / sec_b) / (tok_s / sec_s)
    print(f"batched (batch {args.batch_size}): {tok_b} tokens in {sec_b:.2f}s = {tok_b / sec_b:.1f} tokens/s")
    print(f"one at a time:       {tok_s} tokens in {sec_s:.2f}s = {tok_s / sec_s:.1f} tokens/s")
    print(f"identical replies: {same}/{len(prompts)}")
    print(f"throughput ratio batched / one-at-a-time: {ratio:.2f}x (target >= {BATCH_TARGET:.0f}x)")
    return ratio >= BATCH_TARGET


def bench_cache(items, args) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        first, calls_first = pipeline(items, args.model, Path(folder), args.max_new_tokens)
        again, calls_again = pipeline(items, args.model, Path(folder), args.max_new_tokens)
    share = again / first
    print(f"pipeline on {len(items)} items: first run {first:.2f}s ({calls_first} model calls)")
    print(f"re-run from the cache: {again:.3f}s ({calls_again} model calls)")
    print(f"re-run / first run wall time: {share:.4f} (target <= {CACHE_TARGET})")
    return calls_again == 0 and share <= CACHE_TARGET


if __name__ == "__main__":
    sys.exit(main())
