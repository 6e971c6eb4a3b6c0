#!/usr/bin/env bash
# Configures and builds gpsm into build/ (Release, one CUDA architecture: 90 unless
# GPSM_CUDA_ARCH says otherwise). Extra arguments go to the CMake configure step.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${GPSM_CUDA_ARCH:-90}
jobs=${GPSM_JOBS:-$(nproc)}
py=$(command -v python3 || true)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      ${py:+-DPython3_EXECUTABLE=$py} "$@" >build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j "$jobs"
