"""Built retrieval artefacts on disk, cached by a hash of what went in.

    <cache>/retrieval/embeddings/<key>/  embeddings.f16 (float16 memory map, n x dim), info.json
    <cache>/retrieval/index/<key>/       index.faiss (HNSW, IVF-PQ), ids.npy (row -> passage id), info.json

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

import numpy as np

from pragexp.retrieval.index import DenseIndex, GroupedIndex, IndexSpec, build_index, place, set_search_params
from pragexp.retrieval.passages import Passage
from pragexp.utils.io import atomic_directory, digest

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the layout of an entry changes
EMBEDDINGS_FILE = "embeddings.f16"


@dataclass(frozen=True)
class EncoderSpec:
    """The passage side of a bi-encoder (`retriever.passage_encoder` and friends)."""

    name: str
    pooling: str = "mean"
    normalize: bool = True
    max_length: int = 256


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
            f"{folder}: the index holds {index.ntotal} vectors but ids.npy {len(ids)}; delete the folder to rebuild it"
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
