#!/usr/bin/env bash
# On a GPU machine, after scripts/device-run.sh has built gpsm: `gpsm bench` for the named apps at
# their default sizes (strong-scaling and large), one results file per app in $OUT, progress and
# tables in $OUT/bench.log. Each app gets its own time limit so one slow app cannot take the
# others' results with it.
# Usage: scripts/device-bench.sh [--gpus 1,2,4] [--limit SECONDS] APP... [-- extra gpsm bench args]
set -uo pipefail
cd "$(dirname "$0")/.."
gpus=1,2,4; limit=240; apps=()
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) gpus=$2; shift 2;;
    --limit) limit=$2; shift 2;;
    --) shift; break;;
    -*) echo "device-bench: unknown option $1" >&2; exit 2;;
    *) apps+=("$1"); shift;;
  esac
done
[ ${#apps[@]} -gt 0 ] || { echo "device-bench: name at least one app (gpsm bench --list)" >&2; exit 2; }
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
rc=0
for app in "${apps[@]}"; do
  t0=$(date +%s)
  echo "command: build/bin/gpsm bench --app $app --gpus $gpus $* --json \$OUT/bench-$app.json" | tee -a "$out/bench.log"
  # progress lines (stderr, ending in \r) are dropped; the tables and messages are kept
  timeout "$limit" ./build/bin/gpsm bench --app "$app" --gpus "$gpus" "$@" --json "$out/bench-$app.json" \
    >>"$out/bench.log" 2> >(tr '\r' '\n' | grep -v $'\e\[K\[' | grep -v '^$' >>"$out/bench.log")
  r=$?
  echo "device-bench: $app rc=$r in $(( $(date +%s) - t0 )) s" | tee -a "$out/bench.log"
  [ $r -eq 0 ] || rc=1
done
exit $rc
