"""FAISS indexes over passage vectors, by inner product: exact (`flat`, the default), HNSW and IVF-PQ.

- `build_index(vectors, spec)` adds the vectors in chunks (a float16 memory map of 400k x 768 is read a
  slice at a time); IVF-PQ is trained on an evenly spaced sample first.
- `to_gpu(index)` moves an index to a GPU where faiss-gpu and a GPU are present, for the types FAISS runs
  there (flat and IVF-PQ; HNSW has no GPU version and stays on the CPU). The exact index gives the same
  results on either device.
- `DenseIndex` pairs an index with its id map (row -> passage id) and returns passage ids.
- `GroupedIndex` restricts each query to its own group (`retrieval.scope=community`): one exact index per
  group over the group's rows, since a community holds a few thousand passages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

log = logging.getLogger(__name__)

INDEX_TYPES = ("flat", "hnsw", "ivfpq")
ADD_CHUNK = 65536  # vectors converted to float32 and added at a time
_GPU_RESOURCES: dict[int, object] = {}


@dataclass(frozen=True)
class IndexSpec:
    """What kind of index to build, and its search-time settings (`retriever.index` in config)."""

    type: str = "flat"
    hnsw_m: int = 32  # HNSW: neighbours per node
    ef_construction: int = 200
    ef_search: int = 128
    nlist: int = 4096  # IVF-PQ: coarse cells (cut to the data's size, 39 training points per cell)
    pq_m: int = 64  # sub-quantizers; must divide the vector size
    pq_bits: int = 8
    nprobe: int = 64  # cells visited per query
    train_size: int = 200_000  # IVF-PQ: vectors sampled for training

    def __post_init__(self):
        if self.type not in INDEX_TYPES:
            raise ValueError(f"retriever.index.type={self.type}: one of {', '.join(INDEX_TYPES)}")

    def build_settings(self) -> dict:
        """What changes the built index (the cache key); search-time settings are left out."""
        keep = {
            "flat": (),
            "hnsw": ("hnsw_m", "ef_construction"),
            "ivfpq": ("nlist", "pq_m", "pq_bits", "train_size"),
        }
        return {"type": self.type, **{k: v for k, v in asdict(self).items() if k in keep[self.type]}}


def _faiss():
    import faiss

    return faiss


def _chunks(vectors: np.ndarray, rows: Sequence[int] | None = None):
    n = len(vectors) if rows is None else len(rows)
    for start in range(0, n, ADD_CHUNK):
        part = (
            vectors[start : start + ADD_CHUNK]
            if rows is None
            else vectors[np.asarray(rows[start : start + ADD_CHUNK])]
        )
        yield np.ascontiguousarray(part, dtype=np.float32)


def build_index(vectors: np.ndarray, spec: IndexSpec, rows: Sequence[int] | None = None):
    """A CPU index over `vectors` (or the given rows of it), by inner product."""
    faiss = _faiss()
    dim = vectors.shape[1]
    n = len(vectors) if rows is None else len(rows)
    if spec.type == "flat":
        index = faiss.IndexFlatIP(dim)
    elif spec.type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, spec.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = spec.ef_construction
    else:
        nlist = max(1, min(spec.nlist, n // 39))
        if nlist != spec.nlist:
            log.warning("IVF-PQ: %d cells for %d vectors (asked for %d)", nlist, n, spec.nlist)
        if dim % spec.pq_m:
            raise ValueError(f"retriever.index.pq_m={spec.pq_m} must divide the vector size {dim}")
        # Built directly: index_factory would also switch on polysemous training, slow and unused here.
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, spec.pq_m, spec.pq_bits, faiss.METRIC_INNER_PRODUCT)
        sample = np.linspace(0, n - 1, num=min(n, spec.train_size), dtype=np.int64)
        source = sample if rows is None else np.asarray(rows)[sample]
        index.train(np.ascontiguousarray(vectors[source], dtype=np.float32))
    for part in _chunks(vectors, rows):
        index.add(part)
    set_search_params(index, spec)
    return index


def set_search_params(index, spec: IndexSpec) -> None:
    faiss = _faiss()
    if spec.type == "hnsw":
        faiss.downcast_index(index).hnsw.efSearch = spec.ef_search
    elif spec.type == "ivfpq":
        faiss.extract_index_ivf(index).nprobe = spec.nprobe


def gpu_available() -> bool:
    """faiss-gpu installed and a GPU visible."""
    faiss = _faiss()
    return hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


def to_gpu(index, spec: IndexSpec, device: int = 0):
    """The index on GPU `device` where FAISS runs its type there, else the index as it is."""
    if spec.type == "hnsw":
        log.info("HNSW has no FAISS GPU version: searching on the CPU")
        return index
    faiss = _faiss()
    if device not in _GPU_RESOURCES:  # one set of GPU buffers per device, alive as long as the process
        _GPU_RESOURCES[device] = faiss.StandardGpuResources()
    gpu_index = faiss.index_cpu_to_gpu(_GPU_RESOURCES[device], device, index)
    if spec.type == "ivfpq":
        faiss.GpuParameterSpace().set_index_parameter(gpu_index, "nprobe", spec.nprobe)
    return gpu_index


def place(index, spec: IndexSpec, gpu: str | bool = "auto", device: int = 0):
    """`gpu`: auto (a GPU when faiss-gpu and a GPU are there), true (required) or false."""
    if gpu == "auto":
        gpu = gpu_available()
    elif gpu is True or str(gpu).lower() == "true":
        if not gpu_available():
            raise RuntimeError(
                "retriever.gpu=true but FAISS sees no GPU (faiss-cpu installed, or no GPU): install the "
                "`gpu` "
                "extra (faiss-gpu) on a GPU machine, or set retriever.gpu=auto"
            )
        gpu = True
    else:
        gpu = False
    return to_gpu(index, spec, device) if gpu else index


class DenseIndex:
    """A FAISS index and its id map: `search(queries, k) -> (scores, passage ids)`, both (n, k); ids are
    -1 where fewer than k passages exist."""

    def __init__(self, index, ids: np.ndarray):
        if index.ntotal != len(ids):
            raise ValueError(f"the index holds {index.ntotal} vectors but its id map {len(ids)}: rebuild it")
        self.index, self.ids = index, np.asarray(ids, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores, rows = self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
        return scores, np.where(rows >= 0, self.ids[np.maximum(rows, 0)], -1)


class GroupedIndex:
    """Each query searched among its group's vectors only, exactly."""

    def __init__(self, vectors: np.ndarray, groups: Sequence[str], gpu: str | bool = "auto"):
        rows_of: dict[str, list[int]] = {}
        for row, group in enumerate(groups):
            rows_of.setdefault(group, []).append(row)
        spec = IndexSpec("flat")
        self.indexes = {
            g: DenseIndex(place(build_index(vectors, spec, rows), spec, gpu), np.asarray(rows))
            for g, rows in rows_of.items()
        }

    def search(self, queries: np.ndarray, k: int, groups: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        ids = np.full((len(queries), k), -1, dtype=np.int64)
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        for group in set(groups):
            which = np.array([i for i, g in enumerate(groups) if g == group])
            if group not in self.indexes:
                continue  # a community with no passage: nothing to find
            found_scores, found_ids = self.indexes[group].search(queries[which], k)
            scores[which], ids[which] = found_scores, found_ids
        return scores, ids
