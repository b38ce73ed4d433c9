#!/usr/bin/env bash
# SmolLM2-135M-Instruct (llm.model=smollm2, float32, CPU) on the LLM pragmatics benchmarks' excerpts beside the
# repository (../shared/samples): Hu et al.'s five shared phenomena (the authors' protocol, all five seeds; and
# pragexp's three templates of option text, zero-shot), LUDWIG's 150 shared test pairs (six templates, k = 0 and
# 5; and the contrastive setting, zero-shot), then the report, scorecard and figures.
# Usage: experiments/benchmarks/run_smollm2.sh [SAMPLES_DIR] [OUT_DIR]
set -euo pipefail
S=${1:-../shared/samples}
OUT=${2:-outputs/benchmarks}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 WANDB_MODE=offline
common=(logger=csv print_config=false)
HU=(data.path="$S/hu_pragmatics/prompts")
LUDWIG=(data.path="$S/ludwig" data.test_file=test_conversational_implicatures_first150.csv
        data.types_file=type_labels_shared_rows.csv)

# Hu et al.: the paper's protocol (prompt.template=authors, the default), five phenomena x five seeds
python -m pragexp.eval task=hu_pragmatics "${HU[@]}" hydra.run.dir="$OUT/hu_authors" "${common[@]}"
# ... and pragexp's scoring of the options' text, three templates
python -m pragexp.eval -m task=hu_pragmatics "${HU[@]}" prompt.template=options_as_text,numbered_text,letters \
    hydra.sweep.dir="$OUT/hu_pragexp" "${common[@]}"
# LUDWIG: six templates x k = 0, 5 (k dev pairs per test pair, drawn as the authors' code draws them)
python -m pragexp.eval -m task=ludwig "${LUDWIG[@]}" prompt.template=0,1,2,3,4,5 prompt.shots=0,5 \
    hydra.sweep.dir="$OUT/ludwig" "${common[@]}"
python -m pragexp.eval -m task=ludwig "${LUDWIG[@]}" prompt=ludwig_contrastive prompt.template=0,1 \
    hydra.sweep.dir="$OUT/ludwig_contrastive" "${common[@]}"
# Generated answers beside log-likelihood (issue 36): the `declared` template through the chat template, both readings
python -m pragexp.eval -m task=hu_pragmatics "${HU[@]}" prompt.template=declared prompt.chat=true \
    prompt.scoring=generate,sum prompt.max_new_tokens=32 hydra.sweep.dir="$OUT/hu_declared" "${common[@]}"
python -m pragexp.eval -m task=ludwig "${LUDWIG[@]}" prompt.template=declared prompt.chat=true \
    prompt.scoring=generate,sum prompt.max_new_tokens=32 hydra.sweep.dir="$OUT/ludwig_declared" "${common[@]}"
python -m pragexp.report "$OUT" --scorecard "$OUT/scorecard.md" --figures "$OUT/figures" --out "$OUT/report.md"
