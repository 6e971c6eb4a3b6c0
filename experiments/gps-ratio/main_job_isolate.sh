#!/usr/bin/env bash
# Questions: (1) what would `--isolate` cost the main job (scripts/run.sh's quick set of bench
# commands, the same apps, sizes and paradigms) and what does it change in its ratios? Each
# command runs in one process and isolated, side by side in one call, on the GPUs given.
# (2) With shared references (2ae2580), what does --isolate cost the graph apps and the filter at
# their default sizes, where each child still generates its graph or image (the column's PART=2
# isolated)? ISOLATED_ONLY=1 leaves out the one-process steps; TESTS=1 runs the whole GPU test
# binary and the --isolate CLI test first; FILTER=0 leaves the filter out.
# Usage: B=<dir with gpsm> [GPUS=1] [ISOLATED_ONLY=1] [TESTS=1] [FILTER=0] OUT=... experiments/gps-ratio/main_job_isolate.sh
#   (on the device: OUT=$OUT experiments/build_then.sh experiments/gps-ratio/main_job_isolate.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
G="--gpus ${GPUS:-1}"
quick=("jacobi2d 4096 single,memcpy,p2p_inline,gps,proact,cpu_free,infinite"
       "heat3d 256 single,memcpy,um_hints,p2p_inline,gps,proact,infinite"
       "wave3d 256 single,memcpy,um_hints,p2p_inline,gps,proact,infinite"
       "pagerank rmat:20 single,memcpy,p2p_inline,gps,proact,infinite"
       "sssp rmat:20 single,memcpy,p2p_inline,gps,proact,infinite"
       "als ratings:1000000x100000x20 single,memcpy,p2p_inline,gps,proact,infinite"
       "cg poisson2d:512 single,cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe,gps,infinite")
steps=()
[ "${TESTS:-0}" = 1 ] && steps+=("tests:170:$B/gpsm_gpu_tests --gtest_output=xml:\$STEP_OUT/gpu-tests.xml"
                                 "cli:60:python3 tests/cli/bench_isolate.py --gpsm $B/gpsm --work \$STEP_OUT/cli")
for q in "${quick[@]}"; do
  read -r app size ps <<<"$q"
  c="$B/gpsm bench --app $app --size $size $G --paradigm $ps"
  [ "${ISOLATED_ONLY:-0}" = 1 ] || steps+=("q-$app:60:$c --json \$STEP_OUT/q-$app.json")
  steps+=("qi-$app:90:$c --isolate --json \$STEP_OUT/qi-$app.json")
done
P2="$G --reps 5 --paradigm single,memcpy,p2p_inline,nccl,gps --isolate"
[ "${FILTER:-1}" = 1 ] && steps+=("filteri:150:$B/gpsm bench --app filter $G --reps 5 --paradigm single,memcpy,rdl,p2p_inline,gps --isolate --json \$STEP_OUT/filter-isolated.json")
steps+=("pri:100:$B/gpsm bench --app pagerank --size rmat:20,rmat:23 $P2 --json \$STEP_OUT/pagerank-isolated.json"
        "ssspi:100:$B/gpsm bench --app sssp --size rmat:20,rmat:23 $P2 --json \$STEP_OUT/sssp-isolated.json"
        "alsi:150:$B/gpsm bench --app als $P2 --json \$STEP_OUT/als-isolated.json")
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
