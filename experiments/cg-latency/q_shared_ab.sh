#!/usr/bin/env bash
# Question: the persistent Standard CG kernels (cpu_free_std, gps) store q = A p in the SpMV phase
# and load it back in the update phase: 16 of the ~97 bytes a row an iteration moves (2D Poisson,
# the value table). Keeping q in the block's shared memory between the phases instead
# (GPSM_CG_Q=shared, src/apps/cg/q_storage.hpp: both phases take a block's chunks in the same
# order) removes them. Prediction from the bytes: 2048x512 (2048^2's share on 4 GPUs, 2 chunks a
# block) 44-45 us -> ~38-41; 2048x1024 (4 chunks a block) ~86 -> ~74-79; 2048^2 on one GPU keeps
# global (8 chunks a block do not fit 48 KB); 512^2 lives in the L2, little change. Same binary,
# global and shared interleaved (g s s g) per command, every run verified; then the GPU test that
# shared computes global's bits.
# Usage on a device: [G=0,1] OUT=$OUT experiments/build_then.sh experiments/cg-latency/q_shared_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests (build_then.sh sets it)}"
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
gpus=1; [ "$n" -gt 1 ] && gpus=1,$n
S="--size poisson2d:2048x512,poisson2d:2048x1024,poisson2d:512 --gpus 1 --paradigm cpu_free_std,gps --reps 5"
# On n GPUs: 2048^2 itself at 1 and n GPUs, beside the quarter-sized proxy (the 4-GPU share).
[ "$n" -gt 1 ] && S="--size poisson2d:2048x512,poisson2d:2048,poisson2d:512 --gpus $gpus --paradigm cpu_free_std,gps --reps 5"
ab=()
i=0
for q in global shared shared global; do
  i=$((i + 1))
  ab+=("$q$i:110:GPSM_CG_Q=$q $B/gpsm bench --app cg $S --json \$STEP_OUT/cg-$i-$q.json")
done
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-560}" \
  "tests:120:$B/gpsm_gpu_tests --gtest_filter='CgGpu.QKeptInSharedMemoryComputesTheSameBits' --gtest_output=xml:\$STEP_OUT/q-test.xml" \
  "${ab[@]}"
