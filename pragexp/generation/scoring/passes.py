"""The scorer's forward passes (`scorer`), each with its shape: the item pass of step 2 (`run_items`: items'
own parts on a prefix's KV cache), the option passes of step 3 (`first_tokens`; `rowwise_rest`: a row per
option on a copy of its item's cache; `packed_rest`: an item's options side by side in one row) and, for
scoring, the layout of fixed shapes (`plan`, `bucket`, `rows_for`, `filled`).

Scoring's passes are laid out so that each context's numbers depend on the context alone: not on the other
contexts of the call, their order, the response cache (it asks only for what it lacks) or a batch-size setting
(issue 27). Float rounding follows a pass's shapes (in bfloat16 up to
0.35 in a log-likelihood), so every shape here is a function of the context alone:

- a context is (its token ids, its head: how many of its leading tokens its prompt shares with the prompt's
  other items, `EncodedRequest.head`). The head runs once per distinct head (batch of one) and its KV cache
  serves every row on it;
- the rest of the context (its own part, at least its last token) is padded to its width, a multiple of the
  shape table's `bucket` tokens (`PassShapes`, `llm.pass_shapes`): on the left after a head, so that every
  row's last token, whose logits score the options' first token, is the pass's last position; on the right
  without one (a left pad would attend to nothing), with at least one pad (transformers may drop a mask of
  ones, and with it change the attention kernel, where no row has a pad and queries and keys are as many), the
  logits kept at the `bucket` positions where such a row may end;
- a pass holds rows of one (head, width), as many as the table's `tokens` make at that width (at least one, at
  most `max_rows`), a short pass filled with repeats of its first row, whose results are dropped. A forward
  pass costs a fixed part (the weights read once, the kernels launched) and a part per token, and a call's
  rows of a width are often few: a pass of short rows holds many, a pass of long rows (demonstrations drawn
  for each item) one, so that the dummies never cost more than `tokens` tokens per width. The table is chosen
  per device and dtype (`DEFAULT_SHAPES`): a CPU pays mostly per token, a GPU mostly per pass.

The rest of a longer option (its tokens after the first) runs the same way on a copy of its item's cache:
padded to the table's `option_width`, rows of one width in passes that `option_rows_for` and `filled` lay out
(`scorer._options_fixed`, gathered over the item passes of one head and width).

Fixed shapes, not the batch-size invariance of a BLAS (which GPUs do not promise), make a row's numbers the
same whatever shares its pass: a row of a matrix product of a given shape is computed the same way whatever
the other rows hold, and attention is per row. Not wherever it sits, though, at every shape: on this CPU a
product of 5-7 or 9-11 rows rounds a row by its place, so the tables keep every product's rows a multiple of
8 (`PassShapes.logit_multiple` for the one product that was not: an item pass's kept logits).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import torch

from pragexp.generation.scoring.causal_lm import CausalLM
from pragexp.utils.tensors import pad_right

Context = tuple[tuple[int, ...], int]  # (token ids, head length in tokens)


# -- scoring's fixed shapes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassShapes:
    """The shape table: own parts padded to a multiple of `bucket` tokens; a pass of width w holds
    `rows_for(w)` rows: as many as `tokens` make at that width, at least one, at most `max_rows`. A longer
    option's fed tokens (all but its last) are padded to `option_width`: a multiple of `bucket`
    (`option_widths` "bucket"), or a power of two, at least 2 ("pow2": Circa's options feed 1, 1, 6 and 5
    tokens, 13 positions in 18 rather than 32). An option pass holds `option_rows_for(w)` rows, at most
    `option_rows`: each row copies its item's KV cache, so on a CPU many short rows cost more in copies than
    they save in passes. An item pass computes the logits of `logit_positions(rows)` positions a row (the
    last), so that their matrix product has a multiple of `logit_multiple` rows: this CPU's float32 GEMM
    rounds a row by its place in the product where the product has 5-7 or 9-11 rows (measured with the
    output layers of SmolLM2 and of a 32-wide Llama alike), never at a multiple of 8, and an item pass of 9
    rows would otherwise give an item other bits beside other items. Part of a score's cache key (a pass's
    shapes decide float rounding): named there by `name` unless it is `SHAPES_V4`, the table every score was
    computed with before tables existed."""

    tokens: int = 128
    bucket: int = 8
    max_rows: int = 4096
    option_rows: int | None = None  # None: max_rows
    option_widths: str = "bucket"
    logit_multiple: int = 1

    def __post_init__(self):
        if min(self.tokens, self.bucket, self.max_rows, self.option_rows or 1, self.logit_multiple) < 1:
            numbers = "tokens, bucket, max_rows, option_rows and logit_multiple"
            raise ValueError(f"llm.pass_shapes {self}: {numbers} must be >= 1")
        if self.option_widths not in ("bucket", "pow2"):
            raise ValueError(f"llm.pass_shapes {self}: option_widths is 'bucket' or 'pow2'")

    def rows_for(self, width: int) -> int:
        return max(1, min(self.max_rows, self.tokens // width))

    def option_width(self, fed: int) -> int:
        """The padded width of a longer option's `fed` tokens. Never 1: a pass of one query per row and no pad
        would have a mask of ones, which transformers drops (another attention kernel) where the rows' caches
        have no pad either, so the row's numbers would depend on its pass-mates."""
        if self.option_widths == "pow2":
            return max(2, 1 << (fed - 1).bit_length())
        return max(2, bucket(fed, shapes=self))

    def option_rows_for(self, width: int) -> int:
        """How many rows an option pass of this width holds: as many as `tokens` make, at most `option_rows`
        (else `max_rows`), at least one."""
        return max(1, min(self.option_rows or self.max_rows, self.tokens // width))

    def logit_positions(self, rows: int) -> int:
        """How many positions a row of an item pass of `rows` rows (after a head) computes logits at: the
        fewest that make the rows' positions together a multiple of `logit_multiple`."""
        return self.logit_multiple // math.gcd(rows, self.logit_multiple)

    def name(self) -> str:
        name = f"{self.tokens}t/{self.bucket}b/{self.max_rows}r"
        if self.option_rows is not None:
            name += f"/{self.option_rows}o"
        if self.logit_multiple != 1:
            name += f"/{self.logit_multiple}l"
        return name if self.option_widths == "bucket" else f"{name}/{self.option_widths}"

    @classmethod
    def parse(cls, name: str) -> PassShapes:
        """The table a `name` names ("512t/8b/4096r/16o/8l/pow2"); numbers without their letter are tokens,
        bucket, max_rows and option_rows in that order ("512/8/16")."""
        fields, settings = name.split("/"), {}
        letters = {"t": "tokens", "b": "bucket", "r": "max_rows", "o": "option_rows", "l": "logit_multiple"}
        if fields[-1] in ("bucket", "pow2"):
            settings["option_widths"] = fields.pop()
        for at, field in enumerate(fields):
            key = letters.get(field[-1:]) or (list(letters.values())[at] if at < 4 else None)
            number = field.rstrip("tbrol")
            if key is None or key in settings or not number.isdigit():
                settings = {}
                break
            settings[key] = int(number)
        if not {"tokens", "bucket", "max_rows"} <= settings.keys():
            form = "tokens/bucket/max_rows[/option_rows][/<logit_multiple>l][/pow2]"
            raise ValueError(f"a shape table is {form}, not {name!r}")
        return cls(**settings)

    def table(self, widths=(8, 16, 32, 64, 128, 256, 512, 1024)) -> list[tuple[int, int]]:
        """[(width, rows)]: the table as the docs and the benchmarks print it."""
        return [(w, self.rows_for(w)) for w in widths]


# The table scoring v4 ran with everywhere (issue 40: SmolLM2, one thread); its scores keep their keys.
SHAPES_V4 = PassShapes(128, 8, 4096)
# Per (device kind, dtype setting): the defaults of `llm.pass_shapes`. The CPU rows were measured on this
# project's 2-core CPUs (bench/README.md, issue 55): v4's own passes (larger ones are faster on large calls of
# long items, 1.5x on 1,024 Circa items, but slower on LUDWIG's 150 short pairs and on calls of 16, where the
# repeats filling each width's last pass cost more than the larger passes save), options padded to powers of
# two in passes of 16 rows, and an item pass's kept logits a multiple of 8 rows (v4's gave 24 of LUDWIG's
# 150 pairs other bits in calls of 16). The CUDA rows are NOT YET MEASURED on a GPU: reasoned from the H200
# figures in bench/README.md (lm-eval's HFLM on a 0.91B Llama reached 84% of its best float32 speed at ~1k
# tokens a pass and 83% of its best bfloat16 speed at ~4k, where pragexp's 128-token passes left the GPU
# idle); larger passes would add more repeats filling each width's last pass.
SHAPES_CPU = PassShapes(128, 8, 4096, option_rows=16, option_widths="pow2", logit_multiple=8)
DEFAULT_SHAPES = {
    ("cpu", "float32"): SHAPES_CPU,
    ("cpu", "bfloat16"): SHAPES_CPU,
    ("cuda", "float32"): PassShapes(2048, 8, 512, logit_multiple=8),
    ("cuda", "bfloat16"): PassShapes(4096, 8, 512, logit_multiple=8),
    ("cuda", "float16"): PassShapes(4096, 8, 512, logit_multiple=8),
}


def default_shapes(device: str, dtype: str) -> PassShapes:
    """The table for a device kind and a dtype setting: `auto` counts as float32 on a CPU and as half
    precision on a GPU (what checkpoints mostly hold); any other device (mps, xpu) gets the CPU's."""
    if device == "cuda":
        return DEFAULT_SHAPES["cuda", "float32" if dtype == "float32" else "bfloat16"]
    return DEFAULT_SHAPES["cpu", "bfloat16" if dtype in ("bfloat16", "float16") else "float32"]


@dataclass(frozen=True)
class Pass:
    head: tuple[int, ...]  # the token ids every row starts with
    width: int  # the own parts' padded length
    rows: tuple[Context, ...]  # `rows_for(width)` contexts: the real ones, then repeats of the first
    real: int  # how many rows are real


def bucket(own_tokens: int, headless: bool = False, shapes: PassShapes = SHAPES_V4) -> int:
    """The padded length of an own part of `own_tokens` tokens; at least one pad where the context has no head
    (only there would a pass without pads have a mask of ones: its queries as many as its keys)."""
    return shapes.bucket * ((own_tokens + headless + shapes.bucket - 1) // shapes.bucket)


def rows_for(width: int, shapes: PassShapes = SHAPES_V4) -> int:
    """How many rows a pass of this width holds."""
    return shapes.rows_for(width)


def filled(rows: list, size: int) -> list[tuple[list, int]]:
    """`rows` in passes of `size`, the last one filled with repeats of its first row: [(pass rows, real
    ones)]."""
    passes = []
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        passes.append((chunk + chunk[:1] * (size - len(chunk)), len(chunk)))
    return passes


def to_the_left(rows: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Right-padded rows (the first `lengths` entries of each real) as left-padded ones."""
    width = rows.shape[1]
    return torch.stack([row.roll(int(width - n)) for row, n in zip(rows, lengths, strict=True)])


def last_positions(width: int, step: int = SHAPES_V4.bucket) -> torch.Tensor:
    """The positions where a headless own part right-padded to `width` (`bucket` of `step`: at least one pad)
    may end."""
    return torch.arange(max(0, width - step - 1), width - 1)


def plan(contexts, shapes: PassShapes = SHAPES_V4) -> list[tuple[tuple[int, ...], list[Pass]]]:
    """[(head, [its passes])] for the distinct `contexts` (an iterable of `Context`), in an order that depends
    on the set only: sorted, so that a pass holds contexts of one padded length (little padding)."""
    groups: dict[tuple[tuple[int, ...], int], list[Context]] = {}
    for ids, head in sorted(set(contexts)):
        if not 0 <= head < len(ids):
            raise ValueError(f"a context of {len(ids)} tokens cannot have a head of {head}")
        groups.setdefault((ids[:head], bucket(len(ids) - head, not head, shapes)), []).append((ids, head))
    passes = [
        Pass(head, width, tuple(chunk), real)
        for (head, width), rows in sorted(groups.items())
        for chunk, real in filled(rows, shapes.rows_for(width))
    ]
    return [(head, list(group)) for head, group in itertools.groupby(passes, key=lambda p: p.head)]


# -- step 2: the item pass -----------------------------------------------------------------------------------


@dataclass
class ItemBatch:
    """Step 2's result for a batch of items: their caches and where each item's context ends."""

    keys: list[tuple]  # the items' context keys (their ids; in scoring, (ids, head))
    cache: list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values): (items, heads, length, dim)
    mask: torch.Tensor  # (items, length): 1 for a real context token
    ends: torch.Tensor  # (items,): each context's length (shared prefix included)
    last: torch.Tensor  # (items, vocab): log p(next token) after each context


def run_items(
    lm: CausalLM,
    keys: list[tuple],
    owns: list[list[int]],
    shared: int,
    prefix: list,
    width: int | None = None,
    shapes: PassShapes = SHAPES_V4,
) -> ItemBatch:
    """Each item's own part of its context, on the shared prefix's cache expanded over the batch, padded to
    `width` (scoring's fixed shapes, of the table `shapes`) or else to the longest."""
    own, own_mask = pad_right(owns, lm.pad_id, width)
    lengths = own_mask.sum(1)
    positions = shared + torch.arange(own.shape[1]).expand(len(keys), -1)
    ends_at = lengths - 1  # each row's last position: it predicts the options' first token ...
    keep = torch.unique(ends_at)  # ... and only those positions' logits are needed
    if width is not None and shared:  # left-padded: every row ends at the last position
        own, own_mask = to_the_left(own, lengths), to_the_left(own_mask, lengths)
        positions = shared + (own_mask.cumsum(1) - 1).clamp(min=0)
        ends_at = torch.full_like(lengths, width - 1)
        keep = torch.arange(max(0, width - shapes.logit_positions(len(keys))), width)
    elif width is not None:  # right-padded (a left pad would attend to nothing): wherever a row may end
        keep = last_positions(width, shapes.bucket)
    mask = torch.cat([torch.ones(len(keys), shared, dtype=torch.long), own_mask], dim=1)
    expanded = [(k.expand(len(keys), -1, -1, -1), v.expand(len(keys), -1, -1, -1)) for k, v in prefix]
    logp, cache = lm.forward(own, mask, positions, expanded, keep=keep if lm.keeps_logits else None)
    column = torch.searchsorted(keep, ends_at) if lm.keeps_logits else ends_at
    last = logp[torch.arange(len(keys)), column.to(logp.device)]
    return ItemBatch(keys, cache, mask, shared + lengths, last)


def row_bytes(items: ItemBatch) -> int:
    """The bytes of one item's KV cache."""
    return sum(t[0].numel() * t.element_size() for layer in items.cache for t in layer)


# -- step 3: the option passes -------------------------------------------------------------------------------


def first_tokens(items: ItemBatch, rows: list[tuple[int, tuple[int, ...]]]) -> torch.Tensor:
    """log p(first option token | context) per (item, continuation) row."""
    device = items.last.device
    item = torch.tensor([i for i, _ in rows], device=device)
    token = torch.tensor([c[0] for _, c in rows], device=device)
    return items.last[item, token]


def rowwise_rest(
    lm: CausalLM, items: ItemBatch, rows: list[tuple[int, tuple]], width: int | None = None
) -> torch.Tensor:
    """log p(option tokens after the first | context, earlier option tokens), one row per option, its fed
    tokens right-padded to `width` (or the longest)."""
    if all(len(c) == 1 for _, c in rows):
        return torch.zeros(len(rows), device=items.last.device)
    item = torch.tensor([i for i, _ in rows])
    layers = [(k[item.to(k.device)], v[item.to(v.device)]) for k, v in items.cache]
    inputs, in_mask = pad_right([list(c[:-1]) or [lm.pad_id] for _, c in rows], lm.pad_id, width)
    for r, (_, cont) in enumerate(rows):
        in_mask[r, len(cont) - 1 :] = 0  # a one-token option feeds nothing
    mask = torch.cat([items.mask[item], in_mask], dim=1)
    positions = items.ends[item].unsqueeze(1) + torch.arange(inputs.shape[1])
    logp, _ = lm.forward(inputs, mask, positions, layers)
    return picked_sum(lm, logp, [list(c[1:]) for _, c in rows])


def picked_sum(lm: CausalLM, logp: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """Per row: the sum of log p(target token) over the row's targets (rows right-padded; the sum runs over
    all of `logp`'s positions, so that its order depends on the pass's shape, not on the longest target)."""
    ids, mask = pad_right([t or [lm.pad_id] for t in targets], lm.pad_id, logp.shape[1])
    for r, t in enumerate(targets):
        mask[r, len(t) :] = 0
    picked = logp.gather(2, ids.to(logp.device).unsqueeze(2)).squeeze(2)
    return (picked * mask.to(picked.device)).sum(1)


def packed_rest(lm: CausalLM, items: ItemBatch, chunk: list[int], options: list[list[tuple]]) -> torch.Tensor:
    """log p(option tokens after the first | context, earlier option tokens), per (item, option) row of
    `chunk`, in row order, from one forward pass over the chunk's packed options."""
    # per item: fed ids; per item: next ids; per option: (item row, start, n)
    feeds, targets, spans = [], [], []
    for r, i in enumerate(chunk):
        fed, nxt = [], []
        for cont in options[i]:
            spans.append((r, len(fed), len(cont) - 1))
            fed += cont[:-1]
            nxt += cont[1:]
        feeds.append(fed or [lm.pad_id])
        targets.append(nxt)
    ids, fed_mask = pad_right(feeds, lm.pad_id)
    q, past = ids.shape[1], items.mask.shape[1]
    rows = slice(chunk[0], chunk[-1] + 1)  # consecutive items: their caches as views, not copies
    assert chunk == list(range(rows.start, rows.stop)), "a packed pass takes consecutive items"
    allowed = torch.zeros(len(chunk), q, past + q, dtype=torch.bool)
    allowed[:, :, :past] = items.mask[rows].bool().unsqueeze(1)
    positions = items.ends[rows].unsqueeze(1).expand(-1, q).clone()
    for r, start, n in spans:
        block = torch.tril(torch.ones(n, n, dtype=torch.bool))
        allowed[r, start : start + n, past + start : past + start + n] = block
        positions[r, start : start + n] += torch.arange(n)
    layers = [(k[rows], v[rows]) for k, v in items.cache]
    logp, _ = lm.forward(ids, lm.additive_mask(allowed), positions, layers)
    target_ids, _ = pad_right([t or [lm.pad_id] for t in targets], lm.pad_id)
    picked = logp.gather(2, target_ids.to(logp.device).unsqueeze(2)).squeeze(2)
    return torch.stack([picked[r, start : start + n].sum() for r, start, n in spans])


def padding_share(wanted: dict, shapes: PassShapes = SHAPES_V4) -> dict[str, int]:
    """What a call's fixed passes compute, in token positions (`wanted`: (context ids, head) -> its distinct
    continuations): `real` (own parts, option tokens fed), `pad` (padding within a real row), `filler` (the
    repeats filling a width's last pass). Option passes are counted as `rows_for` lays them out (the scorer
    may cut them further by `OPTION_CACHE_BYTES` on long prompts)."""
    share = {"real": 0, "pad": 0, "filler": 0}

    def count(lengths: list[int], width: int, rows: int) -> None:
        share["real"] += sum(lengths)
        share["pad"] += width * len(lengths) - sum(lengths)
        share["filler"] += width * (-len(lengths) % rows)

    for head, head_passes in plan(wanted, shapes):
        for width, group in itertools.groupby(head_passes, key=lambda p: p.width):
            rows = [r for p in group for r in p.rows[: p.real]]
            count([len(ids) - len(head) for ids, _ in rows], width, shapes.rows_for(width))
            fed: dict[int, list[int]] = {}  # option width -> the fed lengths of its rows
            for key in rows:
                for cont in (c for c in wanted[key] if len(c) > 1):
                    fed.setdefault(shapes.option_width(len(cont) - 1), []).append(len(cont) - 1)
            for option_width, lengths in fed.items():
                count(lengths, option_width, shapes.option_rows_for(option_width))
    return share
