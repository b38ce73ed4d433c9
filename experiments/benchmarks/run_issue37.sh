#!/usr/bin/env bash
# SmolLM2-135M-Instruct (llm.model=smollm2, float32, CPU) on the excerpts of MultiPragEval and ToMATO beside the
# repository (../shared/samples): MultiPragEval's 100 sampled rows in its four languages (400 units), the option
# letter's log-likelihood and the greedy reply read back; the first 48 of ToMATO-FB's 186 sampled questions (3
# batches of 16: its transcripts are long, a run on one CPU thread is short only so), the authors' turn with its
# reply read back and pragexp's scoring of the options' text. Each run's wall time is printed after it.
# Usage: experiments/benchmarks/run_issue37.sh [SAMPLES_DIR] [OUT_DIR] [all|multiprageval|tomato]
set -euo pipefail
S=${1:-../shared/samples}
OUT=${2:-outputs/benchmarks}
PART=${3:-all}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(logger=csv print_config=false llm.model=smollm2)
MPE=(task=multiprageval data.path="$S/multiprageval/test_suite_sample.csv")
TOMATO=(task=tomato data.path="$S/tomato/tomato_fb_sample.json" trainer.limit_test_batches=3)

timed() {  # NAME ARGS...: one pragexp.eval run, its wall time after it
    local name=$1 start=$SECONDS
    shift
    python -m pragexp.eval "$@" hydra.run.dir="$OUT/$name" "${common[@]}"
    echo "$name: $((SECONDS - start)) s"
}

if [[ $PART != tomato ]]; then
    timed multiprageval_letter "${MPE[@]}"
    timed multiprageval_generate "${MPE[@]}" prompt.scoring=generate
fi
if [[ $PART != multiprageval ]]; then
    timed tomato_fb_authors_generate "${TOMATO[@]}" prompt.scoring=generate
    timed tomato_fb_option_text "${TOMATO[@]}" prompt.template=option_text
fi
