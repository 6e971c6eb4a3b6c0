#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh has built gpsm: the graph apps (docs/graphs.md), one
# `gpsm bench` per (app, graph), each under its own time limit, so one slow run cannot take the
# others' results with it. Default: the large sizes (a power-law and a road-like
# graph of >= 1e8 edges, a rating matrix of 1e8 ratings); --small: the strong-scaling sizes.
# Results: $OUT/graph-<app>-<graph>.json, tables in $OUT/bench.log.
# Usage: scripts/device-graph.sh [--gpus 1,2,4] [--limit SECONDS] [--small] [--apps "pagerank sssp als"]
#          [--paradigm LIST] [-- extra gpsm bench args]
# Measured on 4xH200 (2026-11-22): the three large apps did not finish in 110 s each with both
# graphs in one command; on a 2-core host rmat:23 (131 M edges) takes 39.5 s to build, 5.5 s to
# transpose and 16.8 s for the PageRank reference. At the large sizes `um` thrashes (als on 4
# GPUs: 385 ms per iteration at 1e7 ratings): leave it out there with --paradigm.
set -uo pipefail
cd "$(dirname "$0")/.."
gpus=1,2,4; limit=280; small=0; apps="pagerank sssp als"; paradigm=all
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) gpus=$2; shift 2;;
    --limit) limit=$2; shift 2;;
    --small) small=1; shift;;
    --apps) apps=$2; shift 2;;
    --paradigm) paradigm=$2; shift 2;;
    --) shift; break;;
    *) echo "device-graph: unknown argument $1 (see the header of $0)" >&2; exit 2;;
  esac
done
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
runs=()
for app in $apps; do
  case $app in
    pagerank) if [ $small = 1 ]; then runs+=("pagerank rmat:20" "pagerank road:1024"); else runs+=("pagerank rmat:23" "pagerank road:5120"); fi;;
    sssp) if [ $small = 1 ]; then runs+=("sssp rmat:20 --iters 200" "sssp road:1024 --iters 200"); else runs+=("sssp rmat:23 --iters 100" "sssp road:5120 --iters 100"); fi;;
    als) if [ $small = 1 ]; then runs+=("als ratings:1000000x100000x20"); else runs+=("als ratings:5000000x500000x20 --iters 3"); fi;;
    *) echo "device-graph: unknown app $app (pagerank, sssp, als)" >&2; exit 2;;
  esac
done
rc=0
for r in "${runs[@]}"; do
  read -r app size rest <<<"$r"
  tag=$(echo "$size" | tr ':x' '--')
  t0=$(date +%s)
  echo "command: build/bin/gpsm bench --app $app --size $size $rest --gpus $gpus --paradigm $paradigm $* --json \$OUT/graph-$app-$tag.json" | tee -a "$out/bench.log"
  # shellcheck disable=SC2086
  timeout "$limit" ./build/bin/gpsm bench --app "$app" --size "$size" $rest --gpus "$gpus" --paradigm "$paradigm" "$@" \
    --json "$out/graph-$app-$tag.json" >>"$out/bench.log" \
    2> >(tr '\r' '\n' | grep -v $'\e\[K\[' | grep -v '^$' | tail -20 >>"$out/bench.log")
  s=$?
  echo "device-graph: $app $size rc=$s in $(( $(date +%s) - t0 )) s" | tee -a "$out/bench.log"
  [ $s -eq 0 ] || rc=1
done
exit $rc
