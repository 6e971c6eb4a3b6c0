#!/usr/bin/env bash
# README command 1: the main job.
#   ./scripts/run.sh          quick (measured on 4xH200 at 220112e: 147 s on its 4 GPUs, 92 s on 2 of them,
#                             results/nvidia-h200-x4/2026-11-27_220112e_main-job-3d-coords): `gpsm scope --quick`, then
#                             `gpsm bench` of every app at its strong-scaling size on the paradigms
#                             that matter (its best hand-written ones, gps, proact, memcpy,
#                             infinite; cg: its CPU-controlled and CPU-free variants and gps) on 1, 2, 4...
#                             GPUs, a one-screen summary and plots, all in gpsm-out/
#   ./scripts/run.sh --full   the whole suite: every app, size and paradigm (estimated ~40 min on 2xH200,
#                             estimated: ~312 runs, 51 of them took 191 s at the start, the
#                             large sizes slower; not yet timed end to end)
# Without a GPU it says so and runs the simulator instead (`gpsm sim`, simulated results) with the
# same summary and plots. Other arguments go to `gpsm scope`.
# Every bench command runs with --isolate (each run in a gpsm process of its own, the references
# and graphs computed once per command and shared): in one process a run's buffers land where the
# runs before it freed theirs, which moved wave3d 256³ gps ÷ the best by 2-3 % on one H200 (1.031
# in one process, 1.007 isolated, results/nvidia-h200/2026-11-29_cf7cbf0_main-job-isolate). The
# quick set's bench took 46.6 s isolated against 28.0 s in one process on one H200
# (results/nvidia-h200/2026-11-29_89ab31d_isolate-shared-graphs); the multi-GPU estimates below
# are from before --isolate and were not measured again with it.
#
# The quick set's time, from the committed 2xH200 bench runs under results/nvidia-h200-x2 (each
# command's "gpsm bench: N run(s) ... in T s" line over its runs): jacobi2d 4096 0.56 s a run
# (9a114ccc0af7, 10 runs in 5.6 s), heat3d / wave3d 256 0.37 / 0.33 s (same run), pagerank /
# sssp rmat:20 0.32 / 0.35 s (9456087c3d1b, 12 runs in 3.8 / 4.2 s), als ratings:1000000x100000x20
# 1.2 s (14.0 s for 12), cg poisson2d:512 ~2.4 s (4xH200 4d2f43f: 36 runs of both sizes in 85.8 s),
# `gpsm scope --quick` ~35 s (issue report) and the plots ~15 s: on 2 GPUs 83 runs, ~70 s of
# bench, ~2 min in all; on 4 GPUs ~1.5x the runs, ~3 min. Each step below ends with its 2-GPU
# estimate in seconds (the progress line's time left scales them by the finished steps).
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
args=()
for a in "$@"; do
  if [ "$a" = "--full" ]; then full=1; else args+=("$a"); fi
done
./scripts/setup.sh >/dev/null
[ -x build/bin/gpsm ] || ./scripts/build.sh >/dev/null
gpsm=${GPSM:-./build/bin/gpsm}  # GPSM: another gpsm binary
out=gpsm-out
mkdir -p "$out"
start=$(date +%s)

# Each step: "app size paradigms estimated-seconds-on-2xH200". Strong-scaling size: the first of
# each app's default sizes (gpsm bench --list).
steps=(
  "jacobi2d 4096 single,memcpy,p2p_inline,gps,proact,cpu_free,infinite 8"
  "heat3d 256 single,memcpy,um_hints,p2p_inline,gps,proact,infinite 6"
  "wave3d 256 single,memcpy,um_hints,p2p_inline,gps,proact,infinite 6"
  "pagerank rmat:20 single,memcpy,p2p_inline,gps,proact,infinite 5"
  "sssp rmat:20 single,memcpy,p2p_inline,gps,proact,infinite 5"
  "als ratings:1000000x100000x20 single,memcpy,p2p_inline,gps,proact,infinite 14"
  "cg poisson2d:512 single,cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe,gps,infinite 27"
)

# "[k/n] what (~T left)": the steps still to come at their estimates, scaled by how the finished
# ones compared with theirs on this machine.
eta() {  # eta k: seconds left before step k (0-based) starts
  local k=$1 done_est=0 left_est=0 i=0 s
  for s in "${steps[@]}"; do
    local e=${s##* }
    if [ "$i" -lt "$k" ]; then done_est=$((done_est + e)); else left_est=$((left_est + e)); fi
    i=$((i + 1))
  done
  local spent=$(($(date +%s) - bench_start))
  if [ "$done_est" -gt 0 ] && [ "$spent" -gt 0 ]; then echo $((left_est * spent / done_est)); else echo "$left_est"; fi
}

if "$gpsm" info | grep -q '^GPUs: none'; then
  echo "gpsm: no GPU here: running the simulator instead (simulated results) on the h200x4 preset, ~2 min"
  # The stencils at their strong-scaling sizes on every simulated paradigm, the graph apps on a
  # small road grid (the simulator takes minutes per graph app at road:1024, longer at rmat:20).
  sims=()
  for app_size in jacobi2d:4096 heat3d:256 wave3d:256 pagerank:road:256 sssp:road:256; do
    app=${app_size%%:*} size=${app_size#*:}
    echo "gpsm: gpsm sim --app $app --size $size --gpus 1,2,4 --system h200x4"
    "$gpsm" sim --app "$app" --size "$size" --gpus 1,2,4 --system h200x4 --json "$out/sim-$app.json"
    sims+=("$out/sim-$app.json")
  done
  echo
  python3 scripts/summary.py "${sims[@]}" --out "$out/summary.txt"
  "$gpsm" report "${sims[@]}" --out "$out/plots" || echo "gpsm: plots skipped (matplotlib missing?)"
  echo "gpsm: simulated results in $out/sim-*.json, summary $out/summary.txt, plots $out/plots/ (run this on a GPU node to measure)"
  exit 0
fi

export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
echo "gpsm: [scope] gpsm scope --quick (~35 s)"
"$gpsm" scope --quick --out "$out" ${args[@]+"${args[@]}"}
ngpu=$("$gpsm" info | sed -n 's/^GPUs: \([0-9][0-9]*\).*/\1/p')
counts=1; g=2
while [ -n "$ngpu" ] && [ "$g" -le "$ngpu" ]; do counts="$counts,$g"; g=$((g * 2)); done
bench_start=$(date +%s)
jsons=()
if [ "$full" = 1 ]; then
  echo "gpsm: the whole suite: every app, size and paradigm on $counts GPUs (estimated ~40 min on 2xH200)"
  "$gpsm" bench --app all --gpus "$counts" --isolate --json "$out/bench.json" || echo "gpsm: some runs failed (named above)"
  jsons+=("$out/bench.json")
else
  n=${#steps[@]}
  for k in "${!steps[@]}"; do
    read -r app size paradigms _ <<<"${steps[$k]}"
    left=$(eta "$k")
    echo "gpsm: [$((k + 1))/$n] gpsm bench --app $app --size $size on $counts GPUs (~$((left / 60))m$(printf %02d $((left % 60)))s of bench left)"
    "$gpsm" bench --app "$app" --size "$size" --gpus "$counts" --paradigm "$paradigms" --isolate \
      --json "$out/bench-$app.json" ||
      echo "gpsm: $app: some runs failed (named above); the summary shows the rest"
    [ -f "$out/bench-$app.json" ] && jsons+=("$out/bench-$app.json")
  done
fi
echo
if [ ${#jsons[@]} -eq 0 ]; then
  echo "gpsm: no bench results were written (see the errors above)" >&2
  exit 1
fi
python3 scripts/summary.py "${jsons[@]}" --out "$out/summary.txt"
"$gpsm" report "$out/results.json" "${jsons[@]}" --out "$out/plots" || echo "gpsm: plots skipped (matplotlib missing?)"
echo "gpsm: done in $(($(date +%s) - start)) s: results $out/*.json, summary $out/summary.txt, plots $out/plots/"
