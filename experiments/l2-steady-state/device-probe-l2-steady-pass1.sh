#!/usr/bin/env bash
# The step kernel in the loop's steady state without ncu's replay: ncu restores memory between the
# passes of a multi-pass profile, which leaves the L2 as cold as a flush (2026-11-22_ce12b60's
# 3-pass profiles read as many DRAM bytes as cold ones). Here each metric set is one pass:
# the duration alone, then the DRAM bytes alone. (The device image has no nsys, which could have
# timed the bench's own graph loop without serializing it.)
# Usage (device): OUT=dir experiments/l2-steady-state/device-probe-l2-steady-pass1.sh
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:?OUT}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CACHE=none
cases="256x256x64:1:infinite 256x256x96:1:infinite 256x256x128:1:infinite 256:1:infinite 256x256x128:2:infinite 256:2:infinite"
for app in heat3d wave3d; do
  for m in gpu__time_duration.sum dram__bytes_read.sum,dram__bytes_write.sum; do
    mkdir -p "$out/$m"
    OUT="$out/$m" METRICS=$m APP=$app CASES="$cases" experiments/l2-steady-state/device-probe-heat3d-box.sh
  done
done
