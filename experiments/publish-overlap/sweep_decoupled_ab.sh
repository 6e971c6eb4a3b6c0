#!/usr/bin/env bash
# Questions (2026-11-29, 2xH200): (1) a second sweeper design, merged from branch sweep
# (GPSM_COMBINE_SWEEP, gpsm publish --mode combine_sweep: release-ordered dirty bits, a sweeper on
# the agent stream sending combine's packed records during the kernel, chained records merged
# newest first at the fence) -- does it beat combine on random 4-byte stores, where the first
# prototype (this folder's README) lost? Prediction (its author's): random 1.078 -> 0.85-0.95 ms;
# the README's profile predicts a loss (the sweeps reread lines against HBM-bound stores, the
# fence's merge does not shrink). (2) decoupled: do the unrolled pushes (push_dirty, 2 units per
# round in the user's kernel, 8 in the persistent agent) and skipping the count where nothing was
# learned bring decoupled coalesced from 3.93 ms toward combine's 0.96, and random/strided to
# combine's? Prediction: coalesced ~1.5-2.5 ms inline agent; random/strided = combine within 2 %.
# Also experiments/gps-ratio/async_fence_ab.sh, and the GPU tests (all but CgGpu, then CG's gps ones).
# Usage on a device: G=0,1 OUT=$OUT experiments/build_then.sh experiments/publish-overlap/sweep_decoupled_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests (build_then.sh sets it)}"
dev=${G:-0,1}
P="$B/gpsm publish --devices $dev"
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-560}" \
  "pub1:60:$P --mode all --json \$STEP_OUT/publish-all-1.json" \
  "persistent:40:GPSM_DECOUPLED_AGENT=persistent $P --mode inline,combine,decoupled --json \$STEP_OUT/publish-persistent.json" \
  "blocks1:40:GPSM_SWEEP_BLOCKS=1 $P --pattern random,strided --mode inline,combine,combine_sweep --json \$STEP_OUT/publish-sweep1.json" \
  "blocks4:40:GPSM_SWEEP_BLOCKS=4 $P --pattern random,strided --mode inline,combine,combine_sweep --json \$STEP_OUT/publish-sweep4.json" \
  "asyncfence:90:OUT=\$STEP_OUT/asyncfence B=$B G=$dev bash experiments/gps-ratio/async_fence_ab.sh" \
  "pub2:60:$P --mode all --json \$STEP_OUT/publish-all-2.json" \
  "tests:240:$B/gpsm_gpu_tests --gtest_filter='-CgGpu.*' --gtest_output=xml:\$STEP_OUT/gpu-tests.xml" \
  "cgtests:150:$B/gpsm_gpu_tests --gtest_filter='CgGpu.Gps*:CgGpu.PoissonUneven*:CgGpu.SeveralRows*' --gtest_output=xml:\$STEP_OUT/gpu-tests-cg.xml"
