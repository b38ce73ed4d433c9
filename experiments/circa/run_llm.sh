#!/usr/bin/env bash
# SmolLM2-135M-Instruct prompted on the 7-scenario Circa file (issue 27), on the first TEST_BATCHES x 64 rows of the
# matched test split (default 640; the test loader does not shuffle: the same rows for every run): zero-shot with
# each of the three templates, RELAXED and STRICT; RELAXED with template 0: 5-shot balanced (the labels take
# turns), calibrated (Zhao et al. 2021), per-token; and bfloat16 on the first BF16_BATCHES x 64 rows (this CPU has
# no bf16 instructions, so it is slow here: compare it with the float32 run's same rows). Tuned: run_lora.sh.
# Usage: experiments/circa/run_llm.sh [CIRCA_TSV] [OUT_DIR]
set -euo pipefail
C=${1:-../shared/samples/circa/circa-7-scenarios.tsv}
OUT=${2:-outputs/circa_llm}
PY=${PYTHON:-python}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(task=circa model=llm data.path="$C" data.eval_batch_size=64 logger=csv print_config=false)
test_rows=(trainer.limit_test_batches="${TEST_BATCHES:-10}")
run() { local name=$1; shift; /usr/bin/time -f "$name\t%e s\t%M KB" -a -o "$OUT/times.tsv" "$@"; }
mkdir -p "$OUT"
run zero_shot $PY -m pragexp.eval -m "${common[@]}" "${test_rows[@]}" data.labels=relaxed,strict \
    prompt.template=0,1,2 llm.dtype=float32 hydra.sweep.dir="$OUT/zero_shot"
run five_shot_balanced $PY -m pragexp.eval "${common[@]}" "${test_rows[@]}" data.labels=relaxed prompt.shots=5 \
    prompt.balanced=true llm.dtype=float32 hydra.run.dir="$OUT/five_shot_balanced"
run scorings $PY -m pragexp.eval -m "${common[@]}" "${test_rows[@]}" data.labels=relaxed \
    prompt.scoring=calibrated,per_token llm.dtype=float32 hydra.sweep.dir="$OUT/scorings"
run bf16 $PY -m pragexp.eval "${common[@]}" trainer.limit_test_batches="${BF16_BATCHES:-2}" data.labels=relaxed \
    llm.dtype=bfloat16 hydra.run.dir="$OUT/bf16"
