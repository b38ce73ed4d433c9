"""A corpus's passages, their embeddings and their FAISS index on disk, cached by a hash of what went in.

`PassageStore(root, passages, corpus_key, spec, tokenizer)` is the store of one corpus under one retriever
spec: `build()` encodes the passages and builds the index where the cache lacks them (rank 0), `load()`
opens them for search (every rank). The caller owns the corpus (its passages and its own cache key) and the
passage encoder's tokenizer (loaded, or trained on the corpus, and kept in checkpoints); nothing here knows
where either came from.

    <root>/embeddings/<key>/  embeddings.f16 (float16 memory map, n x dim), info.json
    <root>/index/<key>/       index.faiss (HNSW, IVF-PQ), ids.npy (row -> passage id), info.json

The embeddings' key hashes the corpus (its own cache key), the passage encoder, its pooling and input
length, and the tokenizer; the index's key adds the index type and its build settings, so a new index type
reuses the embeddings. The exact (`flat`) index is rebuilt from the embeddings when loaded (a copy, no
file). Every entry is written into a temp directory and renamed, so a half-built entry is never read.
`load_index` checks that the index and its id map agree in size.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from pragexp.retrieval.encoders import build_encoder, encode_texts
from pragexp.retrieval.index import DenseIndex, GroupedIndex, IndexSpec, build_index, place, set_search_params
from pragexp.retrieval.passages import Passage
from pragexp.retrieval.spec import EncoderSpec, RetrieverSpec
from pragexp.utils.io import atomic_directory, digest

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the layout of an entry changes
EMBEDDINGS_FILE = "embeddings.f16"


def embeddings_key(corpus_key: str, encoder: EncoderSpec, tokenizer_digest: str) -> str:
    return digest(
        {"format": FORMAT, "corpus": corpus_key, "encoder": asdict(encoder), "tokenizer": tokenizer_digest}
    )


def index_key(embeddings: str, spec: IndexSpec) -> str:
    return digest({"format": FORMAT, "embeddings": embeddings, "index": spec.build_settings()})


def _write_info(folder: Path, info: dict) -> None:
    (folder / "info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")


def build_embeddings(folder: Path, passages: Sequence[Passage], encode, dim: int, info: dict) -> Path:
    """`encode(texts, out)` fills `out` with the (title, text) pairs' vectors; cached in `folder`."""
    if (folder / "info.json").is_file():
        log.info("passage embeddings found in the cache: %s", folder)
        return folder
    with atomic_directory(folder) as tmp:
        out = np.lib.format.open_memmap(
            tmp / EMBEDDINGS_FILE, mode="w+", dtype=np.float16, shape=(len(passages), dim)
        )
        encode([(p.title, p.text) for p in passages], out)
        out.flush()
        del out
        _write_info(tmp, {**info, "passages": len(passages), "dim": dim, "dtype": "float16"})
    log.info("passage embeddings written: %s", folder)
    return folder


def load_embeddings(folder: Path) -> np.ndarray:
    """The float16 embedding matrix, memory-mapped (read only)."""
    return np.load(folder / EMBEDDINGS_FILE, mmap_mode="r")


def build_index_entry(folder: Path, embeddings_dir: Path, spec: IndexSpec) -> Path:
    """The index over the embeddings; cached in `folder` (flat: only the id map, see the module docstring)."""
    if (folder / "info.json").is_file():
        log.info("index found in the cache: %s", folder)
        return folder
    import faiss

    vectors = load_embeddings(embeddings_dir)
    with atomic_directory(folder) as tmp:
        np.save(tmp / "ids.npy", np.arange(len(vectors), dtype=np.int64))
        if spec.type != "flat":
            faiss.write_index(build_index(vectors, spec), str(tmp / "index.faiss"))
        _write_info(
            tmp, {"index": spec.build_settings(), "embeddings": embeddings_dir.name, "vectors": len(vectors)}
        )
    log.info("%s index written: %s", spec.type, folder)
    return folder


def load_index(
    folder: Path, embeddings_dir: Path, spec: IndexSpec, gpu: str | bool = "auto", device: int = 0
) -> DenseIndex:
    import faiss

    ids = np.load(folder / "ids.npy")
    if spec.type == "flat":
        index = build_index(load_embeddings(embeddings_dir), spec)
    else:
        index = faiss.read_index(str(folder / "index.faiss"))
        set_search_params(index, spec)
    if index.ntotal != len(ids):
        raise ValueError(
            f"{folder}: the index holds {index.ntotal} vectors but ids.npy {len(ids)}; delete the folder to "
            "rebuild it"
        )
    return DenseIndex(place(index, spec, gpu, device), ids)


@dataclass
class PassageIndex:
    """Passages, their embeddings and a search over them, whole-corpus or within each query's group."""

    passages: list[Passage]
    embeddings: np.ndarray  # float16 memory map
    index: DenseIndex
    info: dict
    grouped: GroupedIndex | None = None

    def search(
        self, queries: np.ndarray, k: int, groups: Sequence[str] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(scores, passage ids), each (n, k); with `groups`, query i only sees passages of groups[i]."""
        k = max(1, min(k, len(self.passages)))
        if groups is None:
            return self.index.search(queries, k)
        if self.grouped is None:
            self.grouped = GroupedIndex(self.embeddings, [p.group for p in self.passages], gpu=False)
        return self.grouped.search(queries, k, groups)

    def vectors(self, passage_ids: Sequence[int]) -> np.ndarray:
        """The stored (float16) vectors of some passages, as float32."""
        return np.asarray(self.embeddings[np.asarray(passage_ids, dtype=np.int64)], dtype=np.float32)


class PassageTokenizer(Protocol):
    """The passage encoder's tokenizer, as the store uses it."""

    @property
    def vocab_size(self) -> int: ...

    def digest(self) -> str:
        """What identifies it (its serialised form, hashed): part of the embeddings' cache key."""
        ...

    def encode_pairs(self, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
        """(title, text) pairs -> the encoder's inputs, padded to the longest."""
        ...


class PassageStore:
    """One corpus's passages, embeddings and index under `root` (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        passages: Sequence[Passage],
        corpus_key: str,
        spec: RetrieverSpec,
        tokenizer: PassageTokenizer,
        info: dict | None = None,
    ):
        self.passages, self.corpus_key, self.spec, self.tokenizer = passages, corpus_key, spec, tokenizer
        self.encoder = spec.encoder("passage")
        self.info = dict(info or {})  # written beside the embeddings (not part of their key)
        embeddings = embeddings_key(corpus_key, self.encoder, tokenizer.digest())
        self.embeddings_dir = Path(root) / "embeddings" / embeddings
        self.index_dir = Path(root) / "index" / index_key(embeddings, spec.index)

    @property
    def built(self) -> bool:
        return (self.embeddings_dir / "info.json").is_file() and (self.index_dir / "info.json").is_file()

    def build(self) -> None:
        """Encodes the passages (on a GPU when there is one) and builds the index, each only if not cached."""
        if self.built:
            return
        if not (self.embeddings_dir / "info.json").is_file():
            spec = self.encoder
            encoder = build_encoder(
                spec.name, spec.pooling, spec.normalize, vocab_size=self.tokenizer.vocab_size
            )
            device = "cuda" if torch.cuda.is_available() else "cpu"
            batch = self.spec.encode_batch_size
            log.info("encoding %d passages with %s on %s", len(self.passages), spec.name, device)
            build_embeddings(
                self.embeddings_dir,
                self.passages,
                lambda texts, out: encode_texts(
                    encoder, self.tokenizer.encode_pairs, texts, out, batch, device
                ),
                encoder.dim,
                {"corpus": self.corpus_key, **self.info, "encoder": asdict(spec)},
            )
            del encoder
        build_index_entry(self.index_dir, self.embeddings_dir, self.spec.index)

    def load(self, device: torch.device | None = None) -> PassageIndex:
        """The passages with their embeddings and index; the index on `device` when it is a GPU (and
        `retriever.gpu` allows it)."""
        if not self.built:
            raise FileNotFoundError(
                f"no index at {self.index_dir}: build() makes it (prepare_data, on rank 0)"
            )
        device = device or torch.device("cpu")
        index = load_index(
            self.index_dir,
            self.embeddings_dir,
            self.spec.index,
            self.spec.gpu if device.type == "cuda" else False,
            device=device.index or 0,
        )
        info = {
            "embeddings": str(self.embeddings_dir),
            "index": str(self.index_dir),
            "key": self.index_dir.name,
        }
        return PassageIndex(self.passages, load_embeddings(self.embeddings_dir), index, info)
