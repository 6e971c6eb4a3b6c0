#!/usr/bin/env bash
# Follow-up of sole_gap_1gpu.sh (the step kernel equal under ncu's cache flush, gps 2.3-3.0 % slower
# in the bench loop): is it where the buffers sit? Needs a temporary build with sole_gap_addr.patch
# applied (git apply experiments/gps-ratio/sole_gap_addr.patch; never committed to src/): it prints
# the buffers' addresses, shifts single's buffers GPSM_EXP_SHIFT_MIB into a larger allocation,
# recycles freed memory first (GPSM_EXP_RECYCLE) and aligns the GPS replicas (GPSM_EXP_ALIGN_MIB).
# Answer (2026-11-29, 1xH200, results/nvidia-h200/2026-11-29_d1b54ee_gps-sole-placement): yes. gps
# run alone in its process is 1.000-1.005 x single; after single and memcpy in one process its
# replicas land on recycled memory and it is 2.5-3.3 % slower; aligned to 4 or 32 MiB there (other
# physical pages) it equals single. single itself moves 54.9 -> 56.7 us with where its buffers
# start inside an allocation (shift 32 MiB): placement, not GPS, not VA alignment.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
W="$B/gpsm bench --app wave3d --size 256 --gpus 1 --reps 5"
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
steps=()
for round in a b; do
  for sh in 0 2 4 8 16 32; do
    steps+=("sh$sh$round:30:GPSM_EXP_SHIFT_MIB=$sh $W --paradigm single --json \$STEP_OUT/sh$sh$round.json")
  done
  steps+=("rec$round:30:GPSM_EXP_RECYCLE=1 $W --paradigm single --json \$STEP_OUT/rec$round.json")
  for al in 0 4 32; do
    e=; [ $al -gt 0 ] && e="GPSM_EXP_ALIGN_MIB=$al"
    steps+=("seq$al$round:40:$e $W --paradigm single,memcpy,gps --json \$STEP_OUT/seq$al$round.json")
  done
done
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
