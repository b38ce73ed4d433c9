"""Passage encoding for the index: pragexp's loop against a plain transformers loop, same model and batch.

    python bench/bench_pragmaticqa_encoding.py [--model minilm] [--passages 1024] [--batch-size 128]
                                               [--max-length 256] [--repeats 3] [--threads N]

Passages are DPR-sized (about 100 words, with a title), cut from the span texts of PragmatiCQA's train
split in ../shared/samples (or from the test fixtures, repeated, when that is absent). pragexp's side is
`pragexp.retrieval.encoders.encode_texts` (the data module's tokenizer, longest passages first, float16
rows written into a matrix); the plain side tokenizes each batch in file order with transformers'
AutoTokenizer and runs the same model object, mean-pooled and normalised, as a user would write it.
Timed: the encoding only, best of `--repeats` alternating runs. Prints passages/s of each, the time ratio
pragexp / plain (target <= 1.05) and the largest difference between the two sides' vectors.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from pragexp.data.common.tokens import tokenization as tt  # noqa: E402
from pragexp.pretrained import MINILM, minilm_path  # noqa: E402
from pragexp.retrieval.encoders import build_encoder, encode_texts  # noqa: E402

TARGET = 1.05
SAMPLE = ROOT.parent / "shared" / "samples" / "pragmaticqa" / "train.jsonl"
FIXTURE = ROOT / "tests" / "fixtures" / "pragmaticqa" / "train.jsonl"


def passages(count: int, words: int = 100) -> list[tuple[str, str]]:
    source = SAMPLE if SAMPLE.is_file() else FIXTURE
    stream, titles = [], []
    for line in source.read_text(encoding="utf-8").splitlines():
        conversation = json.loads(line)
        for qa in conversation["qas"]:
            for span in qa["a_meta"]["literal_obj"] + qa["a_meta"]["pragmatic_obj"]:
                stream += span["text"].split()
                titles.append(conversation["topic"])
    out = []
    while len(out) < count:
        i = len(out) * words % max(1, len(stream) - words)
        out.append((titles[len(out) % len(titles)], " ".join(stream[i : i + words])))
    return out


def pairs_to_inputs(tokenizer, pairs):
    titles, texts = zip(*pairs, strict=True)
    return tt.encode_batch(tokenizer, titles, texts)


def plain_loop(model, hf_tokenizer, pairs, batch_size: int, max_length: int) -> np.ndarray:
    out = np.empty((len(pairs), model.config.hidden_size), dtype=np.float16)
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            titles, texts = zip(*pairs[start : start + batch_size], strict=True)
            batch = hf_tokenizer(
                list(titles),
                list(texts),
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            states = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(states.dtype)
            pooled = F.normalize((states * mask).sum(1) / mask.sum(1), dim=-1)
            out[start : start + len(titles)] = pooled.numpy()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=MINILM)
    parser.add_argument("--passages", type=int, default=1024)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    from transformers import AutoTokenizer

    data = passages(args.passages)
    tokenizer = tt.configure(tt.load_pretrained_tokenizer(args.model), args.max_length)
    hf_tokenizer = AutoTokenizer.from_pretrained(minilm_path() if args.model == MINILM else args.model)
    encoder = build_encoder(args.model, "mean", True).eval()
    ours_s, plain_s = [], []
    ours = np.empty((len(data), encoder.dim), dtype=np.float16)
    for _ in range(args.repeats):
        start = time.perf_counter()
        encode_texts(
            encoder, partial(pairs_to_inputs, tokenizer), data, ours, args.batch_size, progress=False
        )
        ours_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        plain = plain_loop(encoder.model, hf_tokenizer, data, args.batch_size, args.max_length)
        plain_s.append(time.perf_counter() - start)
    best_ours, best_plain = min(ours_s), min(plain_s)
    difference = float(np.abs(ours.astype(np.float32) - plain.astype(np.float32)).max())
    print(
        f"{len(data)} passages (~100 words + title), {args.model}, batch {args.batch_size}, max "
        f"{args.max_length} tokens, {torch.get_num_threads()} threads"
    )
    print(f"  pragexp encode_texts   {len(data) / best_ours:8.1f} passages/s  ({best_ours:.2f} s)")
    print(f"  plain transformers     {len(data) / best_plain:8.1f} passages/s  ({best_plain:.2f} s)")
    ratio = best_ours / best_plain
    print(
        f"time ratio pragexp / plain: {ratio:.3f} (target <= {TARGET}): "
        f"{'met' if ratio <= TARGET else 'NOT met'}"
    )
    print(f"largest difference between the two sides' vectors: {difference:.2e}")


if __name__ == "__main__":
    main()
