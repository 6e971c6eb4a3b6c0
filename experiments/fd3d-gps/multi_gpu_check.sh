#!/usr/bin/env bash
# Question: does fd3d's gps paradigm (stop 44, one H200 only when written) compute the reference's
# bits on 2 and 4 GPUs through its multi-GPU paths (tracking by the checked step, the hand-written
# step with Array::publish_box_async of the published planes, the per-item tile kernel along x),
# and how does it compare with the best hand-written paradigm (issue 28's fd3d row)? One device
# call of at most ~590 s. Written, not run yet.
# Usage (binaries built here, carried):
#   B=<dir with gpsm, gpsm_gpu_tests> G=0,1[,2,3] OUT=... experiments/fd3d-gps/multi_gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests}" "${G:?G: the GPUs, e.g. 0,1}"
n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
P=memcpy,p2p_inline,rdl,gps,infinite
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-590}" \
  "tests:150:$B/gpsm_gpu_tests --gtest_filter='Fd3dGpu.*:GpsPublishBox.*'" \
  "memcheck:60:compute-sanitizer --tool memcheck --report-api-errors no $B/gpsm_gpu_tests --gtest_filter='GpsPublishBox.*:Fd3dGpu.GpsWithEachStepForced*'" \
  "z:150:$B/gpsm bench --app fd3d --size 512:h4:z,768:h16:z,512:h16:z --gpus 1,$n --paradigm single,$P --reps 5 --json \$STEP_OUT/fd3d-z.json" \
  "items:60:GPSM_FD3D_GPS_STEP=items $B/gpsm bench --app fd3d --size 512:h4:z,768:h16:z --gpus $n --paradigm gps --reps 5 --json \$STEP_OUT/fd3d-z-items.json" \
  "xy:150:$B/gpsm bench --app fd3d --size 512:h4:xy --gpus $n --paradigm $P --reps 5 --json \$STEP_OUT/fd3d-xy.json"
