#!/usr/bin/env bash
# One-GPU checks of stop 43 (2026-11-29, one H200 lent again), one device call of at most ~560 s:
# the CG GPU tests on one GPU (the float-stored values and the host thread per GPU had never run),
# the values as doubles against floats, interleaved in two rounds, on the 2- and 4-GPU shares of
# 2048² (the targets' one-GPU proxies), and rows a thread (E) forced to 1, 2 and 4 at the small
# sizes where the rule's E was never swept against the shares of 512² on 2 and 4 GPUs.
# Usage: B=<dir with gpsm, gpsm-nvshmem-cg, gpsm_gpu_tests> OUT=... experiments/cg-sync/one_gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm, gpsm-nvshmem-cg and gpsm_gpu_tests}"
export GPSM_NVSHMEM_CG_WORKER=$B/gpsm-nvshmem-cg
P=cpu_free_std,cpu_free_pipe,gps,gps_pipe
V="$B/gpsm bench --app cg --size poisson2d:2048x512,poisson2d:2048x1024 --gpus 1 --paradigm $P,single --reps 5"
E="$B/gpsm bench --app cg --size poisson2d:256,poisson2d:512,poisson2d:512x256,poisson2d:512x128 --gpus 1 --paradigm $P --reps 5"
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget 560 \
  "tests:170:$B/gpsm_gpu_tests --gtest_filter='CgGpu.*'" \
  "f64a:70:GPSM_CG_VALUES=f64 $V --json \$STEP_OUT/values-f64-a.json" \
  "f32a:70:GPSM_CG_VALUES=f32 $V --json \$STEP_OUT/values-f32-a.json" \
  "f64b:70:GPSM_CG_VALUES=f64 $V --json \$STEP_OUT/values-f64-b.json" \
  "f32b:70:GPSM_CG_VALUES=f32 $V --json \$STEP_OUT/values-f32-b.json" \
  "e1:35:GPSM_CG_ROWS_PER_THREAD=1 $E --json \$STEP_OUT/e1.json" \
  "e2:35:GPSM_CG_ROWS_PER_THREAD=2 $E --json \$STEP_OUT/e2.json" \
  "e4:35:GPSM_CG_ROWS_PER_THREAD=4 $E --json \$STEP_OUT/e4.json"
