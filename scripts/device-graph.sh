#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh has built gpsm: the graph apps (issue 5) at the
# sizes the issue asks for: a power-law graph and a road-like graph of >= 1e8 edges and a rating
# matrix of 1e8 ratings, each app under its own time limit. Results: $OUT/graph-<app>.json,
# tables in $OUT/bench.log.
# Usage: scripts/device-graph.sh [--gpus 1,2,4] [--limit SECONDS] [--small] [-- extra gpsm bench args]
#   --small: the strong-scaling sizes instead (rmat:20, road:1024, ratings:1000000x100000x20)
set -uo pipefail
cd "$(dirname "$0")/.."
gpus=1,2,4; limit=150; small=0
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) gpus=$2; shift 2;;
    --limit) limit=$2; shift 2;;
    --small) small=1; shift;;
    --) shift; break;;
    *) echo "device-graph: unknown argument $1" >&2; exit 2;;
  esac
done
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
if [ $small = 1 ]; then
  runs=("pagerank --size rmat:20,road:1024" "sssp --size rmat:20,road:1024 --iters 200" "als --size ratings:1000000x100000x20")
else
  runs=("pagerank --size rmat:23,road:5120" "sssp --size rmat:23,road:5120 --iters 100" "als --size ratings:5000000x500000x20 --iters 3")
fi
rc=0
for r in "${runs[@]}"; do
  app=${r%% *}
  t0=$(date +%s)
  echo "command: build/bin/gpsm bench --app $r --gpus $gpus $* --json \$OUT/graph-$app.json" | tee -a "$out/bench.log"
  # shellcheck disable=SC2086
  timeout "$limit" ./build/bin/gpsm bench --app $r --gpus "$gpus" "$@" --json "$out/graph-$app.json" \
    >>"$out/bench.log" 2> >(tr '\r' '\n' | grep -v $'\e\[K\[' | grep -v '^$' | tail -20 >>"$out/bench.log")
  s=$?
  echo "device-graph: $app rc=$s in $(( $(date +%s) - t0 )) s" | tee -a "$out/bench.log"
  [ $s -eq 0 ] || rc=1
done
exit $rc
