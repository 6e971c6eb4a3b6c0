#!/usr/bin/env bash
# What the L2 keeps between a 3D app's iterations (docs/sim.md, "The L2 between iterations"): the
# step kernel under Nsight Compute in the loop's steady state (no cache flush, the GPU's own
# clocks) beside the bench loops, for the one-GPU boxes 256x256xN and the 2-GPU runs whose GPUs
# each own 64 or 128 planes. Prediction (cold ncu, 2026-11-22_18d19aa: a cold kernel leaves about
# 20 MB of its writes dirty in the L2): while a GPU's in + out boxes fit the 50-MB L2 (64 planes:
# 2 x 16.8 MB) the loads hit and little is written back, so DRAM bytes per step fall well below
# the cold kernel's (16.9 MB read); from 128 planes on every store is written back in the step
# (cold x128 13.8 MB written, steady about 33.6) and the loads miss as cold.
# Its ncu metric set takes 3 passes, and ncu restores memory between passes: those profiles come
# out as cold as flushed ones (2026-11-22_ce12b60_l2-steady). The bench loops are its result;
# device-probe-l2-steady-pass1.sh profiles the steady state one pass at a time.
# Usage (device): OUT=dir experiments/l2-steady-state/device-probe-l2-steady.sh
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:?OUT}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpus.csv" 2>&1
export CACHE=none METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
cases="256x256x64:1:infinite 256x256x96:1:infinite 256x256x128:1:infinite 256:1:infinite 256x256x128:2:infinite 256:2:infinite"
for app in heat3d wave3d; do
  APP=$app CASES="$cases" experiments/l2-steady-state/device-probe-heat3d-box.sh
  build/bin/gpsm bench --app $app --size 256x256x64,256x256x96,256x256x128,256 --gpus 1 --paradigm infinite \
    --json "$out/bench-$app-box.json" >"$out/bench-$app-box.log" 2>&1
  grep -E "^ *(infinite|memcpy|rdl|p2p_inline) " "$out/bench-$app-box.log"
  build/bin/gpsm bench --app $app --size 256x256x128,256 --gpus 2 --paradigm infinite,p2p_inline,rdl,memcpy \
    --json "$out/bench-$app-2gpu.json" >"$out/bench-$app-2gpu.log" 2>&1
  grep -E "^ *(infinite|memcpy|rdl|p2p_inline) |^[a-z0-9]+ [0-9x]+:" "$out/bench-$app-2gpu.log"
done
