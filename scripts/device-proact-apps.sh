#!/usr/bin/env bash
# On a GPU machine after gpsm is built: the `proact` paradigm of every app of `gpsm bench` beside
# memcpy (its reference), single (the speedup base), p2p_inline and infinite, on 1 and 4 GPUs, one
# bench per app under its own time limit. With --tune FILE, the graph apps (where the chunk size is
# a choice) also sweep proact's chunk sizes and record the choice of every app in FILE
# (gpsm bench --proact-tune; the stencils record their structural chunk).
# Results: $OUT/proact-<app>.json, tables in $OUT/proact-apps.log.
# With --cache FILE (a --tune file), every proact run takes its agent and chunk from FILE (the
# profiler's choice: memcpy, inline or copy engines; docs/proact.md).
# Usage: scripts/device-proact-apps.sh [--limit SECONDS] [--gpus 1,4] [--tune FILE | --cache FILE] [--chunks LIST] [--apps "jacobi2d heat3d ..."]
set -uo pipefail
cd "$(dirname "$0")/.."
limit=45; gpus=1,4; tune=; cache=; chunks=256K..8M; apps="jacobi2d heat3d wave3d pagerank sssp als"
while [ $# -gt 0 ]; do
  case $1 in
    --limit) limit=$2; shift 2;;
    --gpus) gpus=$2; shift 2;;
    --tune) tune=$2; shift 2;;
    --cache) cache=$2; shift 2;;
    --chunks) chunks=$2; shift 2;;
    --apps) apps=$2; shift 2;;
    *) echo "device-proact-apps: unknown argument $1 (see the header of $0)" >&2; exit 2;;
  esac
done
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
log="$out/proact-apps.log"; rc=0
for app in $apps; do
  case $app in
    jacobi2d) size=4096; extra=();;
    heat3d|wave3d) size=256; extra=(--axis z);;
    pagerank) size=road:1024; extra=();;
    sssp) size=road:1024; extra=(--iters 200);;
    als) size=ratings:1000000x100000x20; extra=();;
    *) echo "device-proact-apps: unknown app $app" >&2; exit 2;;
  esac
  targs=()
  if [ -n "$tune" ]; then
    targs=(--proact-tune "$tune")
    case $app in pagerank|sssp|als) targs+=(--proact-chunks "$chunks");; esac
  elif [ -n "$cache" ]; then
    targs=(--proact-cache "$cache")
  fi
  t0=$(date +%s)
  echo "command: build/bin/gpsm bench --app $app --size $size ${extra[*]} --gpus $gpus --paradigm single,memcpy,p2p_inline,proact,infinite ${targs[*]} --json \$OUT/proact-$app.json" | tee -a "$log"
  timeout "$limit" ./build/bin/gpsm bench --app "$app" --size "$size" "${extra[@]}" --gpus "$gpus" \
    --paradigm single,memcpy,p2p_inline,proact,infinite "${targs[@]}" --json "$out/proact-$app.json" >>"$log" \
    2> >(tr '\r' '\n' | grep -v $'\e\[K\[' | grep -v '^$' | grep -v '^gpsm bench: \[' | tail -20 >>"$log")
  s=$?
  echo "device-proact-apps: $app rc=$s in $(( $(date +%s) - t0 )) s" | tee -a "$log"
  [ $s -eq 0 ] || rc=1
done
exit $rc
