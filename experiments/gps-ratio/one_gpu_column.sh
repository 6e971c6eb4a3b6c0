#!/usr/bin/env bash
# The one-GPU column of the issue-28 table (gps ÷ the best hand-written paradigm, every app at its
# default sizes) in three device calls (parts) of at most ~570 s each, on a day only one GPU is lent. The same
# paradigm sets as the 4-GPU call of 2026-11-28 (results/nvidia-h200-x4/2026-11-28_b73a08d_issue28-4gpu);
# fd3d (its gps since stop 44) added after. PART=1 runs cg, heat3d, wave3d, jacobi2d, fd3d; PART=2
# filter, pagerank, sssp, als; PART=3 ct (medium with its hand-written paradigms; seed single and
# gps, one iteration, ~21 s a rep and ~80 s of setup on one H200: cut at 300 s on 2026-11-29;
# since 5cac386 only the last rep computes the cost and since 7006fde d is computed once per size:
# 10.1 s a rep, the whole step 254 s on one H200 (results/nvidia-h200/2026-11-29_7006fde_ct-seed-1gpu),
# which fits after a build in one call; PART=3 with ctm too does not). Parts 1 and 2 each fit one call
# after a build on the device (jacobi2d and als need ~115 s and ~80 s: cut at 70 s in the
# one-call run of 2026-11-29).
# GPUS=2 or 4 runs the same sets for that column (the name stays: results cite it); the NVSHMEM
# paradigms are not in these sets.
# ISOLATE=1 adds `gpsm bench --isolate` (each run in its own process, since the commit after
# 5499885; before it this script split the paradigms into steps of their own): one bench process
# runs its paradigms in a fixed order on memory the earlier ones freed, which moved wave3d 256³ by
# up to 3 % (results/nvidia-h200/2026-11-29_d1b54ee_gps-sole-placement). Since 2ae2580 the children
# share the references, and an isolated command took 1.0-1.4x its one-process time (jacobi2d
# 84.8 vs 78.9 s, heat3d 14.3 vs ~10 s: results/nvidia-h200/2026-11-29_4996b9b_isolate-shared-refs),
# so a step's limit is 1.5x. cg's limit is 150 s (was 90): isolated on 4 GPUs at fb9d3b2 its 135 s ran
# out while the first 2048^2 child computed the shared CPU reference.
# Usage: B=<dir with gpsm> [PART=1|2|3] [GPUS=1|2|4] [ISOLATE=1] OUT=... experiments/gps-ratio/one_gpu_column.sh;
#   then python3 experiments/gps-ratio/gps_ratio.py <the JSONs>
#   (building on the device in the same call: experiments/build_then.sh experiments/gps-ratio/one_gpu_column.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
G="--gpus ${GPUS:-1} --reps 5"
one=("cg:150:$B/gpsm bench --app cg --size poisson2d:512,poisson2d:2048 $G --paradigm single,cpu_free_std,cpu_free_pipe,gps,gps_pipe --json \$STEP_OUT/cg.json"
     "heat:40:$B/gpsm bench --app heat3d --size 256,512 $G --paradigm single,memcpy,um_hints,p2p_inline,gps,cpu_free --json \$STEP_OUT/heat3d.json"
     "wave:40:$B/gpsm bench --app wave3d --size 256,512 $G --paradigm single,memcpy,um_hints,p2p_inline,gps,cpu_free --json \$STEP_OUT/wave3d.json"
     "jac:150:$B/gpsm bench --app jacobi2d --size 4096,16384 $G --paradigm single,memcpy,p2p_inline,cpu_free,gps --json \$STEP_OUT/jacobi2d.json"
     "fd3d:90:$B/gpsm bench --app fd3d $G --paradigm single,memcpy,p2p_inline,rdl,gps --json \$STEP_OUT/fd3d.json")
two=("filter:90:$B/gpsm bench --app filter $G --paradigm single,memcpy,rdl,p2p_inline,gps --json \$STEP_OUT/filter.json"
     "pr:60:$B/gpsm bench --app pagerank --size rmat:20,rmat:23 $G --paradigm single,memcpy,p2p_inline,nccl,gps --json \$STEP_OUT/pagerank.json"
     "sssp:60:$B/gpsm bench --app sssp --size rmat:20,rmat:23 $G --paradigm single,memcpy,p2p_inline,nccl,gps --json \$STEP_OUT/sssp.json"
     "als:120:$B/gpsm bench --app als $G --paradigm single,memcpy,p2p_inline,nccl,gps --json \$STEP_OUT/als.json")
three=("ctm:150:$B/gpsm bench --app ct --size medium $G --paradigm single,memcpy,nccl,proact,gps --json \$STEP_OUT/ct-medium.json"
       "cts:450:$B/gpsm bench --app ct --size seed --iters 1 $G --paradigm single,gps --json \$STEP_OUT/ct-seed.json")
case "${PART:-all}" in
  1) steps=("${one[@]}") ;;
  2) steps=("${two[@]}") ;;
  3) steps=("${three[@]}") ;;
  *) steps=("${one[@]}" "${two[@]}" "${three[@]}") ;;
esac
if [ "${ISOLATE:-0}" = 1 ]; then
  each=()
  for st in "${steps[@]}"; do
    name=${st%%:*}; rest=${st#*:}; limit=${rest%%:*}; cmd=${rest#*:}
    each+=("$name:$((limit * 3 / 2)):$cmd --isolate")
  done
  steps=("${each[@]}")
fi
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
