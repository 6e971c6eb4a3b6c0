#!/usr/bin/env bash
# Question (written 2026-11-29, not yet run): sssp's held row kernel is 1.11x single's on one GPU
# with nothing to publish (2521-2523 against 2267-2274 us at rmat:23, dde2891) although its gather
# loop is the same SASS; the difference is its store phase, staged per block behind a barrier
# (docs/graphs.md). warp_store.patch stores without the barrier: each warp its own 32 / lanes
# consecutive rows, lane k taking row k's result with one shuffle, a span per warp (ptxas sm_90:
# 32 registers, 12 bytes spilled, as the staged kernel). Prediction: held within 3 % of single on
# one GPU and gps within 5 % of p2p_inline on two at rmat:23; at rmat:20 (where staging beat one
# store per row thread) no worse than staged.
# warp / staged / warp (only graph_kernels.cu rebuilt), every run verified; GraphAppsGpu with the
# warp patch first. Held on one GPU needs sssp_held_1gpu.patch (GPSM_EXP_NO_SOLE), applied for the
# whole call and reverted at its end, as both patches are. The step limits (420 s in all) leave the
# revert its time inside a call that began with a fresh build: a patched object left behind would be
# newer than the next call's sources, and make would keep it.
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/warp_store_ab.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
# No patch is applied unless the revert fits (a left-over patched object would outlive the call).
[ "${BUDGET:-570}" -ge 420 ] || { echo "warp_store_ab: needs 420 s of budget, has ${BUDGET}; nothing run"; exit 1; }
P=experiments/gps-ratio
S="$B/gpsm bench --app sssp --reps 5"
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
runs() {  # runs TAG: held and single on one GPU, p2p_inline and gps on two
  echo "$S --size rmat:23 --gpus 1 --paradigm single --json \$STEP_OUT/$1-single.json; GPSM_EXP_NO_SOLE=1 $S --size rmat:23 --gpus 1 --paradigm gps --json \$STEP_OUT/$1-held.json; $S --size rmat:20,rmat:23 --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/$1-2gpu.json"
}
steps=(
  "warp1:140:git apply $P/sssp_held_1gpu.patch && git apply $P/warp_store.patch && $rebuild && $B/gpsm_gpu_tests --gtest_filter='GraphAppsGpu.*' --gtest_output=xml:\$STEP_OUT/gpu-tests-graph-warp.xml && $(runs warp1)"
  "staged:120:git apply -R $P/warp_store.patch && $rebuild && $(runs staged)"
  "warp2:100:git apply $P/warp_store.patch && $rebuild && $(runs warp2)"
  "revert:60:git apply -R $P/warp_store.patch; git apply -R $P/sssp_held_1gpu.patch; $rebuild"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
