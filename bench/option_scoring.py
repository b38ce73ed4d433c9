"""What the option-scoring benchmarks share: pragexp's scorer alone (`HFBackend.loglikelihood_many`) and
lm-evaluation-harness's `HFLM.loglikelihood` timed on the same requests and the same model object, and the
comparison of their log-likelihoods and choices."""

from __future__ import annotations

import time

from pragexp.generation.backends.hf import HFBackend
from pragexp.generation.scoring.requests import ChoiceRequest


def scorer_alone(backend: HFBackend, requests: list[ChoiceRequest]) -> tuple[float, list[list[float]]]:
    """Seconds and log-likelihoods of one `loglikelihood_many` call on every request (after a warm-up on
    two)."""
    backend.loglikelihood_many(requests[:2])
    synchronize(backend)
    start = time.perf_counter()
    scores = backend.loglikelihood_many(requests)
    synchronize(backend)
    return time.perf_counter() - start, [[s.loglik for s in row] for row in scores]


def lm_eval_alone(backend: HFBackend, requests: list[ChoiceRequest], batch_size: int):
    """The same for lm-evaluation-harness's HFLM on the backend's own model and tokenizer: one (context,
    continuation) pair per option, as its multiple-choice tasks ask."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    model, tokenizer = backend.load()
    lm = HFLM(
        pretrained=model,
        tokenizer=tokenizer,
        batch_size=batch_size,
        add_bos_token=False,  # pragexp adds no special token: the chat template writes its own
        prefix_token_id=tokenizer.eos_token_id,  # an empty context is end-of-text in pragexp
        max_length=getattr(model.config, "max_position_embeddings", 2048),
    )
    instances = [
        Instance(request_type="loglikelihood", doc={}, arguments=(r.context, o), idx=j)
        for r in requests
        for j, o in enumerate(r.options)
    ]
    lm.loglikelihood(instances[:8], disable_tqdm=True)  # warm-up
    synchronize(backend)
    start = time.perf_counter()
    out = iter(ll for ll, _ in lm.loglikelihood(instances, disable_tqdm=True))
    synchronize(backend)
    seconds = time.perf_counter() - start
    return seconds, [[float(next(out)) for _ in r.options] for r in requests]


def synchronize(backend: HFBackend) -> None:
    """Wait for the GPU's queued work, so that a timer reads the work done (nothing on a CPU)."""
    import torch

    if torch.cuda.is_available() and backend.device_name != "cpu":
        torch.cuda.synchronize()


def compare(a: list[list[float]], b: list[list[float]]) -> tuple[float, int]:
    """max |d| over every option, and the number of items whose best option is the same (ties: the first)."""
    d = max(abs(x - y) for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))

    def best(row):
        return max(range(len(row)), key=lambda i: (row[i], -i))

    return d, sum(best(ra) == best(rb) for ra, rb in zip(a, b, strict=True))


def padding_line(backend: HFBackend, requests: list[ChoiceRequest]) -> str:
    """The scorer's shape table and the share of its passes' token positions that are padding within rows
    and repeats filling a width's last pass (`passes.padding_share`), for these requests in one call."""
    from pragexp.generation.scoring.passes import padding_share
    from pragexp.generation.scoring.requests import encode_request

    _, tokenizer = backend.load()
    wanted: dict = {}
    for r in requests:
        e = encode_request(tokenizer, r)
        wanted.setdefault((e.context, e.head), set()).update(e.continuations)
    shapes = backend.pass_shapes
    share = padding_share(wanted, shapes)
    total = sum(share.values())
    table = " ".join(f"{w}:{r}" for w, r in shapes.table())
    options = "powers of two" if shapes.option_widths == "pow2" else f"multiples of {shapes.bucket}"
    return (
        f"shape table {shapes.name()}: {shapes.tokens} tokens a pass, widths of {shapes.bucket}, at most "
        f"{shapes.max_rows} rows (width:rows {table}); options padded to {options}, at most "
        f"{shapes.option_rows or shapes.max_rows} rows a pass; of {total} token positions computed: "
        f"{share['real'] / total:.1%} real, {share['pad'] / total:.1%} padding, "
        f"{share['filler'] / total:.1%} repeats filling last passes"
    )
