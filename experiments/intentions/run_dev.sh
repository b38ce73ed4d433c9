#!/usr/bin/env bash
# The measurements of experiments/intentions/README.md: SmolLM2-135M-Instruct (offline) on the 45 dev items.
# Usage: bash experiments/intentions/run_dev.sh /path/to/dev.csv [out dir] [part: all|cot|rest]
# The two parts can run side by side (they share the response cache; `rest` reuses the plain replies).
set -euo pipefail
DATA=${1:?path to dev.csv}
OUT=${2:-outputs/intentions_dev}
PART=${3:-all}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 WANDB_MODE=offline
COMMON=(data.path="$DATA" logger=csv print_config=false)
PY=${PYTHON:-.venv/bin/python}

if [[ $PART == all || $PART == rest ]]; then
  # The paper's setting: plain prompt, temperatures 0.3 and 0.5 (test/acc averages them), embedding judge (MiniLM).
  $PY -m pragexp.eval task=intentions_reply judge=embedding "${COMMON[@]}" hydra.run.dir="$OUT/plain_embedding"
  # The same replies (from the cache: no generation call) judged by SmolLM2 with the A.4 prompt.
  $PY -m pragexp.eval task=intentions_reply judge=llm "${COMMON[@]}" hydra.run.dir="$OUT/plain_llm_judge"
  # Discriminative multiple choice (Appendix B), both option orders.
  $PY -m pragexp.eval task=intentions_mc "${COMMON[@]}" hydra.run.dir="$OUT/mc"
  # Sanity check of both judges: the references themselves as replies (100% / 0% expected).
  $PY -m pragexp.eval -m task=intentions_reply llm=reference_true,reference_literal judge=embedding,llm \
      "${COMMON[@]}" hydra.sweep.dir="$OUT/sanity"
fi
if [[ $PART == all || $PART == cot ]]; then
  # Accuracy by CoT level at temperature 0.3 (one temperature: CPU time), embedding judge.
  $PY -m pragexp.eval -m task=intentions_reply judge=embedding 'task.temperatures=[0.3]' \
      prompt.cot=none,5,6,0,1,2,3,4 "${COMMON[@]}" hydra.sweep.dir="$OUT/cot_t0.3"
fi
