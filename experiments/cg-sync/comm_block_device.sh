#!/usr/bin/env bash
# One device call for comm_block_ab.sh when the binaries are too large to carry: builds the tree
# with the base's gps_pipe sources (OLD=dir holding cg_gps_pipe.cu and cg_gps_pipe_run_cuda.cpp of
# the base commit), keeps that gpsm, restores this tree's two files and rebuilds (only they
# recompile), then runs the A/B with what is left of a 570-s budget.
# Usage: OLD=<dir> OUT=... GPSM_COMMIT=<sha> experiments/cg-sync/comm_block_device.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OLD:?OLD: the two gps_pipe sources of the base commit}"
t0=$(date +%s); out=${OUT:-$PWD/out}; mkdir -p "$out" /tmp/cb-new /tmp/cb-base
f="src/apps/cg/cg_gps_pipe.cu src/apps/cg/cg_gps_pipe_run_cuda.cpp"
cp $f /tmp/cb-new/ && cp "$OLD"/cg_gps_pipe.cu "$OLD"/cg_gps_pipe_run_cuda.cpp src/apps/cg/ || exit 1
GPSM_JOBS=$(nproc) ./scripts/build.sh >"$out/build-base.log" 2>&1 || { tail -30 "$out/build-base.log"; exit 1; }
cp build/bin/gpsm /tmp/cb-base/ && cp /tmp/cb-new/* src/apps/cg/ || exit 1
GPSM_JOBS=$(nproc) ./scripts/build.sh >"$out/build-new.log" 2>&1 || { tail -30 "$out/build-new.log"; exit 1; }
took=$(( $(date +%s) - t0 )); echo "comm_block_device: both built in $took s" | tee "$out/build-time.txt"
B0=/tmp/cb-base B1=$PWD/build/bin T1=$PWD/build/tests/gpsm_gpu_tests BUDGET=$(( 570 - took )) \
  experiments/cg-sync/comm_block_ab.sh
