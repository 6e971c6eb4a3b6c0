#!/usr/bin/env bash
# Questions (2026-11-29, one x2 call after stop 53):
#  1. Do the GPU tests pass on 2 GPUs after e83299a (the inline agent's push back to serial) and
#     the sweep's revert? And Jacobi's gps at 2 GPUs against cpu_free (the 4-GPU regression's cause).
#  2. heat3d / wave3d 256^3 on 2 GPUs, gps ~30 us against um_hints' ~27: would a GPS pull (pages a
#     GPU only reads, mapped to their home's memory, read remotely by the plain march) close it?
#     fd3d's rdl is exactly that march over one distributed range: at 256^3 (h2, h4), does it beat
#     the pushing paradigms (p2p_inline) and the copies (memcpy, gps)? Prediction if the pull is the
#     lead: rdl <= 0.93 x p2p_inline there.
#  3. sssp rmat:23, gps 1.09-1.16 x p2p_inline on 2 GPUs: is it the held kernel itself? Its kind on
#     ONE GPU (sole forced off: sssp_held_1gpu.patch, GPSM_EXP_NO_SOLE) against single; and on 2
#     GPUs with the held kernel's launch bound removed (sssp_held_unbounded.patch: 40 registers,
#     6 blocks per SM, no spill) against the bounded one and p2p_inline.
#  4. async_fence_ab.sh (the barrier kernel against events on 2 GPUs) with what is left.
# Patched builds are reverted and rebuilt at the end of their step (make would keep their objects).
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/x2_probes.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
G=${G:-0,1}
S="$B/gpsm bench --app sssp --size rmat:23 --reps 5"
P=experiments/gps-ratio
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
steps=(
  "tests:200:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml"
  "jacobi:60:$B/gpsm bench --app jacobi2d --size 4096 --gpus 2 --paradigm cpu_free,p2p_inline,gps --reps 5 --json \$STEP_OUT/jacobi.json"
  "fd3dpull:90:$B/gpsm bench --app fd3d --size 256:h2:z,256:h4:z --gpus 2 --paradigm memcpy,p2p_inline,rdl,gps,infinite --reps 5 --json \$STEP_OUT/fd3d-256.json"
  "heat:60:$B/gpsm bench --app heat3d --size 256 --gpus 2 --paradigm um_hints,rdl,p2p_inline,gps --reps 5 --isolate --json \$STEP_OUT/heat-256.json"
  "sssp1:150:git apply $P/sssp_held_1gpu.patch && $rebuild && for k in a b; do $S --gpus 1 --paradigm single,gps --json \$STEP_OUT/sssp1-sole-\$k.json; GPSM_EXP_NO_SOLE=1 $S --gpus 1 --paradigm gps --json \$STEP_OUT/sssp1-held-\$k.json; done; git apply -R $P/sssp_held_1gpu.patch; $rebuild"
  "sssp2:150:$S --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/sssp2-bounded.json && git apply $P/sssp_held_unbounded.patch && $rebuild && $S --gpus 2 --paradigm p2p_inline,gps --json \$STEP_OUT/sssp2-unbounded.json; git apply -R $P/sssp_held_unbounded.patch; $rebuild"
  "fence:150:B=$B G=$G OUT=\$STEP_OUT/fence bash $P/async_fence_ab.sh"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
