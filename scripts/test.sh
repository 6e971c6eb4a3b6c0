#!/usr/bin/env bash
# README command 2: installs dependencies, builds everything, runs every test (CPU tests always;
# GPU tests run where GPUs exist and are reported as skipped where none does).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
