#!/usr/bin/env bash
# Question: heat3d / wave3d's gps step on several GPUs is two kernels per GPU per iteration (the
# published items on a side stream, the plain ones on the run's stream, forked and joined in the
# CUDA graph before the fence); the hand-written steps are one. At 256^3 on 2xH200 gps ran
# 30.4-31.3 us (35 in some runs) against um_hints' 26.6-28.8 and p2p_inline's 28.2-32.2, with
# p2p_inline's bytes. Does one kernel (GPSM_3D_GPS_LAUNCH=one: published items first, through a
# __noinline__ function so the plain items keep the plain kernel's 48 registers; ptxas sm_90:
# 8/12 bytes spilled in the kernel, outside the march, the published function 84-252 bytes)
# close it? Prediction: the fork, join and second launch cost ~1-3 us an iteration: heat3d 256^3
# on 2 GPUs ~31 -> ~28-30 us; 512^3 within noise. Written 2026-11-29, not run (no device time).
# Same binary, two / one / one / two per command, every run verified; first the GPU test of the
# one-kernel path. If one wins on every cell: make it the default (stencil3d_gps_launch.hpp).
# Usage on a device: G=0,1 OUT=$OUT experiments/build_then.sh experiments/gps-ratio/one_launch_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests (build_then.sh sets it)}"
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
S="--gpus $n --reps 5 --paradigm um_hints,p2p_inline,gps"
ab=()
i=0
for l in two one one two; do
  i=$((i + 1))
  ab+=("heat$i-$l:60:GPSM_3D_GPS_LAUNCH=$l $B/gpsm bench --app heat3d --size 256,512 $S --json \$STEP_OUT/heat3d-$i-$l.json")
  ab+=("wave$i-$l:60:GPSM_3D_GPS_LAUNCH=$l $B/gpsm bench --app wave3d --size 256,512 $S --json \$STEP_OUT/wave3d-$i-$l.json")
done
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-560}" \
  "tests:150:$B/gpsm_gpu_tests --gtest_filter='Stencil3DGpu.GpsOneLaunch*' --gtest_output=xml:\$STEP_OUT/one-test.xml" \
  "${ab[@]}"
