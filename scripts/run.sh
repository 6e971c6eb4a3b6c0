#!/usr/bin/env bash
# README command 1: the main job. With a GPU: `gpsm scope --quick` (a one-minute characterization
# of this node, results in gpsm-out/). Without one: says so (the simulator default comes later).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
[ -x build/bin/gpsm ] || ./scripts/build.sh >/dev/null
if ./build/bin/gpsm info | grep -q '^GPUs: none'; then
  echo "gpsm: this machine has no CUDA GPU, so there is nothing for 'gpsm scope' to measure."
  echo "gpsm: run this command on a GPU node; here you can list the tests with: build/bin/gpsm scope --list"
  exit 0
fi
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
./build/bin/gpsm scope --quick --out gpsm-out "$@"
./build/bin/gpsm report gpsm-out/results.json --out gpsm-out/plots || echo "gpsm: plots skipped (matplotlib missing?)"
