"""What only a GPU shows: FAISS on the GPU (faiss-gpu), mixed precision (bf16, fp16), NCCL data parallel.
Every test here is marked `gpu` and skipped, with the reason, where torch sees no CUDA device (conftest)."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import GRICE_FIXTURE, run_module

from pragexp.retrieval import index as index_lib
from pragexp.retrieval.index import DenseIndex, IndexSpec, build_index, place
from pragexp.run import run

pytestmark = pytest.mark.gpu


def test_faiss_gpu_exact_search_equals_the_cpu_index():
    if not index_lib.gpu_available():
        pytest.skip(
            "faiss-gpu is not installed (faiss-cpu): `make install` picks faiss-gpu where nvidia-smi answers"
        )
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:50] + 0.01 * rng.standard_normal((50, 64)).astype(np.float32)
    spec = IndexSpec("flat")
    cpu = DenseIndex(build_index(vectors, spec), np.arange(5000)).search(queries, 10)
    gpu_index = place(build_index(vectors, spec), spec, gpu=True)
    assert "Gpu" in type(gpu_index).__name__
    gpu = DenseIndex(gpu_index, np.arange(5000)).search(queries, 10)
    assert (cpu[1] == gpu[1]).all() and np.allclose(cpu[0], gpu[0], atol=1e-4)


@pytest.mark.parametrize("precision", ["bf16-mixed", "16-mixed"])
def test_mixed_precision_trains_on_the_gpu(make_config, precision):
    if precision == "bf16-mixed" and not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bfloat16")
    metrics = run(
        make_config(
            [
                "task=circa",
                "model=bert",
                "trainer.accelerator=gpu",
                "trainer.devices=1",
                f"trainer.precision={precision}",
            ]
        )
    )
    assert metrics["test/count"] > 0 and all(np.isfinite(v) for v in metrics.values())


def test_two_gpu_nccl_ddp_counts_every_test_example_once(tmp_path):
    if torch.cuda.device_count() < 2:
        pytest.skip("NCCL data parallel needs two GPUs")
    run_dir = tmp_path / "ddp"
    done = run_module(
        "pragexp.train",
        [
            "task=grice_recovery",
            "model=lstm",
            "trainer=ddp",
            "trainer.accelerator=gpu",
            "trainer.devices=2",
            "trainer.max_epochs=1",
            "logger=none",
            "callbacks.progress_bar=null",
            "data=grice_official",
            f"data.train_path={GRICE_FIXTURE}",
            f"data.val_path={GRICE_FIXTURE}",
            f"data.test_path={GRICE_FIXTURE}",
            f"hydra.run.dir={run_dir}",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    expected = sum(len(d["dialog"]) for d in json.loads(GRICE_FIXTURE.read_text())["data"]["dialogs"])
    assert json.loads((run_dir / "metrics.json").read_text())["test/count"] == expected


def test_lora_trains_an_llm_in_bf16_on_the_gpu(make_config):
    """model=llm llm.finetune=lora in bf16 mixed precision on one GPU: the adapters learn and the checkpoint
    stays plain data; evaluation of the checkpoint gives the same figures."""
    if not torch.cuda.is_bf16_supported():
        pytest.skip("this GPU has no bf16")
    from pragexp.runs import checkpoint

    cfg = make_config(
        [
            "task=circa",
            "model=llm",
            "llm.finetune=lora",
            "optimizer.lr=5e-3",
            "trainer.accelerator=gpu",
            "trainer.precision=bf16-mixed",
        ]
    )
    trained = run(cfg)
    ckpt = next(Path(cfg.paths.output_dir).glob("checkpoints/best-*.ckpt"))
    weights = checkpoint.read(ckpt).network_weights()
    assert any("lora_B" in k and float(v.abs().sum()) > 0 for k, v in weights.items())
    again = make_config(
        [
            "task=circa",
            "model=llm",
            f"ckpt_path={ckpt}",
            "trainer.accelerator=gpu",
            "trainer.precision=bf16-mixed",
        ],
        name="eval",
        out="eval",
    )
    assert run(again)["test/acc"] == pytest.approx(trained["test/acc"])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_scores_on_the_gpu_do_not_depend_on_the_other_requests_of_the_call(dtype):
    """Scoring's fixed-shape passes (pragexp/generation/scoring/passes.py) on cuBLAS, whose kernels change
    with a matrix's shape: an item's scores alone, beside others and shuffled are the same bits, and they
    agree with the CPU's within float rounding."""
    from test_scorer_shapes import logliks, scores_independent_of_the_call, varied_requests

    from pragexp.generation.scoring.scorer import score_choices
    from pragexp.pretrained.causal import tiny_causal_lm

    model, tokenizer = tiny_causal_lm()
    reqs = varied_requests()
    on_cpu = logliks(score_choices(model.float(), tokenizer, reqs))
    alone = scores_independent_of_the_call(model.to("cuda", dtype), tokenizer, reqs)
    # float32: cuBLAS without TF32 (torch's default) rounds apart from the CPU by ~1e-5; bfloat16 by its 8
    # bits
    close = (
        (lambda a, b: abs(a - b) < 1e-3)
        if dtype == torch.float32
        else (lambda a, b: abs(a - b) < 0.05 * abs(b) + 0.1)
    )
    assert all(close(a, b) for x, y in zip(alone, on_cpu, strict=True) for a, b in zip(x, y, strict=True))
