#!/usr/bin/env bash
# On a device machine: build gpsm here (16 cores: ~150 s fresh, seconds when the machine is still
# warm with build/), put the test binary beside gpsm, then run one experiment script with
# B=build/bin and BUDGET = what is left of a 585-s call, so its device-batch steps end (and pack
# their results) inside the device tool's 600-s limit. For days the binaries cannot be carried:
# the tree is ~50 MB of the 64 MiB a call takes, and one stripped gpsm is ~12 MB compressed.
# Carry .deps (the GPU machine has no package registry).
# Usage: [GPSM_COMMIT=<sha>] [G=0,1] OUT=$OUT experiments/build_then.sh experiments/X/Y.sh
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 SCRIPT [ARGS...]" >&2; exit 2; }
t0=$(date +%s); out=${OUT:-$PWD/out}; mkdir -p "$out"
GPSM_JOBS=$(nproc) ./scripts/build.sh >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; echo "build_then: build failed"; exit 1; }
ln -sf ../tests/gpsm_gpu_tests build/bin/gpsm_gpu_tests
took=$(( $(date +%s) - t0 )); echo "build_then: built in $took s" | tee "$out/build-time.txt"
B=$PWD/build/bin BUDGET=$(( 585 - took )) OUT=$out "$@"
