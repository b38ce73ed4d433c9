#!/usr/bin/env bash
# The offline LLM rows of experiments/llm/README.md: SmolLM2-135M-Instruct (llm.model=smollm2, the default of
# model=llm) on the data samples beside the repository (../shared/samples), every template, zero- and few-shot.
# Usage: experiments/llm/run_offline.sh [SAMPLES_DIR] [OUT_DIR]
set -euo pipefail
S=${1:-../shared/samples}
OUT=${2:-outputs/llm}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 WANDB_MODE=offline
GRICE="[$(ls "$S"/grice/official_dev/*.json | paste -sd, -)]"
common=(logger=csv print_config=false)

# Circa (the 80-row sample: matched split, test = 16 rows), three templates x 0 and 5 shots, and the majority row
python -m pragexp.eval -m task=circa model=llm data.path="$S/circa/circa-sample.tsv" prompt.template=0,1,2 \
    prompt.shots=0,5 hydra.sweep.dir="$OUT/circa" "${common[@]}"
python -m pragexp.eval task=circa model=majority data.path="$S/circa/circa-sample.tsv" \
    hydra.run.dir="$OUT/circa_majority" "${common[@]}"
# GRICE official dev (5 files: 3,497 recovery rounds, 1,000 questions), three templates, zero-shot
python -m pragexp.eval -m task=grice_recovery model=llm data=grice_official data.path="$GRICE" \
    prompt.template=0,1,2 hydra.sweep.dir="$OUT/grice_recovery" "${common[@]}"
python -m pragexp.eval task=grice_qa model=llm data=grice_official data.path="$GRICE" \
    hydra.run.dir="$OUT/grice_qa" "${common[@]}"
# PragmatiCQA: train.jsonl carved by topic, the spans corpus, the MiniLM retriever, top 3 passages
python -m pragexp.eval task=pragmaticqa model=llm retriever=minilm metrics.q_scorer=none data.path="$S/pragmaticqa" \
    data.corpus=spans data.splits=carved retriever.top_k=3 validate=false hydra.run.dir="$OUT/pragmaticqa" "${common[@]}"
python -m pragexp.report "$OUT" --scorecard "$OUT/scorecard.md" --plot "$OUT/scorecard.png"
