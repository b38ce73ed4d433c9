#!/usr/bin/env bash
# SmolLM2-135M-Instruct tuned with LoRA on the 7-scenario Circa file's matched RELAXED train split (issue 27): STEPS
# steps of batch 8 (every EVERY steps an "epoch": a fresh stretch of the shuffled train split, then dev accuracy on
# the first DEV_BATCHES x 64 dev rows: the learning curve), AdamW at LR with the task's linear warm-up and decay;
# the best of those checkpoints tested on the first TEST_BATCHES x 64 test rows (the test loader does not shuffle:
# the rows the prompted runs of run_llm.sh read).
# Extra overrides after the two paths go to the training command (e.g. prompt.template=1 'llm.lora.layers=[...]').
# Usage: experiments/circa/run_lora.sh [CIRCA_TSV] [OUT_DIR] [OVERRIDES...]
set -euo pipefail
C=${1:-../shared/samples/circa/circa-7-scenarios.tsv}
OUT=${2:-outputs/circa_lora}
shift $(($# < 2 ? $# : 2))
STEPS=${STEPS:-400} EVERY=${EVERY:-50} LR=${LR:-1e-3} DEV_BATCHES=${DEV_BATCHES:-2} TEST_BATCHES=${TEST_BATCHES:-10}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
mkdir -p "$OUT"
/usr/bin/time -f "lora\t%e s\t%M KB" -a -o "$OUT/times.tsv" ${PYTHON:-python} -m pragexp.train task=circa model=llm \
    llm.finetune=lora llm.dtype=float32 data.path="$C" data.batch_size=8 data.eval_batch_size=64 \
    optimizer.lr="$LR" trainer.max_epochs=$((STEPS / EVERY)) trainer.limit_train_batches="$EVERY" \
    trainer.limit_val_batches="$DEV_BATCHES" trainer.limit_test_batches="$TEST_BATCHES" trainer.num_sanity_val_steps=0 \
    trainer.log_every_n_steps=10 callbacks=no_early_stopping hydra.run.dir="$OUT/run" logger=csv \
    print_config=false "$@"
# The curve: dev accuracy after every EVERY steps (the CSV log's val/acc, one row per validation)
${PYTHON:-python} - "$OUT/run" "$EVERY" <<'PY' | tee "$OUT/curve.txt"
import csv, glob, sys
run, every = sys.argv[1], int(sys.argv[2])
rows = [r for f in glob.glob(f"{run}/csv/**/metrics.csv", recursive=True) for r in csv.DictReader(open(f))]
# the validations during training (after every EVERY steps); the one after training re-scores the best checkpoint
validations = [r for r in rows if r.get("val/acc") and (int(r["step"]) + 1) % every == 0]
for r in validations:
    print(f"step {int(r['step']) + 1}: dev acc {float(r['val/acc']):.3f}")
PY
