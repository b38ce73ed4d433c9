#!/usr/bin/env bash
# Circa's Table 9 (RELAXED) and Table 10 (STRICT) rows that run offline (issue 27), MiniLM in BERT-base's place
# (model.pretrained=minilm), on the 7-scenario file: majority; BERT-YN on the question and answer, the question
# only and the answer only, matched, with the paper's recipe (3 epochs, batch 32, AdamW, 10% warm-up) and its
# learning-rate choice on dev among 2e-5, 3e-5 and 5e-5 (seed 0), then seeds 1 and 2 at the chosen rate; and
# BERT-YN RELAXED leaving each of the 7 scenarios out in turn, at BERT-YN RELAXED's chosen rate. Each run is
# skipped when its metrics.json exists, so the script can be stopped and started again. Then the report.
# Usage: experiments/circa/run_tables.sh [CIRCA_TSV] [OUT_DIR] [STAGES] [OVERRIDES...]
#   STAGES: any of "majority lr seeds loso report" (default: all); OVERRIDES go to every run.
#   JOBS=N runs N trainings at once (a GPU holds several MiniLM runs; on 2 CPU cores keep 1), each logging to
#   OUT_DIR/logs/.
set -euo pipefail
C=$(realpath "${1:-../shared/samples/circa/circa-7-scenarios.tsv}")
OUT=$(realpath -m "${2:-outputs/circa}")
STAGES=${3:-majority lr seeds loso report}
shift $(( $# < 3 ? $# : 3 ))
PY=${PYTHON:-python}
JOBS=${JOBS:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(data.path="$C" logger=csv print_config=false "$@")
minilm=(model.pretrained=minilm)  # the BERT rows
EXPERIMENTS=(bert_yn bert_question bert_answer)
mkdir -p "$OUT/logs"
failed=0

train() {  # train NAME OVERRIDES...: one run in $OUT/NAME, timed, unless it finished before
  local name=$1; shift
  [[ -f $OUT/$name/metrics.json ]] && return 0
  /usr/bin/time -f "$name\t%e s\t%M KB" -a -o "$OUT/times.tsv" \
      $PY -m pragexp.train "$@" hydra.run.dir="$OUT/$name" "${common[@]}"
}

finish() {  # finish [N]: wait until at most N runs are left running (default 0), noting any that failed
  while (( $(jobs -rp | wc -l) > ${1:-0} )); do wait -n || failed=1; done
}

start() {  # start NAME OVERRIDES...: train, in the background while fewer than JOBS runs are going
  if (( JOBS > 1 )); then
    finish $(( JOBS - 1 ))
    train "$@" > "$OUT/logs/${1//\//_}.log" 2>&1 &
  else
    train "$@"
  fi
}

best_lr() {  # best_lr EXPERIMENT LABELS: the rate whose seed-0 run scored the highest val/acc
  $PY - "$OUT" "$1" "$2" <<'PY'
import json, pathlib, sys
out, experiment, labels = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
scores = {}
for lr in ("2e-5", "3e-5", "5e-5"):
    metrics = out / f"matched/{experiment}_{labels}_lr{lr}_s0/metrics.json"
    if metrics.is_file():
        scores[lr] = json.loads(metrics.read_text())["val/acc"]
print(max(scores, key=scores.get) if scores else "3e-5")
PY
}

for labels in relaxed strict; do
  [[ $STAGES == *majority* ]] && start "matched/majority_$labels" experiment=circa/majority data.labels=$labels
  [[ $STAGES == *lr* ]] || continue
  for experiment in "${EXPERIMENTS[@]}"; do
    for lr in 2e-5 3e-5 5e-5; do
      start "matched/${experiment}_${labels}_lr${lr}_s0" experiment=circa/$experiment data.labels=$labels \
          optimizer.lr=$lr seed=0 "${minilm[@]}"
    done
  done
done
finish  # the rates are chosen on the seed-0 runs' dev scores
for labels in relaxed strict; do
  [[ $STAGES == *seeds* ]] || break
  for experiment in "${EXPERIMENTS[@]}"; do
    lr=$(best_lr "$experiment" "$labels")
    for seed in 1 2; do
      start "matched/${experiment}_${labels}_lr${lr}_s$seed" experiment=circa/$experiment data.labels=$labels \
          optimizer.lr=$lr seed=$seed "${minilm[@]}"
    done
  done
done
if [[ $STAGES == *loso* ]]; then
  lr=$(best_lr bert_yn relaxed)
  for fold in 0 1 2 3 4 5 6; do
    start "unmatched/bert_yn_relaxed_fold$fold" experiment=circa/bert_yn data.labels=relaxed \
        data.setting=unmatched data.fold=$fold optimizer.lr=$lr seed=0 "${minilm[@]}"
  done
fi
finish
(( failed )) && { echo "run_tables.sh: some runs failed; see $OUT/logs/" >&2; exit 1; }
[[ $STAGES == *report* ]] && $PY -m pragexp.report "$OUT" --out "$OUT/report.md" --figures "$OUT/figures"
exit 0
