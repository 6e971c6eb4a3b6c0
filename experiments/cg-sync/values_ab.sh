#!/usr/bin/env bash
# Stop 43's second one-GPU call: does the matrix value type as a kernel template argument (no
# per-entry select) make the float-stored values pay, and did the doubles get their speed back?
# Base binaries B0 (cd8582d: the select in matrix_value) against B1 (this tree), interleaved in
# two rounds on the 2- and 4-GPU shares of 2048²; then 2048² itself, and the small sizes under the
# per-variant rows-a-thread rule (E), both value types.
# Usage: B0=<base bin dir> B1=<new bin dir> OUT=... experiments/cg-sync/values_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B0:?B0: base binaries}" "${B1:?B1: new binaries}"
P=cpu_free_std,cpu_free_pipe,gps,gps_pipe
S="--app cg --size poisson2d:2048x512,poisson2d:2048x1024 --gpus 1 --paradigm $P,single --reps 5"
Q="--app cg --size poisson2d:256,poisson2d:512,poisson2d:512x256,poisson2d:512x128 --gpus 1 --paradigm $P --reps 5"
F="--app cg --size poisson2d:2048 --gpus 1 --paradigm $P,single --reps 5"
steps=("tests:120:GPSM_NVSHMEM_CG_WORKER=$B1/gpsm-nvshmem-cg $B1/gpsm_gpu_tests --gtest_filter='CgGpu.*'")
for round in a b; do
  steps+=("base64$round:60:GPSM_CG_VALUES=f64 $B0/gpsm bench $S --json \$STEP_OUT/base-f64-$round.json"
          "new64$round:60:GPSM_CG_VALUES=f64 $B1/gpsm bench $S --json \$STEP_OUT/new-f64-$round.json"
          "new32$round:60:GPSM_CG_VALUES=f32 $B1/gpsm bench $S --json \$STEP_OUT/new-f32-$round.json")
done
steps+=("small64:30:GPSM_CG_VALUES=f64 $B1/gpsm bench $Q --json \$STEP_OUT/small-f64.json"
        "small32:30:GPSM_CG_VALUES=f32 $B1/gpsm bench $Q --json \$STEP_OUT/small-f32.json"
        "full32:80:GPSM_CG_VALUES=f32 $B1/gpsm bench $F --json \$STEP_OUT/full-f32.json"
        "full64:80:GPSM_CG_VALUES=f64 $B1/gpsm bench $F --json \$STEP_OUT/full-f64.json")
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget 570 "${steps[@]}"
