#!/usr/bin/env bash
# Question: are the CG persistent kernels' update loops latency-bound (row e + 1's loads waiting
# for row e's stores), and does prefetching a thread's rows (prefetch.patch: the update steps'
# vectors toward L1, x toward L2 before the Standard SpMV) make them faster on one GPU?
# experiments/ab/device-ab.sh: base (this tree) and variant (the patch) built in one call, each
# command base, variant, variant, base; every run verified against the CPU reference. Then the
# variant's CG GPU tests in what is left.
# Usage on a 1-GPU device: OUT=$OUT experiments/build_then.sh experiments/cg-latency/prefetch_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/out}; t0=$(date +%s); total=${BUDGET:-570}
P=cpu_free_std,cpu_free_pipe,gps,gps_pipe
bash experiments/ab/device-ab.sh experiments/cg-latency/prefetch.patch \
  "bench --app cg --size poisson2d:2048x512,poisson2d:2048x1024 --gpus 1 --paradigm $P --iters 300 --reps 5" \
  "bench --app cg --size poisson2d:512,poisson2d:256 --gpus 1 --paradigm $P --reps 5"
left=$(( total - ($(date +%s) - t0) - 15 ))
if [ "$left" -gt 30 ]; then
  timeout "$left" /tmp/gpsm-ab/build/tests/gpsm_gpu_tests --gtest_filter='CgGpu.*' \
    --gtest_output=xml:"$out/variant-cg-tests.xml" >"$out/variant-cg-tests.log" 2>&1
  echo "variant CgGpu tests: rc $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/ab.log"
fi
