"""LoRA training step: pragexp's `PromptedLLM` (llm.finetune=lora) vs a plain transformers + peft loop, same
batches.

    python bench/bench_lora_step.py [--model smollm2|tiny] [--batch-size 8] [--steps 20] [--warmup 2]
                                    [--shots 0] [--template 0] [--path circa.tsv] [--device cpu|cuda]
                                    [--dtype float32|bfloat16] [--threads N]

The batches: `--warmup + --steps` batches of `--batch-size` Circa items (context, question-X, answer-Y and
the RELAXED gold label, from the Circa sample, else the test fixture; shuffled with a fixed seed, repeated
as needed), prompted by conf/prompt/circa.yaml (`--template`, `--shots` demonstrations, chat template,
`scoring: sum`), each item scored on its 4 label verbalisations. Both trainers start from the same weights:
the same base model (`HFBackend.load()`), wrapped in peft's LoRA (r=8, alpha=16, dropout=0, peft's default
target modules) after `torch.manual_seed(--seed)`, so the adapters start equal (checked by a digest); AdamW,
lr 1e-4. A step is

- pragexp: `scores = net._trained_scores(items)` (rendering, chat template, tokenization and
  `choices.option_logliks`: shared prefix once, the items' contexts once, the options on their KV caches),
  `F.cross_entropy(scores, labels)`, backward, optimizer step, zero_grad;
- plain: the same (context, continuation) texts (pragexp's renderer, `net.text(rendered, backend)` and
  `rendered.continuations`, rendered once before timing: a data pipeline's work), tokenized in the step as
  lm-evaluation-harness pairs them (`choices.encode_request`), every item x option sequence right-padded into
  one tensor, one forward pass, the continuation tokens' log-probabilities gathered and summed per option,
  (batch, options) scores, then the same loss, backward and step.

Each trainer runs in its own subprocess (`--only pragexp|plain`), one after the other (pragexp first, never
both at once), and passes back its per-step losses and seconds as JSON on stdout; the parent compares them.
The first `--warmup` steps are trained but not timed; seconds per step are the mean over the timed steps
(time.perf_counter around the whole step, CUDA synchronised). Peak memory: on CUDA torch.cuda's
max_memory_allocated over the steps (reset after loading); on the CPU the subprocess's peak resident set size
(`ru_maxrss`, process-wide: model loading included, the same for both). The first batch's loss must agree
to 1e-4 in float32 (the weights are equal then); `max |d loss|` is over every step, warmup included (equal
updates up to float rounding). Target: ratio (pragexp s/step / plain s/step) <= 1.05.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLE = ROOT.parent / "shared" / "samples" / "circa" / "circa-sample.tsv"
FIXTURE = ROOT / "tests" / "fixtures" / "circa" / "circa-data.tsv"
TARGET = 1.05
MAX_D = 1e-4
LORA = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": None}
RESULT = "RESULT "  # the line a subprocess hands back


# -- data and prompt -----------------------------------------------------------------------------------------


def circa_batches(path: Path, batch_size: int, count: int, seed: int):
    """(pool of PromptItems, [(items, labels)] * count): Circa rows with a relaxed label, shuffled, cycled."""
    from pragexp.data.circa.io import read_circa_tsv, select_labelled
    from pragexp.prompting import PromptItem

    rows, _ = read_circa_tsv(path)
    kept, _ = select_labelled(rows, "relaxed")
    if not kept:
        raise SystemExit(f"{path}: no Circa row with a relaxed label")
    pool = [
        PromptItem(i, {"context": r.context, "question": r.question, "answer": r.answer}, label=y)
        for i, (r, y) in enumerate(kept)
    ]
    order = list(range(len(pool)))
    random.Random(seed).shuffle(order)
    batches = []
    for b in range(count):
        items = [pool[order[(b * batch_size + j) % len(order)]] for j in range(batch_size)]
        batches.append((items, [it.label for it in items]))
    return pool, batches


def circa_prompt(template: int, shots: int) -> dict:
    """conf/prompt/circa.yaml over conf/prompt/_choice.yaml, resolved with data.labels=relaxed."""
    from omegaconf import OmegaConf

    folder = ROOT / "conf" / "prompt"
    circa = OmegaConf.load(folder / "circa.yaml")
    circa.pop("defaults", None)
    prompt = OmegaConf.merge(OmegaConf.load(folder / "_choice.yaml"), circa)
    prompt.template, prompt.shots, prompt.scoring = template, shots, "sum"
    root = OmegaConf.create({"prompt": prompt, "data": {"labels": "relaxed"}})
    return OmegaConf.to_container(root, resolve=True)["prompt"]


# -- one trainer, in its own process -------------------------------------------------------------------------


def adapter_digest(model) -> str:
    digest = hashlib.sha256()
    for name, p in sorted(model.named_parameters()):
        if p.requires_grad:
            digest.update(name.encode())
            digest.update(p.detach().float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def plain_scores(model, tokenizer, texts, continuations):
    """(batch, options) summed continuation log-likelihoods: one right-padded forward over every pair."""
    import torch

    from pragexp.generation.scoring.requests import ChoiceRequest, encode_request

    sequences, starts = [], []
    for text, conts in zip(texts, continuations, strict=True):
        encoded = encode_request(tokenizer, ChoiceRequest(text, conts))
        for option in encoded.continuations:
            sequences.append(list(encoded.context + option))
            starts.append(len(encoded.context))
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), tokenizer.pad_token_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    rows, positions = [], []  # position t's logits predict token t + 1: a continuation token
    for r, (seq, start) in enumerate(zip(sequences, starts, strict=True)):
        ids[r, : len(seq)] = torch.tensor(seq)
        mask[r, : len(seq)] = 1
        rows += [r] * (len(seq) - start)
        positions += range(start - 1, len(seq) - 1)
    rows_t, positions_t = torch.tensor(rows), torch.tensor(positions)
    targets = ids[rows_t, positions_t + 1]
    device = model.device
    logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
    picked = torch.log_softmax(logits[rows_t.to(device), positions_t.to(device)].float(), dim=-1)
    token_logp = picked.gather(1, targets.to(device).unsqueeze(1)).squeeze(1)
    sums = torch.zeros(len(sequences), device=device).index_add(0, rows_t.to(device), token_logp)
    return sums.view(len(texts), -1)


def run_trainer(args) -> dict:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    ours = args.only == "pragexp"
    net, backend, base, tokenizer, batches = prompted_model(args, ours)
    model, texts = (net.lm, {}) if ours else plain_lora_model(net, backend, base, batches)
    digest = adapter_digest(model)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.lr)
    step = training_step(net, model, tokenizer, texts, optimizer, ours)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    losses, seconds, first_scores = timed_steps(step, batches, device)
    peak, before = peak_memory_mib(device, rss_before)
    first = [texts[it.index][0] for it in batches[0][0]] if not ours else None
    tokens = len(tokenizer(first[0] if first else "", add_special_tokens=False)["input_ids"])
    return {
        "trainer": args.only,
        "losses": losses,
        "seconds": seconds,
        "first_scores": first_scores,
        "adapters": digest,
        "trainable": sum(p.numel() for p in trainable),
        "peak_mib": peak,
        "before_mib": before,
        "prompt_tokens": tokens,
        "threads": torch.get_num_threads(),
    }


def prompted_model(args, ours: bool):
    """PromptedLLM on the backend's model (which the backend wraps in peft's LoRA for pragexp's trainer), its
    demonstrations drawn; the backend, its base model and tokenizer, and the batches."""
    import torch

    from pragexp.generation.backends.hf import HFBackend
    from pragexp.models.llm import PromptedLLM

    device, dtype = torch.device(args.device), getattr(torch, args.dtype)
    pool, batches = circa_batches(args.path, args.batch_size, args.warmup + args.steps, args.seed)
    prompt = circa_prompt(args.template, args.shots)
    backend = HFBackend(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        finetune="lora" if ours else "none",
        lora=LORA if ours else None,
    )
    base, tokenizer = backend.load()
    base.to(dtype)  # the tiny model is built in float32 whatever `dtype` says
    torch.manual_seed(args.seed)
    net = PromptedLLM(backend, prompt, num_labels=4).to(device)  # lora: wraps the base in peft here
    net.demonstrate(pool)
    return net, backend, base, tokenizer, batches


def plain_lora_model(net, backend, base, batches):
    """The plain trainer's model: peft's LoRA on the base model, and every item's text rendered once."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=LORA["r"],
        lora_alpha=LORA["alpha"],
        lora_dropout=LORA["dropout"],
        target_modules=LORA["target_modules"],
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(base, config).train()
    texts = {}  # item index -> (context text, continuations): rendered once, as a data pipeline would
    for items, _ in batches:
        for item in items:
            rendered = net.template.render(item, net.demonstrations)
            texts[item.index] = (net.text(rendered, backend), rendered.continuations)
    return model, texts


def training_step(net, model, tokenizer, texts: dict, optimizer, ours: bool):
    """One optimiser step on a batch: pragexp's scores (the fine-tuning path) or the plain trainer's."""
    import torch.nn.functional as F

    def step(items, labels):
        if ours:  # training mode, gradients on: the options' scores as fine-tuning computes them
            scores = net(items)
        else:
            pairs = [texts[it.index] for it in items]
            scores = plain_scores(model, tokenizer, [p[0] for p in pairs], [p[1] for p in pairs])
        loss = F.cross_entropy(scores, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss, scores

    return step


def timed_steps(step, batches, device) -> tuple[list[float], list[float], list | None]:
    """Each step's loss and seconds (the GPU synchronised), and the first batch's scores."""
    import torch

    cuda = device.type == "cuda"
    losses, seconds, first_scores = [], [], None
    for items, labels in batches:
        labels_t = torch.tensor(labels, device=device)
        start = time.perf_counter()
        loss, scores = step(items, labels_t)
        value = float(loss)
        if cuda:
            torch.cuda.synchronize(device)
        seconds.append(time.perf_counter() - start)
        losses.append(value)
        if first_scores is None:
            first_scores = scores.detach().float().cpu().tolist()
    return losses, seconds, first_scores


def peak_memory_mib(device, rss_before: int) -> tuple[float, float | None]:
    """The peak memory in MiB (the GPU's, or the process's RSS with its value before the steps)."""
    import torch

    cuda = device.type == "cuda"
    if cuda:
        peak = torch.cuda.max_memory_allocated(device) / 2**20
        before = None
    else:  # KiB on Linux, bytes on macOS
        scale = 2**20 if sys.platform == "darwin" else 2**10
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale
        before = rss_before / scale
    return peak, before


# -- the parent: both trainers, compared ---------------------------------------------------------------------


def child(name: str, argv: list[str], device: str) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), *argv, "--device", device, "--only", name]
    done = subprocess.run(cmd, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    if done.returncode != 0 or not lines:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the {name} trainer failed (exit {done.returncode})")
    return json.loads(lines[-1][len(RESULT) :])


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=SAMPLE if SAMPLE.is_file() else FIXTURE)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--shots", type=int, default=0)
    parser.add_argument("--template", type=int, default=0)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None)
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--only", choices=("pragexp", "plain"), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
    return args


def compare_first_batch(args, ours: dict, plain: dict) -> float:
    """The two trainers' first batch (loss and scores), checked in float32; the largest loss difference of all
    steps."""
    d_first = abs(ours["losses"][0] - plain["losses"][0])
    d_scores = max(
        abs(a - b)
        for ra, rb in zip(ours["first_scores"], plain["first_scores"], strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    d_loss = max(abs(a - b) for a, b in zip(ours["losses"], plain["losses"], strict=True))
    print(
        f"first batch: loss pragexp {ours['losses'][0]:.6f} plain {plain['losses'][0]:.6f}  |d loss| "
        f"{d_first:.2e}  max |d score| {d_scores:.2e} (adapters start equal: {ours['adapters']}, "
        f"{ours['trainable']} trainable weights; prompt ~{plain['prompt_tokens']} tokens)"
    )
    if args.dtype == "float32":
        assert d_first <= MAX_D, f"first-batch losses differ by {d_first:.2e} > {MAX_D:.0e}"
    return d_loss


def report_steps(args, results: dict, ours: dict, plain: dict, d_loss: float) -> None:
    """Seconds per timed step and peak memory of each trainer, and their ratio against the target."""
    per_step = {}
    for name, r in results.items():
        timed = r["seconds"][args.warmup :]
        per_step[name] = mean(timed)
        memory = f"peak memory {r['peak_mib']:.0f} MiB"
        if r["before_mib"] is not None:
            memory += f" (peak RSS before training {r['before_mib']:.0f} MiB)"
        print(
            f"{name}: {len(timed)} timed steps, s/step mean {per_step[name]:.4f} min {min(timed):.4f} "
            f"max {max(timed):.4f}, loss {r['losses'][0]:.4f} -> {r['losses'][-1]:.4f}, {memory}"
        )
    ratio = per_step["pragexp"] / per_step["plain"]
    print(
        f"pragexp s/step {per_step['pragexp']:.4f}  plain s/step {per_step['plain']:.4f}  ratio {ratio:.3f} "
        f"(target <= {TARGET})  peak memory pragexp {ours['peak_mib']:.0f} MiB plain {plain['peak_mib']:.0f} "
        f"MiB  max |d loss| {d_loss:.2e}"
    )
    if ratio > TARGET:
        sys.exit(f"ratio {ratio:.3f} misses the target <= {TARGET}")


def main() -> None:
    args = parse_args()
    if args.only:
        print(RESULT + json.dumps(run_trainer(args)), flush=True)
        return

    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.warmup} + {args.steps} steps of {args.batch_size} Circa items x 4 options from "
        f"{args.path.name}, model {args.model} {args.dtype} {device}, {args.shots}-shot template "
        f"{args.template}, LoRA r=8 alpha=16, AdamW lr {args.lr:g}, threads {args.threads or 'default'}, "
        f"load average {load:.2f}",
        flush=True,
    )
    results = {name: child(name, sys.argv[1:], device) for name in ("pragexp", "plain")}
    ours, plain = results["pragexp"], results["plain"]
    if ours["adapters"] != plain["adapters"]:
        raise SystemExit(f"the adapters do not start equal: {ours['adapters']} vs {plain['adapters']}")
    d_loss = compare_first_batch(args, ours, plain)
    report_steps(args, results, ours, plain, d_loss)


if __name__ == "__main__":
    main()
