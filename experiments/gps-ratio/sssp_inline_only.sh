#!/usr/bin/env bash
# Question (2026-11-29): sssp rmat:23's gps kind ("held": every page here, stores through the view,
# staged per block) ran 2610-2625 us per iteration on ONE GPU with nothing to publish (sole forced
# off, sssp_held_1gpu.patch) against single's 2290-2322 (results .../2026-11-29_3003e5d_x2-probes):
# the kernel itself costs 13-15 %, not the links. ptxas (sm_90): the held kernel carries every
# publish mode's store path (combine's dirty marks, decoupled's count and inline-agent push):
# 1684 PTX lines, 8-12 bytes spilled at the 32-register bound; with only the inline path compiled
# (inline_only.patch: GPSM_EXP_INLINE_ONLY in graph_kernels.cu) 808 lines and no spill. Is that
# the 14 %? Steps:
#   fence: the fence GPU tests and heat3d/wave3d 256^3 with the new default (auto: events on 2
#     GPUs) against GPSM_ASYNC_FENCE=kernel; pagerank and sssp at 2 GPUs, both fences.
#   ncu: one sssp row-kernel launch, single against held (1 GPU), warm caches, the GPU's clocks.
#   inl: held and single on 1 GPU, p2p_inline and gps on 2, with the inline-only build (only
#     graph_kernels.cu recompiled: view.hpp's hook is inert without the define, so its mtime is
#     put back and make leaves the other files alone). Patches reverted, graph files rebuilt.
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/sssp_inline_only.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
P=experiments/gps-ratio
S="$B/gpsm bench --app sssp --size rmat:23 --reps 5"
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
keep='t=$(stat -c %Y include/gpsm/gps/view.hpp)'
back='touch -d @$t include/gpsm/gps/view.hpp'
ncu_args="ncu --kernel-name 'regex:sssp_held_kernel|sssp_kernel' --launch-skip 4 --launch-count 1 --cache-control none --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats"
steps=(
  "fencetests:60:$B/gpsm_gpu_tests --gtest_filter='*Fence*' --gtest_output=xml:\$STEP_OUT/gpu-tests-fence.xml"
  "fence3d:80:i=0; for f in auto kernel kernel auto; do i=\$((i+1)); for app in heat3d wave3d; do GPSM_ASYNC_FENCE=\$f $B/gpsm bench --app \$app --size 256 --gpus 2 --reps 5 --paradigm um_hints,p2p_inline,gps --json \$STEP_OUT/\$app-\$i-\$f.json; done; done"
  "fencegraph:120:for f in auto kernel; do for app in pagerank sssp; do GPSM_ASYNC_FENCE=\$f $B/gpsm bench --app \$app --size rmat:20,rmat:23 --gpus 2 --reps 5 --paradigm p2p_inline,gps --json \$STEP_OUT/\$app-\$f.json; done; done"
  "ncu:150:git apply $P/sssp_held_1gpu.patch && $rebuild && $ncu_args $B/gpsm bench --app sssp --size rmat:23 --gpus 1 --paradigm single --reps 1 > \$STEP_OUT/ncu-single.log 2>&1; GPSM_EXP_NO_SOLE=1 $ncu_args $B/gpsm bench --app sssp --size rmat:23 --gpus 1 --paradigm gps --reps 1 > \$STEP_OUT/ncu-held.log 2>&1; echo ncu done"
  "inl:200:$keep && git apply $P/inline_only.patch && $back && $rebuild && for k in a b; do $S --gpus 1 --paradigm single,gps --json \$STEP_OUT/inl1-sole-\$k.json; GPSM_EXP_NO_SOLE=1 $S --gpus 1 --paradigm gps --json \$STEP_OUT/inl1-held-\$k.json; done; $S --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/inl2.json; $keep; git apply -R $P/inline_only.patch; $back; git apply -R $P/sssp_held_1gpu.patch; $rebuild"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
