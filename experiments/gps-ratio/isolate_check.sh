#!/usr/bin/env bash
# Question: does `gpsm bench --isolate` (each run in a child process) remove the order effect of
# one bench process (wave3d 256³ gps 1.023-1.033 × single after single and memcpy, 1.000-1.005
# alone: results/nvidia-h200/2026-11-29_d1b54ee_gps-sole-placement), and what does it cost in
# wall time? The same cells in one process and isolated, in two orders each, side by side in one
# call; then the GPU CLI test of --isolate and the GPU tests whose launcher it shares (nvshmem).
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
