#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: Nsight Compute on the 3D step kernel
# (host loop, `single`) and the persistent kernel (`cpu_free`) on one GPU, same problem, so their
# memory throughput, occupancy and stall reasons can be compared. Output: $OUT/ncu-3d.log.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
size=${1:-256}
for app in heat3d wave3d; do
  for par in single cpu_free; do
    echo "== ncu $app $size^3 $par (1 GPU)"
    timeout 120 ncu -k regex:"step_kernel|cpu_free_kernel_impl" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      ./build/bin/gpsm bench --app $app --gpus 1 --paradigm $par --size $size --iters 20 --reps 1 --warmup 1 2>&1 \
      | grep -vE '^\s*$|^==PROF==|progress' | tail -120
  done
done
