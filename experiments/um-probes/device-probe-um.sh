#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: what sets jacobi2d's time under Unified
# Memory (gpsm sim's um model). Output: $OUT/um-probe.log, $OUT/um-*.json.
#  1. The driver's thrashing parameters (nvidia_uvm module): a page pins only after migrations that
#     follow each other within uvm_perf_thrashing_lapse_usec (docs/sim.md "UM thrashing").
#  2. jacobi2d um and um_hints on 2 GPUs at 8192^2, 11584^2 and 16384^2 in one run: the sizes put a
#     boundary page's migrations (one every 2 iterations) under, near and over the lapse.
#  3. Nsight Compute on one GPU, 16384^2: the whole-grid scalar sweep um runs beside memcpy's
#     float4 sweep (time at the GPU's clocks, DRAM / L2 / L1 traffic, instructions, occupancy,
#     warp stall reasons), to say what bounds the scalar sweep.
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/um-probe.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
rc=0
{
  echo "== nvidia_uvm thrashing and prefetch parameters"
  for f in /sys/module/nvidia_uvm/parameters/uvm_perf_thrashing_* /sys/module/nvidia_uvm/parameters/uvm_perf_prefetch_*; do
    [ -r "$f" ] && echo "$(basename "$f") = $(cat "$f")"
  done
  cat /sys/module/nvidia/version 2>/dev/null | sed 's/^/nvidia driver /'
} >>"$log"
gpus=$(nvidia-smi -L | wc -l)
if [ "$gpus" -ge 2 ]; then
  echo "== bench jacobi2d um / um_hints, 2 GPUs, 8192 11584 16384" >>"$log"
  timeout 300 ./build/bin/gpsm bench --app jacobi2d --size 8192,11584,16384 --gpus 2 --paradigm um,um_hints \
    --iters 200 --reps 5 --json "$out/um-bench-2gpu.json" >>"$log" 2>&1 || rc=1
fi
echo "== bench jacobi2d single / um / um_hints, 1 GPU, 16384" >>"$log"
timeout 120 ./build/bin/gpsm bench --app jacobi2d --size 16384 --gpus 1 --paradigm single,um,um_hints \
  --iters 200 --reps 5 --json "$out/um-bench-1gpu.json" >>"$log" 2>&1 || rc=1
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__grid_size
for par in single um; do
  echo "== ncu jacobi2d 16384 $par (1 GPU, launches 3-4, boost clocks, warm caches)" >>"$log"
  timeout 150 ncu -k 'regex:sweep_kernel' --clock-control none --cache-control none --launch-skip 2 --launch-count 2 \
    --metrics "$metrics" --section WarpStateStats \
    ./build/bin/gpsm bench --app jacobi2d --size 16384 --gpus 1 --paradigm $par --iters 4 --reps 1 --warmup 0 >/tmp/ncu-um.out 2>&1 || rc=1
  grep -vE '^\s*$|^==PROF==|progress|^gpsm bench: \[' /tmp/ncu-um.out |
    grep -E "sweep_kernel|dram__|lts__|l1tex__|smsp__|sm__|launch__|gpu__time|Stall|Warp Cycles|Issued" >>"$log"
done
cat "$log"
exit $rc
