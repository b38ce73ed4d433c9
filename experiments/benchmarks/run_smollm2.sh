#!/usr/bin/env bash
# SmolLM2-135M-Instruct (llm.model=smollm2, float32, CPU) on the LLM pragmatics benchmarks' excerpts beside the
# repository (../shared/samples): Hu et al.'s five shared phenomena (the authors' protocol, all five seeds; and
# pragexp's scoring of the options' text, zero-shot), LUDWIG's 150 shared test pairs (six templates, k = 0 and
# 5, the authors' type lookup and tie rule: the defaults; and the contrastive setting, zero-shot), generated answers
# beside log-likelihood, then the report, scorecard and figures. Each step's wall time is printed after it.
# Usage: experiments/benchmarks/run_smollm2.sh [SAMPLES_DIR] [OUT_DIR] [all|hu|hu_text|ludwig|ludwig_contrastive|declared|report]
set -euo pipefail
S=${1:-../shared/samples}
OUT=${2:-outputs/benchmarks}
PART=${3:-all}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(logger=csv print_config=false)
HU=(data.path="$S/hu_pragmatics/prompts")
LUDWIG=(data.path="$S/ludwig" data.test_file=test_conversational_implicatures_first150.csv
        data.types_file=type_labels_shared_rows.csv)

timed() {  # NAME ARGS...: one pragexp.eval command, its wall time after it
    local name=$1 start=$SECONDS
    shift
    python -m pragexp.eval "$@" "${common[@]}"
    echo "$name: $((SECONDS - start)) s"
}

if [[ $PART == all || $PART == hu ]]; then
    # Hu et al.: the paper's protocol (prompt.template=authors, the default), five phenomena x five seeds
    timed hu_authors task=hu_pragmatics "${HU[@]}" hydra.run.dir="$OUT/hu_authors"
fi
if [[ $PART == all || $PART == hu_text ]]; then
    # Hu et al., pragexp's scoring of the options' text (the docs' row, docs/benchmarks/hu-pragmatics.md; numbered_text and letters are its others)
    timed hu_options_as_text task=hu_pragmatics "${HU[@]}" prompt.template=options_as_text \
        hydra.run.dir="$OUT/hu_options_as_text"
fi
if [[ $PART == all || $PART == ludwig ]]; then
    # LUDWIG: six templates x k = 0, 5 (k dev pairs per test pair, drawn per pair as the authors' code draws them)
    timed ludwig -m task=ludwig "${LUDWIG[@]}" prompt.template=0,1,2,3,4,5 prompt.shots=0,5 \
        hydra.sweep.dir="$OUT/ludwig"
fi
if [[ $PART == all || $PART == ludwig_contrastive ]]; then
    timed ludwig_contrastive -m task=ludwig "${LUDWIG[@]}" prompt=ludwig_contrastive prompt.template=0,1 \
        hydra.sweep.dir="$OUT/ludwig_contrastive"
fi
if [[ $PART == all || $PART == declared ]]; then
    # Generated answers beside log-likelihood (issue 36): the `declared` template through the chat template
    timed hu_declared -m task=hu_pragmatics "${HU[@]}" prompt.template=declared prompt.chat=true \
        prompt.scoring=generate,sum prompt.max_new_tokens=32 hydra.sweep.dir="$OUT/hu_declared"
    timed ludwig_declared -m task=ludwig "${LUDWIG[@]}" prompt.template=declared prompt.chat=true \
        prompt.scoring=generate,sum prompt.max_new_tokens=32 hydra.sweep.dir="$OUT/ludwig_declared"
fi
if [[ $PART == all || $PART == report ]]; then
    python -m pragexp.report "$OUT" --scorecard "$OUT/scorecard.md" --figures "$OUT/figures" --out "$OUT/report.md"
fi
