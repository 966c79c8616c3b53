#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and no package registry, from the repository root with .device-kit/
# (scripts/device-kit.sh) beside it: unpacks Node.js and node_modules, then runs the cuda backend's
# cross-backend suite (every primitive against the CPU backend, float64 gradient checks on the device,
# float16/bfloat16), a whole training step of the policy model against the CPU (nn's cuda-lm test) and
# `bench:cuda`. Logs go to $OUT (the device tool's folder; ./device-out otherwise).
#   QUICK=1       the benchmarks' --quick sizes
#   REQUIRE_CUDA  1 by default: a missing driver or NVRTC fails the suite instead of skipping it
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT" /tmp/ar1-node/bin
xz -dc .device-kit/node.xz > /tmp/ar1-node/bin/node && chmod +x /tmp/ar1-node/bin/node || exit 1
export PATH="/tmp/ar1-node/bin:$PATH"
[ -d node_modules ] || tar -xJf .device-kit/node_modules.tar.xz || exit 1
# NVRTC and cuBLAS come from the CUDA toolkit, or from NVIDIA's Python wheels in a virtual environment.
if [ -z "${VIRTUAL_ENV:-}" ] && [ -d /opt/torch/.venv ]; then export VIRTUAL_ENV=/opt/torch/.venv; fi
export REQUIRE_CUDA="${REQUIRE_CUDA:-1}"
{ node --version; nvidia-smi 2>&1 | head -15; } | tee "$OUT/machine.txt"
(cd packages/tensor && node ../../node_modules/vitest/vitest.mjs run test/cuda-cross-backend.test.ts) 2>&1 |
  tee "$OUT/cross-backend.log"
suite=${PIPESTATUS[0]}
# A whole training step of the policy model on the GPU against the CPU (and on the emulator, where g++ is).
(cd packages/nn && node ../../node_modules/vitest/vitest.mjs run test/cuda-lm.test.ts) 2>&1 | tee "$OUT/lm.log"
lm=${PIPESTATUS[0]}
node node_modules/tsx/dist/cli.mjs --conditions=@agent-r1/source benchmarks/src/cuda.ts ${QUICK:+--quick} 2>&1 |
  tee "$OUT/bench-cuda.log"
bench=${PIPESTATUS[0]}
echo "device-check: cross-backend suite rc $suite, LM training step rc $lm, bench:cuda rc $bench" |
  tee -a "$OUT/machine.txt"
[ "$suite" -eq 0 ] && [ "$lm" -eq 0 ] && [ "$bench" -eq 0 ]
