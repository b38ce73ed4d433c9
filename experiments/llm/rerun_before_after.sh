#!/usr/bin/env bash
# Issue 25's "same numbers": the figures of this README and experiments/intentions/README.md that run in minutes,
# run by the code before the one route (BEFORE, a checkout of fd5e27a) and after it (AFTER), each with its own
# empty response cache, one run at a time; then every pair of run directories compared (compare_runs.py: same
# decisions, log-likelihoods within 1e-4, metrics). The 5-shot GRICE QA run (template 2) is also timed, with its peak
# memory, for the option pass's KV cache read without a copy per option row.
# Usage: experiments/llm/rerun_before_after.sh BEFORE_CHECKOUT AFTER_CHECKOUT SAMPLES_DIR OUT_DIR
set -euo pipefail
BEFORE=$(realpath "$1") AFTER=$(realpath "$2") S=$(realpath "$3") OUT=$(realpath -m "$4")
PY=${PYTHON:-python}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
GRICE="[$(ls "$S"/grice/official_dev/*.json | paste -sd, -)]"
GR=(data=grice_official data.path="$GRICE" data.max_dialogues=20 threads=2)
mkdir -p "$OUT"
(cd "$AFTER" && $PY -m pragexp.data.grice --split train --dialogs 200 --seed 0 --out "$OUT/grice_generated_train.json" --quiet)

for side in before after; do
  dir=$BEFORE; [[ $side == after ]] && dir=$AFTER
  o=$OUT/$side
  common=(logger=csv print_config=false paths.cache_dir="$o/cache")
  # the intention tasks were renamed by issue 25
  reply=intentions_reply mc=intentions_mc
  [[ $side == before ]] && reply=llm_response_eval mc=llm_intent_mc
  cd "$dir"
  $PY -m pragexp.eval -m task=circa model=llm data.path="$S/circa/circa-sample.tsv" prompt.template=0,1,2 \
      prompt.shots=0,5 hydra.sweep.dir="$o/circa" "${common[@]}"
  $PY -m pragexp.eval -m task=circa model=llm data.path="$S/circa/circa-sample.tsv" prompt.template=0,1,2 \
      prompt.scoring=calibrated hydra.sweep.dir="$o/circa_calibrated" "${common[@]}"
  $PY -m pragexp.eval task=grice_recovery model=llm "${GR[@]}" hydra.run.dir="$o/grice_recovery" "${common[@]}"
  $PY -m pragexp.eval task=grice_qa model=llm "${GR[@]}" hydra.run.dir="$o/grice_qa" "${common[@]}"
  /usr/bin/time -f "$side grice_qa_5shot_t2\t%e s\t%M KB" -a -o "$OUT/times.tsv" \
      $PY -m pragexp.eval task=grice_qa model=llm "${GR[@]}" data.train_path="$OUT/grice_generated_train.json" \
      prompt.shots=5 prompt.template=2 hydra.run.dir="$o/grice_qa_5shot_t2" "${common[@]}"
  $PY -m pragexp.eval task=$mc data.path="$S/intentions/dev.csv" hydra.run.dir="$o/intentions_mc" "${common[@]}"
  $PY -m pragexp.eval task=$reply judge=embedding data.path="$S/intentions/dev.csv" \
      hydra.run.dir="$o/intentions_reply" "${common[@]}"
  # the same replies (from this side's cache) judged by SmolLM2, and the judges' sanity check
  $PY -m pragexp.eval task=$reply judge=llm data.path="$S/intentions/dev.csv" \
      hydra.run.dir="$o/intentions_reply_llm_judge" "${common[@]}"
  $PY -m pragexp.eval -m task=$reply llm=reference_true,reference_literal judge=embedding,llm \
      data.path="$S/intentions/dev.csv" hydra.sweep.dir="$o/intentions_sanity" "${common[@]}"
done

# every pair of run directories: decisions, texts, log-likelihoods (within 1e-4) and metrics
cd "$AFTER"
for run in $(cd "$OUT/before" && find . -name predictions.jsonl -printf '%h\n' | sort); do
  echo "== ${run#./}"
  $PY experiments/llm/compare_runs.py "$OUT/before/$run" "$OUT/after/$run" || true
done | tee "$OUT/compare.txt"
