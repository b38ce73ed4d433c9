#!/usr/bin/env bash
# SmolLM2-135M-Instruct prompted on the 7-scenario Circa file (issue 27), on the first TEST_BATCHES x 64 rows of the
# matched test split (default 640; the test loader does not shuffle: the same rows for every run): zero-shot with
# each of the three templates, RELAXED and STRICT; with template 0, RELAXED and STRICT: 5-shot balanced (the labels
# take turns), calibrated (Zhao et al. 2021), per-token; and float32 against bfloat16 on the first DTYPE_BATCHES x 64
# rows, each run with an empty response cache of its own, so that both times are of model calls. Tuned: run_lora.sh.
# Usage: experiments/circa/run_llm.sh [CIRCA_TSV] [OUT_DIR] [OVERRIDES...]
#   OVERRIDES go to every run (paths.cache_dir=DIR: a response cache of the runs' own, so that times are of model calls).
#   DTYPE=bfloat16 runs the first runs in bfloat16 (default float32); DTYPE_BATCHES=0 leaves out the float32/bfloat16
#   pair.
set -euo pipefail
C=${1:-../shared/samples/circa/circa-7-scenarios.tsv}
OUT=${2:-outputs/circa_llm}
PY=${PYTHON:-python}
DTYPE=${DTYPE:-float32}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(task=circa model=llm data.path="$C" data.eval_batch_size=64 logger=csv print_config=false "${@:3}")
test_rows=(trainer.limit_test_batches="${TEST_BATCHES:-10}")
run() { local name=$1; shift; /usr/bin/time -f "$name\t%e s\t%M KB" -a -o "$OUT/times.tsv" "$@"; }
mkdir -p "$OUT"
run zero_shot $PY -m pragexp.eval -m "${common[@]}" "${test_rows[@]}" data.labels=relaxed,strict \
    prompt.template=0,1,2 llm.dtype=$DTYPE hydra.sweep.dir="$OUT/zero_shot"
for labels in relaxed strict; do
  suffix=$([[ $labels == strict ]] && echo _strict || true)  # RELAXED's folders keep their first names
  run five_shot_balanced$suffix $PY -m pragexp.eval "${common[@]}" "${test_rows[@]}" data.labels=$labels \
      prompt.shots=5 prompt.balanced=true llm.dtype=$DTYPE hydra.run.dir="$OUT/five_shot_balanced$suffix"
  run scorings$suffix $PY -m pragexp.eval -m "${common[@]}" "${test_rows[@]}" data.labels=$labels \
      prompt.scoring=calibrated,per_token llm.dtype=$DTYPE hydra.sweep.dir="$OUT/scorings$suffix"
  (( ${DTYPE_BATCHES:-2} > 0 )) || continue
  for dtype in float32 bfloat16; do
    cache=$(mktemp -d)
    run dtype_${labels}_$dtype $PY -m pragexp.eval "${common[@]}" trainer.limit_test_batches="${DTYPE_BATCHES:-2}" \
        data.labels=$labels llm.dtype=$dtype paths.cache_dir="$cache" hydra.run.dir="$OUT/dtype/${labels}_$dtype"
    rm -rf "$cache"
  done
done
