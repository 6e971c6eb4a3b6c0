#!/usr/bin/env bash
# Question (written 2026-11-30, not yet run): Nsight Compute on 2xH200 (results/nvidia-h200-x2/
# 2026-11-30_28db8e2_tests-umlead-sssp-ncu) put 32.0 of the held row kernel's 51.9 cycles between
# issues at a CTA barrier: the staged store waits for the block's slowest row (rmat degrees are
# skewed; 16 rows a block at 16 lanes a row), while p2p_inline's kernel waits on L1TEX. Storing
# per warp instead (no barrier) was slower (2-row spans: 4x the link bytes; ..._sssp-warp-store).
# Does a 128-thread block (8 rows: half the rows to wait for, the span still a whole 32-byte
# sector) bring sssp rmat:23's gps on 2 GPUs within 5 % of p2p_inline (1.088x at 28db8e2)?
# Prediction: the held kernel on one GPU 5-8 % faster, gps on 2 GPUs at 1.03-1.06x.
# 128 / 256 / 128 (held_block128.patch; only graph_kernels.cu rebuilt), every run verified;
# GraphAppsGpu with the patch first. Held on one GPU needs sssp_held_1gpu.patch (GPSM_EXP_NO_SOLE);
# both patches are reverted at the end (a patched object left behind would outlive the call).
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/held_block128_ab.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
[ "${BUDGET:-570}" -ge 400 ] || { echo "held_block128_ab: needs 400 s of budget, has ${BUDGET}; nothing run"; exit 1; }
P=experiments/gps-ratio
S="$B/gpsm bench --app sssp --reps 5"
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
runs() {  # runs TAG: held and single on one GPU, p2p_inline and gps on two
  echo "$S --size rmat:23 --gpus 1 --paradigm single --json \$STEP_OUT/$1-single.json; GPSM_EXP_NO_SOLE=1 $S --size rmat:23 --gpus 1 --paradigm gps --json \$STEP_OUT/$1-held.json; $S --size rmat:20,rmat:23 --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/$1-2gpu.json"
}
steps=(
  "b128a:140:git apply $P/sssp_held_1gpu.patch && git apply $P/held_block128.patch && $rebuild && $B/gpsm_gpu_tests --gtest_filter='GraphAppsGpu.*' --gtest_output=xml:\$STEP_OUT/gpu-tests-graph-128.xml && $(runs b128a)"
  "b256:110:git apply -R $P/held_block128.patch && $rebuild && $(runs b256)"
  "b128b:100:git apply $P/held_block128.patch && $rebuild && $(runs b128b)"
  "revert:50:git apply -R $P/held_block128.patch; git apply -R $P/sssp_held_1gpu.patch; $rebuild"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
