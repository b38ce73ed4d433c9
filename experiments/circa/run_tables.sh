#!/usr/bin/env bash
# Circa's Table 9 (RELAXED) and Table 10 (STRICT) rows that run offline (issue 27), MiniLM in BERT-base's place
# (model.pretrained=minilm), on the 7-scenario file: majority; BERT-YN on the question and answer, the question
# only and the answer only, matched, with the paper's recipe (3 epochs, batch 32, AdamW, 10% warm-up) and its
# learning-rate choice on dev among 2e-5, 3e-5 and 5e-5 (seed 0), then seeds 1 and 2 at the chosen rate; and
# BERT-YN RELAXED leaving each of the 7 scenarios out in turn. Each stage skips the runs it finds finished
# (metrics.json), so the script can be stopped and started again. Then the report.
# Usage: experiments/circa/run_tables.sh [CIRCA_TSV] [OUT_DIR] [STAGES]   (STAGES: "majority lr seeds loso")
set -euo pipefail
C=$(realpath "${1:-../shared/samples/circa/circa-7-scenarios.tsv}")
OUT=$(realpath -m "${2:-outputs/circa}")
STAGES=${3:-majority lr seeds loso}
PY=${PYTHON:-python}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(data.path="$C" logger=csv print_config=false)
minilm=(model.pretrained=minilm)  # the BERT rows
mkdir -p "$OUT"

train() {  # train NAME OVERRIDES...: one run in $OUT/NAME, timed, unless it finished before
  local name=$1; shift
  [[ -f $OUT/$name/metrics.json ]] && return 0
  /usr/bin/time -f "$name\t%e s\t%M KB" -a -o "$OUT/times.tsv" \
      $PY -m pragexp.train "$@" hydra.run.dir="$OUT/$name" "${common[@]}"
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
  if [[ $STAGES == *majority* ]]; then
    train "matched/majority_$labels" experiment=circa/majority data.labels=$labels
  fi
  for experiment in bert_yn bert_question bert_answer; do
    if [[ $STAGES == *lr* ]]; then
      for lr in 2e-5 3e-5 5e-5; do
        train "matched/${experiment}_${labels}_lr${lr}_s0" experiment=circa/$experiment data.labels=$labels \
            optimizer.lr=$lr seed=0 "${minilm[@]}"
      done
    fi
    if [[ $STAGES == *seeds* ]]; then
      lr=$(best_lr "$experiment" "$labels")
      for seed in 1 2; do
        train "matched/${experiment}_${labels}_lr${lr}_s$seed" experiment=circa/$experiment data.labels=$labels \
            optimizer.lr=$lr seed=$seed "${minilm[@]}"
      done
    fi
  done
done
if [[ $STAGES == *loso* ]]; then
  lr=$(best_lr bert_yn relaxed)
  for fold in 0 1 2 3 4 5 6; do
    train "unmatched/bert_yn_relaxed_fold$fold" experiment=circa/bert_yn data.labels=relaxed \
        data.setting=unmatched data.fold=$fold optimizer.lr=$lr seed=0 "${minilm[@]}"
  done
fi
$PY -m pragexp.report "$OUT" --out "$OUT/report.md" --figures "$OUT/figures"
