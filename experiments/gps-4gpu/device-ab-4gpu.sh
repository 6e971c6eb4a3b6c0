#!/usr/bin/env bash
# Question: on 4xH200, does fence_async as a barrier kernel (GPSM_ASYNC_FENCE=kernel, the default
# since f8cd214) and the filter's gps graph bring the 4-GPU gps cells back from b73a08d's
# regression (heat3d 256^3 68.58 us, wave3d 80.30, filter 4096^2 64.54, against 21.63 for heat3d
# at b72b81a before the host split)? Prediction: if the cost was the graph's cross-GPU edges (each
# forked step's two kernels depending on 6 nodes of other GPUs), kernel < events ~ b73a08d;
# if it was host launch rate, graph < stream and the fence choice matters little.
#
# Runs on an nvidia-h200-x4 machine from the repository root, with two gpsm binaries built here
# and carried: NEW (this commit) and OLD (b73a08d), e.g. packed as .cmpx/x4.tar.xz holding
# .cmpbin/gpsm, .cmpbin/gpsm_gpu_tests and .cmpold/gpsm (xz -9e: ~9 MB for all three).
# Usage: NEW=.cmpbin/gpsm OLD=.cmpold/gpsm TESTS=.cmpbin/gpsm_gpu_tests COMMIT=<sha> \
#          bash experiments/gps-4gpu/device-ab-4gpu.sh     (results under $OUT)
set -u
cd "$(dirname "$0")/../.."
export N=${NEW:?} O=${OLD:?} R="--reps 5"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
GPSM_COMMIT=${COMMIT:-unknown} bash scripts/device-batch.sh --budget 580 \
 "tests:90:${TESTS:?} --gtest_filter='MultiGpuGraph*:BothFences/*:GpsFenceAsync.*:Stencil3DGpu.*Every*:FilterGpu.*:ProactGpu.*4Gpus' 2>&1 | grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) *\]|Failure|error'" \
 "ab3d:200:for a in heat3d wave3d; do for b in O N; do eval G=\\\$\$b; \$G bench --app \$a --size 256,512 --gpus 2,4 --paradigm um_hints,p2p_inline,gps \$R --json \$STEP_OUT/\$a-\$b.json; done; GPSM_ASYNC_FENCE=events \$N bench --app \$a --size 256 --gpus 4 --paradigm gps \$R --json \$STEP_OUT/\$a-events.json; GPSM_HOST_LOOP=stream \$N bench --app \$a --size 256 --gpus 4 --paradigm gps \$R --json \$STEP_OUT/\$a-stream.json; done" \
 "abf:120:for b in O N; do eval G=\\\$\$b; \$G bench --app filter --size 4096x4096:k5 --gpus 2,4 --paradigm rdl,p2p_inline,gps \$R --json \$STEP_OUT/filter-\$b.json; done" \
 "graph:100:for a in pagerank sssp; do \$N bench --app \$a --size rmat:20 --gpus 2,4 --paradigm p2p_inline,gps \$R --json \$STEP_OUT/\$a-N.json; done" \
 "cg:100:\$N bench --app cg --size poisson2d:2048 --gpus 4 --paradigm cpu_free_std,cpu_free_pipe,gps,gps_pipe \$R --json \$STEP_OUT/cg-2048-4.json"
