#!/usr/bin/env bash
# What stop 42 (2026-11-29, one H200 only) left for a multi-GPU machine, in one device call of at
# most ~560 s: the CG GPU tests on every GPU count (the reduction without the broadcast hop, the
# float-stored values and the host thread per GPU have run on one GPU at most), then the issue-29
# targets with the values as doubles and as floats, and Table 3.1's CPU-controlled runs with a
# host thread per GPU. Written, not run yet. Since stop 44 the values' default is the table
# (GPSM_CG_VALUES=auto: 1 byte an entry for Poisson), so the targets run f64, f32 and the default.
# t31k: the same set at the issue's 1000 iterations (t31's 200 took 80 s on 2xH200 at 0d7b47e);
# last, so a whole run reaches it only with budget left; owed_multi_gpu.sh CALL=2 picks table,t31k.
# Usage (binaries carried, or built on the device by experiments/build_then.sh):
#   B=<dir with gpsm, gpsm-nvshmem-cg, gpsm_gpu_tests> G=0,1[,2,3] OUT=... experiments/cg-sync/multi_gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm, gpsm-nvshmem-cg and gpsm_gpu_tests}" "${G:?G: the GPUs, e.g. 0,1}"
export GPSM_NVSHMEM_CG_WORKER=$B/gpsm-nvshmem-cg
NV=$(python3 -c 'import nvidia;print(list(nvidia.__path__)[0])' 2>/dev/null)  # the worker's NVSHMEM and NCCL
export LD_LIBRARY_PATH=$NV/nvshmem/lib:$NV/nccl/lib:${LD_LIBRARY_PATH:-}
P=cpu_free_std,cpu_free_pipe,gps,gps_pipe
n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-590}" \
  "tests:200:$B/gpsm_gpu_tests --gtest_filter='CgGpu.*'" \
  "f64:110:GPSM_CG_VALUES=f64 $B/gpsm bench --app cg --size poisson2d:512,poisson2d:2048 --gpus 1,$n --paradigm $P --reps 5 --json \$STEP_OUT/cg-f64.json" \
  "f32:110:GPSM_CG_VALUES=f32 $B/gpsm bench --app cg --size poisson2d:512,poisson2d:2048 --gpus 1,$n --paradigm $P --reps 5 --json \$STEP_OUT/cg-f32.json" \
  "table:110:$B/gpsm bench --app cg --size poisson2d:512,poisson2d:2048 --gpus 1,$n --paradigm $P --reps 5 --json \$STEP_OUT/cg-table.json" \
  "t31:120:GPSM_CG_HOST_THREADS=1 $B/gpsm bench --app cg --size table3.1:9-18 --iters 200 --gpus $n --paradigm cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe --reps 5 --json \$STEP_OUT/t31-threads.json" \
  "t31k:300:GPSM_CG_HOST_THREADS=1 $B/gpsm bench --app cg --size table3.1:9-18 --iters 1000 --gpus $n --paradigm cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe --reps 5 --json \$STEP_OUT/t31-threads-1000.json"
