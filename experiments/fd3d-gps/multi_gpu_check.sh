#!/usr/bin/env bash
# Question: does fd3d's gps paradigm (stop 44, one H200 only when written) compute the reference's
# bits on 2 and 4 GPUs through its multi-GPU paths (tracking by the checked step, the hand-written
# step with Array::publish_box_async of the published planes, the per-item tile kernel along x),
# and how does it compare with the best hand-written paradigm (issue 28's fd3d row)? One device
# call of at most ~590 s. The z step ran on 2xH200 at 7877357 (results/nvidia-h200-x2/2026-11-29_7877357_owed-call1).
# rdl: does launching rdl's items near a halo in the picking kernel and the rest in the plain one
# (GPSM_FD3D_RDL_LAUNCH=split) recover the 11 % rdl ran over `infinite` at 512^3:h16 and 768^3:h16
# along z on 2 GPUs? one/split interleaved twice (A B A B), every run verified. Not run yet.
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
  "xy:150:$B/gpsm bench --app fd3d --size 512:h4:xy --gpus $n --paradigm $P --reps 5 --json \$STEP_OUT/fd3d-xy.json" \
  "rdl:150:i=0; for L in one split one split; do i=\$((i+1)); GPSM_FD3D_RDL_LAUNCH=\$L $B/gpsm bench --app fd3d --size 512:h4:z,512:h16:z,768:h16:z,512:h4:xy --gpus $n --paradigm rdl,infinite --reps 5 --json \$STEP_OUT/fd3d-rdl-\$i-\$L.json; done"
