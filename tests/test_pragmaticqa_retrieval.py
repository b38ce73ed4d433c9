"""pragexp.retrieval: exact search against brute force, approximate indexes, community scope, the GPU path
(with a stand-in for faiss-gpu, on the CPU), the cache (a second build encodes nothing), the id map check, the
retriever's spec, and the command line that builds PragmatiCQA's index (python -m
pragexp.data.pragmaticqa)."""

import json
import types

import numpy as np
import pytest
from conftest import TINY_DATA, choices, run_module

from pragexp.retrieval import index as index_lib
from pragexp.retrieval import store
from pragexp.retrieval.index import DenseIndex, GroupedIndex, IndexSpec, build_index, place
from pragexp.retrieval.passages import Passage
from pragexp.retrieval.spec import EncoderSpec, RetrieverSpec

CLI = "pragexp.data.pragmaticqa"


def clustered(n: int, dim: int = 32, seed: int = 0, centres: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    middle = rng.normal(size=(centres, dim))
    return (middle[rng.integers(0, centres, n)] + 0.3 * rng.normal(size=(n, dim))).astype(np.float32)


def brute_force(vectors, queries, k):
    scores = queries @ vectors.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k], np.sort(scores, axis=1)[:, ::-1][:, :k]


def test_exact_index_equals_brute_force_top_k():
    vectors, queries = clustered(500).astype(np.float16), clustered(40, seed=1)
    index = DenseIndex(build_index(vectors, IndexSpec("flat")), np.arange(1000, 1500))
    scores, ids = index.search(queries, 10)
    want_rows, want_scores = brute_force(vectors.astype(np.float32), queries, 10)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-5)
    assert (ids == want_rows + 1000).all()  # rows mapped to passage ids


@pytest.mark.parametrize("kind", ["hnsw", "ivfpq"])
def test_approximate_indexes_find_the_nearest_passage_in_their_top_10(kind):
    vectors, queries = clustered(3000), clustered(50, seed=1)
    spec = IndexSpec(kind, nlist=16, pq_m=8, nprobe=8)
    _, ids = DenseIndex(build_index(vectors, spec), np.arange(3000)).search(queries, 10)
    want, _ = brute_force(vectors, queries, 1)
    assert np.mean([w[0] in set(found) for found, w in zip(ids, want, strict=True)]) >= 0.8


def test_community_scope_searches_each_query_within_its_group():
    vectors, queries = clustered(300), clustered(12, seed=1)
    groups = ["a", "b", "c"] * 100
    scores, ids = GroupedIndex(vectors, groups, gpu=False).search(queries, 5, ["a", "b", "c", "zzz"] * 3)
    for i, row in enumerate(ids):
        if i % 4 == 3:  # a group with no passage finds nothing
            assert (row == -1).all()
        else:
            assert all(groups[p] == "abc"[i % 4] for p in row)
            rows = [r for r in range(300) if groups[r] == "abc"[i % 4]]
            best = max(rows, key=lambda r: float(vectors[r] @ queries[i]))
            assert row[0] == best


def test_gpu_placement_moves_flat_and_ivfpq_but_not_hnsw(monkeypatch):
    """faiss-gpu is not installed here: a stand-in records what would move, and search results stay equal."""
    moved = []
    fake = types.SimpleNamespace(
        StandardGpuResources=lambda: "resources",
        get_num_gpus=lambda: 1,
        index_cpu_to_gpu=lambda res, device, index: (
            moved.append((res, device, type(index).__name__)) or index
        ),
        GpuParameterSpace=lambda: types.SimpleNamespace(
            set_index_parameter=lambda i, k, v: moved.append((k, v))
        ),
    )
    import faiss

    for name in ("StandardGpuResources", "get_num_gpus", "index_cpu_to_gpu", "GpuParameterSpace"):
        monkeypatch.setattr(faiss, name, getattr(fake, name), raising=False)
    vectors, queries = clustered(400), clustered(5, seed=1)
    flat = build_index(vectors, IndexSpec("flat"))
    cpu = DenseIndex(flat, np.arange(400)).search(queries, 5)
    gpu = DenseIndex(place(flat, IndexSpec("flat"), gpu="auto", device=1), np.arange(400)).search(queries, 5)
    assert moved == [("resources", 1, "IndexFlatIP")] and all(
        (a == b).all() for a, b in zip(cpu, gpu, strict=True)
    )
    place(build_index(vectors, IndexSpec("hnsw")), IndexSpec("hnsw"), gpu=True)
    assert len(moved) == 1  # HNSW stays on the CPU
    place(
        build_index(vectors, IndexSpec("ivfpq", nlist=4, pq_m=8, pq_bits=4)),
        IndexSpec("ivfpq", nprobe=3),
        gpu=True,
    )
    assert moved[-1] == ("nprobe", 3)


def test_gpu_required_without_faiss_gpu_says_what_to_install(monkeypatch):
    monkeypatch.setattr(index_lib, "gpu_available", lambda: False)
    with pytest.raises(RuntimeError, match="faiss-gpu"):
        place(build_index(clustered(10), IndexSpec("flat")), IndexSpec("flat"), gpu=True)


def test_cached_index_is_found_again_and_checked(tmp_path):
    passages = [Passage(i, f"t{i}", f"text {i}") for i in range(50)]
    vectors = clustered(50)
    calls = []

    def encode(texts, out):
        calls.append(len(texts))
        out[:] = vectors

    spec = IndexSpec("hnsw")
    for _ in range(2):
        emb = store.build_embeddings(tmp_path / "emb", passages, encode, 32, {"corpus": "x"})
        idx = store.build_index_entry(tmp_path / "idx", emb, spec)
    assert calls == [50]  # the second build found both in the cache
    loaded = store.load_index(idx, emb, spec, gpu=False)
    _, ids = loaded.search(vectors[:3], 1)
    assert ids[:, 0].tolist() == [0, 1, 2]
    assert store.load_embeddings(emb).dtype == np.float16
    np.save(idx / "ids.npy", np.arange(49))  # an id map that does not fit the index
    with pytest.raises(ValueError, match="delete the folder"):
        store.load_index(idx, emb, spec, gpu=False)
    assert store.index_key("e", IndexSpec("hnsw", ef_search=10)) == store.index_key("e", IndexSpec("hnsw"))
    assert store.index_key("e", IndexSpec("hnsw", hnsw_m=8)) != store.index_key("e", IndexSpec("hnsw"))


@pytest.mark.slow
def test_command_line_builds_inspects_and_searches(tmp_path):
    overrides = [*TINY_DATA["pragmaticqa"], f"paths.cache_dir={tmp_path / 'cache'}"]
    built = run_module(CLI, ["build", *overrides], tmp_path)
    assert built.returncode == 0, built.stderr[-3000:]
    info = json.loads(built.stdout.strip().splitlines()[-1])
    assert info["passages"] == 31 and info["index"]["type"] == "flat" and info["corpus"] == "sources"
    found = run_module(CLI, ["search", "Who was the first keeper?", "--k", "3", *overrides], tmp_path)
    assert found.returncode == 0, found.stderr[-3000:]
    hits = [json.loads(line) for line in found.stdout.strip().splitlines()]
    assert len(hits) == 3 and {"rank", "score", "passage", "title", "text"} <= set(hits[0])
    assert [h["rank"] for h in hits] == [1, 2, 3] and hits[0]["score"] >= hits[1]["score"]


@pytest.mark.parametrize("retriever", [r for r in choices("retriever") if r != "none"])
def test_every_retriever_config_reads_into_one_spec(retriever, make_config):
    cfg = make_config(
        ["task=pragmaticqa", "model=oracle", f"retriever={retriever}", "retriever.index.type=hnsw"]
    )
    spec = RetrieverSpec.from_config(
        cfg.retriever
    )  # every key a field: none is dropped or defaulted elsewhere
    assert spec.index == IndexSpec("hnsw") and spec.top_k == cfg.retriever.top_k
    assert spec.encoder("query") == EncoderSpec(
        cfg.retriever.query_encoder,
        cfg.retriever.pooling,
        cfg.retriever.normalize,
        cfg.retriever.max_query_length,
    )
    assert RetrieverSpec.from_config(spec) is spec


def test_the_retriever_spec_refuses_unknown_settings_and_scopes():
    with pytest.raises(ValueError, match=r"retriever.topk: not a retriever setting \(known: query_encoder"):
        RetrieverSpec.from_config({"topk": 3})
    with pytest.raises(ValueError, match=r"retriever.scope=page: one of all, community"):
        RetrieverSpec.from_config({"scope": "page"})
    assert RetrieverSpec.from_config({"top_k": "3", "finetune": False}).top_k == 3  # typed as declared
