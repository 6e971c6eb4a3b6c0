#!/usr/bin/env bash
# Question: split along x or y, rdl's tiles near a remote face loaded their apron across the link in
# the plane that uses it, just before the block's barrier, so every plane step waited a link
# latency (fd3d_plan.hpp's kRemoteApronStep: 1.55x per plane step on 2xH200, h4). Does loading
# the apron a plane ahead (fd3d_block.hpp: Queue::ap, fill_tile) hide it, at no cost elsewhere?
#   probe-dev   one GPU, rdl_pick_probe base (BASE_DIR: the kernels before) vs this tree, the
#               neighbours' blocks in GPU memory: the kernels' own cost (no link), x and y, h4-h16
#   probe-host  the same with the neighbours' blocks in mapped host memory (PROBE_REMOTE=host):
#               loads with microseconds of latency, a link's latency on one GPU
#   bench, tests (2+ GPUs, G=0,1[,...]): gpsm bench fd3d split along x and y, rdl against memcpy,
#               p2p_inline and infinite, every run verified; Fd3dGpu.* on every GPU
# Usage on a device: [G=0,1] BASE_DIR=.probe-base OUT=$OUT experiments/build_then.sh experiments/fd3d-gps/apron_ahead.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests (build_then.sh sets it)}"
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
dev=x:512:4:2:0,y:512:4:2:0,x:512:8:2:0,y:512:8:2:0,x:512:16:2:0,y:512:16:2:0,x:512:4:4:1,y:512:4:4:1,x:768:16:2:0
host=x:512:4:2:0,y:512:4:2:0,x:512:16:2:0
steps=("probe-dev:160:PROBE_ONLY=$dev OUT=\$STEP_OUT/dev BUDGET=150 bash experiments/fd3d-gps/rdl_pick_probe.sh"
       "probe-host:120:PROBE_REMOTE=host PROBE_ONLY=$host OUT=\$STEP_OUT/host BUDGET=110 bash experiments/fd3d-gps/rdl_pick_probe.sh")
if [ "$n" -ge 2 ]; then
  steps=("bench:120:$B/gpsm bench --app fd3d --size 512:h4:xy,512:h16:xy --gpus $n --paradigm memcpy,p2p_inline,rdl,infinite --reps 5 --json \$STEP_OUT/fd3d-xy.json"
         "tests:100:$B/gpsm_gpu_tests --gtest_filter='Fd3dGpu.*'" "${steps[@]}")
fi  # on one GPU the probe's bit-for-bit check is the rdl test (Fd3dGpu's rdl cases need 2 GPUs)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-560}" "${steps[@]}"
