#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: Nsight Compute on the 3D step kernel
# (host loop, `single`) and the persistent kernel (`cpu_free`) on one GPU, same problem, so their
# memory throughput, occupancy and stall reasons can be compared. Output: $OUT/ncu-3d.log.
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
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
# Bytes and instructions per launch (the persistent kernel's launch holds all 20 iterations)
for par in single cpu_free; do
  echo "== ncu metrics heat3d $size^3 $par (1 GPU, 20 iterations)"
  timeout 120 ncu -k regex:"step_kernel|cpu_free_kernel_impl" --launch-skip 1 --launch-count 1 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,gpu__time_duration.sum \
    ./build/bin/gpsm bench --app heat3d --gpus 1 --paradigm $par --size $size --iters 20 --reps 1 --warmup 1 2>&1 \
    | grep -E "dram__|lts__|l1tex__|smsp__|gpu__time"
done
