#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: does the UM driver serve several GPUs'
# demand migrations side by side, or one after another (gpsm sim's um model)? Output: $OUT/um-node.log, $OUT/um-node.json (gpsm.results).
#
# Prediction, written before the run (from wave3d 512^3 um on 4xH200: 773 us over um_hints an
# iteration on 2 GPUs for 8.4 MB migrated, 2244 us on 4 GPUs for 25.2 MB, i.e. 10.9 and 11.2 GB/s
# for the node, where scope's um_fault moves one pair's 1 GiB at 10.5-12.3 GB/s):
#  - um_fault_all's aggregate rate at large sizes (64 MiB .. 1 GiB a GPU) stays within 20 % of the
#    1-GPU series' for 2, 3 and 4 GPUs at once: one migration stream for the node, not one per GPU;
#  - at 64 KiB a GPU the k-GPU span stays close to the 1-GPU one (each GPU's fault's fixed cost
#    runs beside the others'), so the aggregate there grows with k.
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/um-node.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
{
  for f in /sys/module/nvidia_uvm/parameters/uvm_perf_prefetch_* /sys/module/nvidia_uvm/parameters/uvm_perf_fault_*; do
    [ -r "$f" ] && echo "$(basename "$f") = $(cat "$f")"
  done
  cat /sys/module/nvidia/version 2>/dev/null | sed 's/^/nvidia driver /'
} >>"$log"
timeout 400 ./build/bin/gpsm scope -t '^um_fault_all$' --reps 5 --warmup 1 --min-size 64K --max-size 1G \
  --json "$out/um-node.json" >>"$log" 2>&1
rc=$?
cat "$log"
exit $rc
