#!/usr/bin/env bash
# Question: does `gpsm bench --isolate` (each run in a child process) remove the order effect of
# one bench process (wave3d 256³ gps 1.023-1.033 × single after single and memcpy, 1.000-1.005
# alone: results/nvidia-h200/2026-11-29_d1b54ee_gps-sole-placement), and what does it cost in
# wall time? The same cells in one process and isolated, in two orders each, side by side in one
# call; then the GPU CLI test of --isolate and the GPU tests whose launcher it shares (nvshmem).
# (gpsm bench runs its paradigms in its fixed order, single first, whatever --paradigm's order:
# the *-rev steps are repeats, not reversed orders.)
# Answer (2026-11-29, 1×H200, results/nvidia-h200/2026-11-29_0fdbf83_bench-isolate, calls 1-2):
# isolated, gps ÷ single is 1.003-1.007 at wave3d 256³ (4 commands) against 1.020 and 1.028 in one
# process; heat3d 256³ stays 1.009-1.011 isolated (1.011, 1.013 in one process): its 1 % is not
# placement. A child-per-run command of 3 runs took 1.8-3 s instead of 1-2 s. The CLI test and the
# 6 nvshmem GPU tests passed (call 2; the one-process steps of call 1 broke on an unset $4).
# Usage: B=<dir with gpsm> OUT=... experiments/gps-ratio/isolate_check.sh
#   (building on the device in the same call: experiments/build_then.sh experiments/gps-ratio/isolate_check.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
b() {  # $1 step name, $2 app, $3 paradigms, $4 extra flags
  echo "$1:60:$B/gpsm bench --app $2 --size 256 --gpus 1 --paradigm $3 --reps 5 ${4:-} --json \$STEP_OUT/$1.json"
}
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" \
  "clitest:120:python3 tests/cli/bench_isolate.py --gpsm $B/gpsm --work \$STEP_OUT/bench-isolate" \
  "$(b wave-one wave3d single,memcpy,gps)" "$(b wave-iso wave3d single,memcpy,gps --isolate)" \
  "$(b wave-iso-rev wave3d gps,memcpy,single --isolate)" "$(b wave-one-rev wave3d gps,memcpy,single)" \
  "$(b heat-one heat3d single,memcpy,gps)" "$(b heat-iso heat3d single,memcpy,gps --isolate)" \
  "$(b heat-iso-rev heat3d gps,memcpy,single --isolate)" "$(b heat-one-rev heat3d gps,memcpy,single)" \
  "nvshmem:120:$B/gpsm_gpu_tests --gtest_filter=*Nvshmem*:CgGpu.Nvshmem* --gtest_output=xml:\$STEP_OUT/gpu-nvshmem.xml"
