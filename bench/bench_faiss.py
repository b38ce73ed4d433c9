"""FAISS at PragmatiCQA's corpus size: exact, HNSW and IVF-PQ indexes built and searched through pragexp.

    python bench/bench_faiss.py [--n 401042] [--dim 768] [--queries 1000] [--k 20] [--threads N]
                                [--hnsw-m 32] [--ef-construction 100] [--ef-search 16,32,64,128]
                                [--nlist 2048] [--pq-m 64] [--nprobe 8,16,32,64]

The vectors are synthetic (the Fandom archive is not here): unit vectors drawn around `--clusters` random
centres, so that neighbourhoods exist as in real passage embeddings, stored as float16 like pragexp's
embedding files; the queries come from the same mixture. For each index: build time, the index's size in
memory (its serialised bytes) and, for each search setting, queries/s and recall@k against the exact
index (the share of the exact top k found). Then pragexp's wrapper (`DenseIndex.search`: float32
conversion, id map) against the raw `index.search` call on the same index and queries, best of
`--repeats` alternating runs (target ratio <= 1.05), and whether an approximate setting reaches
recall@20 >= 0.95 at >= 10x the exact index's queries/s. Everything is measured in this one run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import faiss  # noqa: E402
import numpy as np  # noqa: E402

from pragexp.retrieval.index import DenseIndex, IndexSpec, build_index, set_search_params  # noqa: E402

TARGET_WRAPPER = 1.05
TARGET_RECALL, TARGET_SPEEDUP = 0.95, 10.0


def clustered_unit_vectors(n: int, dim: int, clusters: int, spread: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.empty((n, dim), dtype=np.float16)
    for start in range(0, n, 50_000):
        size = min(50_000, n - start)
        part = centres[rng.integers(0, clusters, size)] + spread * rng.standard_normal(
            (size, dim), dtype=np.float32
        )
        out[start : start + size] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / exact.shape[1] for a, b in zip(found, exact, strict=True)]))


def size_mib(index) -> float:
    return faiss.serialize_index(index).nbytes / 2**20


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=401_042)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--clusters", type=int, default=4000)
    parser.add_argument("--spread", type=float, default=0.05)
    parser.add_argument("--hnsw-m", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, default=100)
    parser.add_argument("--ef-search", default="16,32,64,128")
    parser.add_argument("--nlist", type=int, default=2048)
    parser.add_argument("--pq-m", type=int, default=64)
    parser.add_argument("--nprobe", default="8,16,32,64")
    parser.add_argument("--train-size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0)
    return parser.parse_args()


def make_queries(args, vectors: np.ndarray) -> np.ndarray:
    """Other draws around the same centres as the vectors, unit length."""
    rng = np.random.default_rng(1)
    queries = np.asarray(vectors[rng.integers(0, args.n, args.queries)], dtype=np.float32)
    queries += 0.5 * args.spread * rng.standard_normal(queries.shape, dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return queries


def wrapper_ratio(raw, wrapped, queries: np.ndarray, k: int, repeats: int) -> float:
    """The wrapper's best search time over the raw index's, same index, same queries."""
    wrapper_times, raw_times = [], []
    for _ in range(repeats):
        raw_times.append(timed(lambda: raw.search(queries, k))[0])
        wrapper_times.append(timed(lambda: wrapped.search(queries, k))[0])
    return min(wrapper_times) / min(raw_times)


def exact_search(args, vectors: np.ndarray, queries: np.ndarray, rows: list) -> tuple:
    """The flat index built by pragexp and by raw faiss: the wrapped index, its exact neighbours, queries/s,
    the raw build's seconds and the wrapper's ratio."""
    k = args.k
    flat_spec = IndexSpec("flat")
    build_s, flat = timed(lambda: build_index(vectors, flat_spec))
    raw_build_s, raw_flat = timed(lambda: _raw_flat(vectors))
    del raw_flat
    wrapped = DenseIndex(flat, np.arange(args.n))
    search_s, (_, exact) = timed(lambda: wrapped.search(queries, k))
    exact_qps = args.queries / search_s
    rows.append(("flat (exact)", build_s, size_mib(flat), "-", exact_qps, 1.0))
    flat_ratio = wrapper_ratio(flat, wrapped, queries, k, args.repeats)
    return wrapped, exact, exact_qps, raw_build_s, flat_ratio


def sweep(
    args, queries, exact, rows, label: str, built, build_s: float, settings: list[tuple[str, IndexSpec]]
):
    """One row per search setting of a built approximate index."""
    for setting, spec in settings:
        set_search_params(built, spec)
        index = DenseIndex(built, np.arange(args.n))
        seconds, (_, found) = timed(lambda index=index: index.search(queries, args.k))
        rows.append((label, build_s, size_mib(built), setting, args.queries / seconds, recall(found, exact)))


def approximate_indexes(args, vectors: np.ndarray, queries: np.ndarray, exact, rows: list) -> float:
    """HNSW and IVF-PQ: one build each, then a sweep of their search setting; the wrapper ratio on HNSW."""
    hnsw_spec = IndexSpec("hnsw", hnsw_m=args.hnsw_m, ef_construction=args.ef_construction)
    build_s, hnsw = timed(lambda: build_index(vectors, hnsw_spec))
    ef_settings = [(f"efSearch={ef}", IndexSpec("hnsw", ef_search=ef)) for ef in _ints(args.ef_search)]
    sweep(
        args,
        queries,
        exact,
        rows,
        f"hnsw M={args.hnsw_m} efC={args.ef_construction}",
        hnsw,
        build_s,
        ef_settings,
    )
    # the wrapper against raw faiss on HNSW too, at the first efSearch
    set_search_params(hnsw, ef_settings[0][1])
    index = DenseIndex(hnsw, np.arange(args.n))
    hnsw_ratio = wrapper_ratio(hnsw, index, queries, args.k, args.repeats)
    del hnsw, index

    ivf_spec = IndexSpec("ivfpq", nlist=args.nlist, pq_m=args.pq_m, train_size=args.train_size)
    build_s, ivf = timed(lambda: build_index(vectors, ivf_spec))
    probe_settings = [(f"nprobe={p}", IndexSpec("ivfpq", nprobe=p)) for p in _ints(args.nprobe)]
    sweep(args, queries, exact, rows, f"ivfpq IVF{args.nlist},PQ{args.pq_m}x8", ivf, build_s, probe_settings)
    return hnsw_ratio


def report(args, rows, exact_qps: float, raw_build_s: float, flat_ratio: float, hnsw_ratio: float) -> None:
    k = args.k
    print()
    print(f"| index | build s | memory MiB | search setting | queries/s | x exact | recall@{k} |")
    print("|---|---|---|---|---|---|---|")
    for name, build, mem, setting, qps, rec in rows:
        print(
            f"| {name} | {build:.1f} | {mem:.0f} | {setting} | {qps:.0f} | {qps / exact_qps:.1f} | {rec:.3f} "
            "|"
        )
    print()
    print(
        f"exact build: pragexp {rows[0][1]:.2f} s (float16 chunks) vs raw faiss {raw_build_s:.2f} s (one "
        f"float32 copy): ratio {rows[0][1] / raw_build_s:.2f}"
    )
    print(
        f"search, pragexp DenseIndex.search / raw index.search: flat {flat_ratio:.3f}, hnsw {hnsw_ratio:.3f} "
        f"(target <= {TARGET_WRAPPER}): "
        f"{'met' if max(flat_ratio, hnsw_ratio) <= TARGET_WRAPPER else 'NOT met'}"
    )
    good = [r for r in rows[1:] if r[5] >= TARGET_RECALL and r[4] / exact_qps >= TARGET_SPEEDUP]
    if good:
        best = max(good, key=lambda r: r[4])
        print(
            f"approximate target (recall@{k} >= {TARGET_RECALL} at >= {TARGET_SPEEDUP:.0f}x exact "
            f"queries/s): met by {best[0]} {best[3]}: recall {best[5]:.3f} at {best[4] / exact_qps:.1f}x"
        )
    else:
        print(
            f"approximate target (recall@{k} >= {TARGET_RECALL} at >= {TARGET_SPEEDUP:.0f}x exact "
            "queries/s): NOT met"
        )
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


def main() -> None:
    args = parse_args()
    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    k = args.k

    print(
        f"{args.n:,} synthetic clustered unit vectors x {args.dim} (float16), {args.queries} queries, "
        f"recall@{k}; {faiss.omp_get_max_threads()} FAISS threads"
    )
    vectors = clustered_unit_vectors(args.n, args.dim, args.clusters, args.spread, seed=0)
    queries = make_queries(args, vectors)
    rows = []
    # the exact index stays in memory while the others are built, as a user's would (it counts in the peak
    # RSS)
    flat, exact, exact_qps, raw_build_s, flat_ratio = exact_search(args, vectors, queries, rows)
    hnsw_ratio = approximate_indexes(args, vectors, queries, exact, rows)
    report(args, rows, exact_qps, raw_build_s, flat_ratio, hnsw_ratio)


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


def _raw_flat(vectors: np.ndarray):
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


if __name__ == "__main__":
    main()
