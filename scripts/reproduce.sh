#!/usr/bin/env bash
# Every row of the multi-hop QA results table (docs/results.md): one supervised warm start, then one RL
# run per algorithm from it (GRPO, PPO, REINFORCE++, RLOO) plus the ablation without the action mask, then
# the table on the held-out test split. Each stage checkpoints and resumes: rerun after an interruption.
#
#   scripts/reproduce.sh [out-dir] [extra key=value overrides for every stage...]
#
# Writes <out-dir>/results.md, results.json and results-curves.svg (default out-dir: runs/reproduce).
# WARM_START=<policy checkpoint folder> skips the warm start stage and starts every RL run from that one.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-runs/reproduce}"
shift || true
EXTRA=("$@")
CLI=(npx tsx --conditions=@agent-r1/source packages/agent-r1/src/cli/main.ts)
START=$(date +%s)

stage() {
  local name=$1
  shift
  local t0
  t0=$(date +%s)
  echo "=== ${name}"
  "${CLI[@]}" train --preset multihop checkpoint.resume=true "log.dir=${OUT}/${name}" \
    "checkpoint.dir=${OUT}/${name}/checkpoints" "$@" "${EXTRA[@]}"
  echo "=== ${name}: $(($(date +%s) - t0)) s"
}

if [[ -n "${WARM_START:-}" ]]; then
  WARM="${WARM_START}"
else
  WARM="${OUT}/warm-start/checkpoints/warm-start"
  stage warm-start train.steps=0
fi
for algo in grpo ppo reinforce++ rloo; do
  stage "${algo}" "init=${WARM}" sft.steps=0 eval.table=false "algorithm.name=${algo}"
done
stage grpo-no-mask "init=${WARM}" sft.steps=0 eval.table=false algorithm.name=grpo algorithm.useActionMask=false

echo "=== results table"
"${CLI[@]}" eval --preset multihop "${EXTRA[@]}" --out "${OUT}" \
  --policy "supervised (warm start)=${WARM}" \
  --policy "GRPO=${OUT}/grpo/checkpoints/policy" \
  --policy "PPO=${OUT}/ppo/checkpoints/policy" \
  --policy "REINFORCE++=${OUT}/reinforce++/checkpoints/policy" \
  --policy "RLOO=${OUT}/rloo/checkpoints/policy" \
  --policy "GRPO, no action mask=${OUT}/grpo-no-mask/checkpoints/policy"
echo "reproduce: $(($(date +%s) - START)) s in all"
