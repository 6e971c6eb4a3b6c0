#!/usr/bin/env bash
# Question: with the children of `gpsm bench --isolate` sharing each reference (reference_cache.hpp,
# the commit after 98db949), what does --isolate still cost over one process, and what are the
# one-GPU column's 3D, jacobi2d, fd3d and cg ratios with each run in its own process? One device
# call: the CLI test, then jacobi2d (its 16384² CPU reference is the longest) isolated and in one
# process, then the column's PART=1 steps isolated.
# Usage: B=<dir with gpsm> OUT=... experiments/gps-ratio/isolate_refs.sh
#   (on the device: OUT=$OUT experiments/build_then.sh experiments/gps-ratio/isolate_refs.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
G="--gpus 1 --reps 5"
J="$B/gpsm bench --app jacobi2d --size 4096,16384 $G --paradigm single,memcpy,p2p_inline,cpu_free,gps"
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" \
  "cli:60:python3 tests/cli/bench_isolate.py --gpsm $B/gpsm --work \$STEP_OUT/cli" \
  "jaci:200:$J --isolate --json \$STEP_OUT/jacobi2d-isolated.json" \
  "jac1:150:$J --json \$STEP_OUT/jacobi2d-one-process.json" \
  "heati:60:$B/gpsm bench --app heat3d --size 256,512 $G --paradigm single,memcpy,um_hints,p2p_inline,gps,cpu_free --isolate --json \$STEP_OUT/heat3d-isolated.json" \
  "wavei:60:$B/gpsm bench --app wave3d --size 256,512 $G --paradigm single,memcpy,um_hints,p2p_inline,gps,cpu_free --isolate --json \$STEP_OUT/wave3d-isolated.json" \
  "fd3di:90:$B/gpsm bench --app fd3d $G --paradigm single,memcpy,p2p_inline,rdl,gps --isolate --json \$STEP_OUT/fd3d-isolated.json" \
  "cgi:120:$B/gpsm bench --app cg --size poisson2d:512,poisson2d:2048 $G --paradigm single,cpu_free_std,cpu_free_pipe,gps,gps_pipe --isolate --json \$STEP_OUT/cg-isolated.json"
