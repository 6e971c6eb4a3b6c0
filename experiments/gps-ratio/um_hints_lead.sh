#!/usr/bin/env bash
# Question (written 2026-11-29, not yet run): why does um_hints lead at heat3d / wave3d 256^3 on
# 2xH200 (27.5-28.7 us a step against p2p_inline 28.3-29.9 and gps 29.6-30.2 with the events fence,
# results/nvidia-h200-x2/2026-11-29_3fa6102_fence-auto-sssp-ncu)? Its step is the same marching
# kernel (step_kernel) over managed memory, reading the neighbour's plane where it lives; fd3d's
# rdl, the same idea over a distributed range, did not beat pushing at 256^3 (x2_probes.sh). Is the
# lead in the kernel (time, DRAM bytes, L2 hit rate under Nsight Compute at the GPU's clocks and
# warm caches: placement moved single by 3 % on one GPU, sole_gap_addr.sh) or between kernels
# (bench step time minus kernel time)? Prediction: in the kernel, um_hints' step_kernel 1-2 us
# shorter than p2p_inline's at equal DRAM bytes.
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/gps-ratio/um_hints_lead.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
N="ncu --kernel-name 'regex:step_kernel|listed_kernel' --launch-skip 40 --launch-count 16 --cache-control none --clock-control none --metrics $M"
steps=()
for app in heat3d wave3d; do
  steps+=("bench-$app:60:$B/gpsm bench --app $app --size 256 --gpus 2 --reps 5 --paradigm um_hints,p2p_inline,gps --json \$STEP_OUT/bench-$app.json")
  for par in um_hints p2p_inline gps; do
    steps+=("ncu-$app-$par:60:$N $B/gpsm bench --app $app --size 256 --gpus 2 --paradigm $par --iters 50 --reps 1 --warmup 1 > \$STEP_OUT/ncu-$app-$par.log 2>&1; grep -cE 'gpu__time_duration' \$STEP_OUT/ncu-$app-$par.log")
  done
done
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
