#!/usr/bin/env bash
# The `npm run train` pipeline (multihop preset: warm start → GRPO → results table) under several seeds,
# then one table over them: each cell's mean and spread, and GRPO's gain over the warm start paired seed by
# seed (`agent-r1 seeds`). One thread per run, JOBS runs at a time (default: one per core, at most 2).
# A seed whose results.json exists is not run again, and a run that was cut off resumes from its checkpoint.
#
#   scripts/seeds.sh [out-dir] [seed ...] [-- extra key=value overrides for every run]
#
# Default: runs/seeds, seeds 0 1 2. Writes <out-dir>/seed-<s>/ (each run's log.dir) and
# <out-dir>/results-seeds.md.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-runs/seeds}"
shift || true
SEEDS=()
while [[ $# -gt 0 && "$1" != "--" ]]; do
  SEEDS+=("$1")
  shift
done
[[ "${1:-}" == "--" ]] && shift
EXTRA=("$@")
[[ ${#SEEDS[@]} -gt 0 ]] || SEEDS=(0 1 2)
CORES=$(nproc 2>/dev/null || echo 1)
JOBS="${JOBS:-$((CORES < 2 ? CORES : 2))}"
CLI=(npx tsx --conditions=@agent-r1/source packages/agent-r1/src/cli/main.ts)
START=$(date +%s)

one_seed() {
  local seed=$1 dir="${OUT}/seed-$1" t0
  if [[ -f "${dir}/results.json" ]]; then
    echo "=== seed ${seed}: done before (${dir}/results.json)"
    return
  fi
  t0=$(date +%s)
  echo "=== seed ${seed}: ${dir}/train.log"
  mkdir -p "${dir}"
  "${CLI[@]}" train --preset multihop "seed=${seed}" threads=1 checkpoint.resume=true log.progress=none \
    "log.dir=${dir}" "checkpoint.dir=${dir}/checkpoints" "${EXTRA[@]}" >"${dir}/train.log" 2>&1
  echo "=== seed ${seed}: $(($(date +%s) - t0)) s"
}

running=0
for seed in "${SEEDS[@]}"; do
  one_seed "${seed}" &
  running=$((running + 1))
  if [[ ${running} -ge ${JOBS} ]]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

RUNS=()
for seed in "${SEEDS[@]}"; do RUNS+=(--run "${OUT}/seed-${seed}"); done
"${CLI[@]}" seeds --preset multihop "${RUNS[@]}" --out "${OUT}" "${EXTRA[@]}"
echo "seeds: $(($(date +%s) - START)) s in all"
