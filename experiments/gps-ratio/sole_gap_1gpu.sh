#!/usr/bin/env bash
# Question: on one GPU, gps runs the hand-written step (launch_step) on its replicas, yet wave3d
# 256³ took 1.024 × single and heat3d 256³ 1.013 (results/nvidia-h200/2026-11-29_6757657_issue28-1gpu).
# Is the difference in the kernel (the replicas' memory: same code, other addresses) or in the loop?
# Interleaved bench rounds, then Nsight Compute's kernel duration and DRAM bytes of step_kernel
# under single and under gps. One device call after a build (experiments/build_then.sh).
# Answer (2026-11-29, results/nvidia-h200/2026-11-29_d1b54ee_gps-sole-placement/call2): the same
# kernel, same DRAM bytes and equal time under ncu (wave3d gps 60.26 us, single 60.69; heat3d 42.91
# / 42.38), yet 2.3-3.0 % apart in the bench loop: not the kernel's code; sole_gap_addr.sh went on.
# Usage: B=<dir with gpsm> OUT=... experiments/gps-ratio/sole_gap_1gpu.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
ncu_step() {  # $1 app, $2 paradigm
  echo "ncu-$1-$2:90:ncu --kernel-name step_kernel --launch-skip 50 --launch-count 20 --metrics $M --csv $B/gpsm bench --app $1 --size 256 --gpus 1 --paradigm $2 --reps 1 --warmup 0 > \$STEP_OUT/ncu-$1-$2.csv"
}
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" \
  "wa:40:$B/gpsm bench --app wave3d --size 256 --gpus 1 --paradigm single,memcpy,gps --reps 5 --json \$STEP_OUT/wave-a.json" \
  "ha:40:$B/gpsm bench --app heat3d --size 256 --gpus 1 --paradigm single,memcpy,gps --reps 5 --json \$STEP_OUT/heat-a.json" \
  "wb:40:$B/gpsm bench --app wave3d --size 256 --gpus 1 --paradigm gps,memcpy,single --reps 5 --json \$STEP_OUT/wave-b.json" \
  "hb:40:$B/gpsm bench --app heat3d --size 256 --gpus 1 --paradigm gps,memcpy,single --reps 5 --json \$STEP_OUT/heat-b.json" \
  "$(ncu_step wave3d single)" "$(ncu_step wave3d gps)" "$(ncu_step heat3d single)" "$(ncu_step heat3d gps)"
