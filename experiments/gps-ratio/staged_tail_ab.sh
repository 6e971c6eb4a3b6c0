#!/usr/bin/env bash
# Question (2026-11-29): sssp's staged row store (gps and held kinds) read its span's mask and the
# old distance after the block barrier: two dependent round trips on every block's tail, which
# Nsight Compute put at 2.56 ms against single's 2.35 on one H200 (held kind, nothing to publish;
# sssp_inline_only.sh). The finishing threads now issue both before the barrier. Does held on one
# GPU come to single's time, and gps to p2p_inline's on two? Prediction: held within 3 % of single
# (was 1.13-1.15x), gps at rmat:23 on 2 GPUs within 5 % of p2p_inline (was 1.11-1.12x).
# new / old (staged_tail_old.patch puts back the previous graph_kernels.cu; only that file is
# rebuilt) / new, every run verified; GraphAppsGpu tests first. Held on one GPU needs
# sssp_held_1gpu.patch (GPSM_EXP_NO_SOLE), applied for the whole call and reverted at its end.
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/staged_tail_ab.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
P=experiments/gps-ratio
S="$B/gpsm bench --app sssp --size rmat:23 --reps 5"
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
runs() {  # runs TAG: held and single on one GPU, p2p_inline and gps on two
  echo "$S --gpus 1 --paradigm single,gps --json \$STEP_OUT/$1-1gpu.json; GPSM_EXP_NO_SOLE=1 $S --gpus 1 --paradigm gps --json \$STEP_OUT/$1-held.json; $S --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/$1-2gpu.json"
}
steps=(
  "tests:90:$B/gpsm_gpu_tests --gtest_filter='GraphAppsGpu.*' --gtest_output=xml:\$STEP_OUT/gpu-tests-graph.xml"
  "new1:100:git apply $P/sssp_held_1gpu.patch && $rebuild && $(runs new1)"
  "old:160:git apply $P/staged_tail_old.patch && $rebuild && $(runs old); git apply -R $P/staged_tail_old.patch && $rebuild"
  "new2:100:$(runs new2)"
  "revert:60:git apply -R $P/sssp_held_1gpu.patch; $rebuild"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
