#!/usr/bin/env bash
# WebGPU on a machine without a GPU: Dawn (the `webgpu` npm package) runs WGSL on the CPU through Mesa's
# llvmpipe, via Dawn's OpenGL ES backend on a surfaceless EGL display. This script installs the Mesa
# packages when they are missing and exports what Dawn needs. Source it, so the export reaches your shell:
#
#   source scripts/webgpu-env.sh && npm test
#
# With a real GPU (Vulkan/Metal/D3D12) none of this is needed: the backend prefers the hardware adapter.
PACKAGES=(mesa-vulkan-drivers libegl1 libegl-mesa0 libgles2 libgl1-mesa-dri)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "webgpu-env: installing ${missing[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
    $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
  fi
else
  echo "webgpu-env: not a Debian/Ubuntu system; install Mesa's EGL + GLES (llvmpipe) with your package manager" >&2
fi

# Dawn's GL backend needs an EGL display without a window system.
export EGL_PLATFORM=surfaceless
