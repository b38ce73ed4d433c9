#!/usr/bin/env bash
# SmolLM2-135M-Instruct on the 7-scenario Circa file (issue 27): prompted (three templates, 5-shot balanced,
# calibrated, per-token; RELAXED and STRICT; float32 and bfloat16; tuned with LoRA: run_lora.sh), on the first
# TEST_BATCHES x 64 (default 640)
# rows of the matched test split (the loader does not shuffle: the same rows for every run).
# Usage: experiments/circa/run_llm.sh [CIRCA_TSV] [OUT_DIR]
set -euo pipefail
C=${1:-../shared/samples/circa/circa-7-scenarios.tsv}
OUT=${2:-outputs/circa_llm}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(data.path="$C" data.eval_batch_size=64 trainer.limit_test_batches="${TEST_BATCHES:-10}" logger=csv print_config=false)
run() { local name=$1; shift; /usr/bin/time -f "$name\t%e s\t%M KB" -a -o "$OUT/times.tsv" "$@"; }
mkdir -p "$OUT"
# Zero-shot, three templates, RELAXED and STRICT, float32
run zero_shot python -m pragexp.eval -m task=circa model=llm data.labels=relaxed,strict prompt.template=0,1,2 \
    llm.dtype=float32 hydra.sweep.dir="$OUT/zero_shot" "${common[@]}"
# Five shots, balanced (the labels take turns), template 0
run five_shot python -m pragexp.eval -m task=circa model=llm data.labels=relaxed,strict prompt.shots=5 \
    prompt.balanced=true llm.dtype=float32 hydra.sweep.dir="$OUT/five_shot" "${common[@]}"
# Calibrated (Zhao et al. 2021) and per-token scoring, template 0
run scorings python -m pragexp.eval -m task=circa model=llm data.labels=relaxed,strict \
    prompt.scoring=calibrated,per_token llm.dtype=float32 hydra.sweep.dir="$OUT/scorings" "${common[@]}"
# bfloat16, template 0 (this CPU has no bf16 instructions: see the README)
run bf16 python -m pragexp.eval -m task=circa model=llm data.labels=relaxed,strict llm.dtype=bfloat16 \
    hydra.sweep.dir="$OUT/bf16" "${common[@]}"
