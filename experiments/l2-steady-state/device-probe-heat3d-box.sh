#!/usr/bin/env bash
# Why heat3d 256^3's 2-GPU kernel is slower than the same box on one GPU (docs/sim.md,
# "A switched node, the phase wait ..."): Nsight Compute on the step kernel, one kernel at a time,
# for the one-GPU box (256x256x128) and the 2-GPU run's infinite, rdl and p2p_inline. Prediction:
# if the step kernel alone takes ~24 us on every one, the extra ~6 us of the 2-GPU run come from
# running the GPUs together (the loop), not from the kernel; if ~29 us, from the kernel's plan
# (the 2-GPU box has 2 edge chunks per tile and pushes).
# rdl and p2p_inline under ncu take 181-208 us (one GPU profiled while the peer idles): not
# comparable. CASES="SIZE:GPUS:PARADIGM ..." and APP pick other runs (the one-GPU boxes: what
# the L2 keeps between iterations).
# CACHE=none profiles the loop's steady state instead (ncu --cache-control none: the L2 keeps what
# the previous launches left, dirty lines included) with the metrics that fit one pass (METRICS).
# Usage (device): OUT=dir [APP=wave3d] [CASES=...] [CACHE=none] [METRICS=...] experiments/l2-steady-state/device-probe-heat3d-box.sh
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:?OUT}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
M=${METRICS:-gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread}
cache=${CACHE:-all}
tag=$([ "$cache" = all ] && echo "" || echo "-cache-$cache")
cases=${CASES:-"256x256x128:1:infinite 256:2:infinite 256:2:rdl 256:2:p2p_inline"}
app=${APP:-heat3d}
for c in $cases; do
  IFS=: read -r size gpus par <<<"$c"
  set -- "$size" "$gpus" "$par"
  log="$out/ncu-$app-$1-$2gpu-$3$tag.log"
  echo "== $app $1 on $2 GPU(s), $3"
  # --clock-control none: the GPU's own clocks, as the bench runs (ncu locks them to base by default)
  GPSM_HOST_LOOP=stream timeout 100 ncu --clock-control none --cache-control "$cache" --metrics $M -k regex:step --launch-skip 40 --launch-count 4 \
    build/bin/gpsm bench --app "$app" --size "$1" --gpus "$2" --paradigm "$3" --reps 1 >"$log" 2>&1
  grep -E "step_kernel|duration|passes|bytes_|hit_rate|warps_active|grid_size|registers" "$log" | grep -v '^\[' | sed 's/  */ /g' | head -40
done
