"""The retriever's settings (`retriever=` in config) as one frozen value, read once from the config by the
data module that builds the index and handed to the task that searches it.

The passage side (`passage_encoder`, `max_passage_length`, `index`, `encode_batch_size`) decides what is built
and cached; the question side and the search settings (`query_encoder`, `max_query_length`, `top_k`, `scope`,
`finetune`, ...) are read by the task at every step. Both sides share `pooling` and `normalize`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from pragexp.retrieval.index import IndexSpec

SCOPES = ("all", "community")
SIDES = ("query", "passage")


@dataclass(frozen=True)
class EncoderSpec:
    """One side of the bi-encoder: what turns a text into a vector (the passage side's is in the cache
    key)."""

    name: str
    pooling: str = "mean"
    normalize: bool = True
    max_length: int = 256


@dataclass(frozen=True)
class RetrieverSpec:
    query_encoder: str = "minilm"
    passage_encoder: str = "minilm"
    pooling: str = "mean"  # cls | mean
    normalize: bool = True
    max_query_length: int = 128  # tokens of the question and its history
    max_passage_length: int = 256  # tokens of "title [SEP] passage"
    finetune: bool = True  # train the question encoder (the passage vectors never change)
    loss_weight: float = 1.0  # of the retrieval loss, added to the reader's
    temperature: float = 1.0  # of the in-batch softmax over passage scores
    top_k: int = 5  # passages per question at evaluation
    train_top_k: int = 5  # passages per question in training
    scope: str = "all"  # all: the whole corpus; community: the conversation's own pages
    gpu: str | bool = "auto"  # FAISS on a GPU: auto, true (required) or false
    encode_batch_size: int = 128  # passages per batch when building the index
    index: IndexSpec = field(default_factory=IndexSpec)

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"retriever.scope={self.scope}: one of {', '.join(SCOPES)}")

    @classmethod
    def from_config(cls, config: Mapping | RetrieverSpec | None) -> RetrieverSpec:
        """The spec of a `retriever` config node (None: the defaults); unknown keys are refused by name."""
        if isinstance(config, RetrieverSpec):
            return config
        settings = dict(config or {})
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(f"retriever.{unknown[0]}: not a retriever setting (known: {', '.join(known)})")
        index = settings.pop("index", None)
        typed = {name: _CASTS.get(known[name], lambda v: v)(value) for name, value in settings.items()}
        return cls(**typed, index=IndexSpec(**dict(index or {})))

    def encoder(self, side: str) -> EncoderSpec:
        """The query or the passage side's encoder."""
        if side not in SIDES:
            raise ValueError(f"side={side}: one of {', '.join(SIDES)}")
        return EncoderSpec(
            name=getattr(self, f"{side}_encoder"),
            pooling=self.pooling,
            normalize=self.normalize,
            max_length=getattr(self, f"max_{side}_length"),
        )


# Config values arrive as YAML wrote them ("5", 5.0, ...); the field types above, as annotations (strings).
_CASTS = {"int": int, "float": float, "bool": bool, "str": str}
