#!/usr/bin/env bash
# On a GPU machine after gpsm is built in build/: measure a source change beside the built tree in
# one call. Copies the tree (without build*/) to /tmp/gpsm-ab, applies PATCH there (patch -p1),
# builds it, then runs each `gpsm ARGS` with both binaries, base then variant, then once more in
# the other order (variant then base), so drift over the call shows up as a spread, not a bias.
# Results: $OUT/ab-<n>-{base,variant}-{1,2}.json, the tables in $OUT/ab.log, and $OUT/ab.md: per
# paradigm the four medians and variant / base (experiments/ab/ab_summary.py).
# Usage: experiments/ab/device-ab.sh PATCH 'bench --app pagerank --size road:5120 --gpus 1 --paradigm single,gps' ...
# Make PATCH on the CPU host with `git diff A B > tmp-ab/x.patch` (untracked files travel).
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
[ $# -ge 2 ] || { echo "usage: $0 PATCH 'GPSM ARGS' ['GPSM ARGS' ...]" >&2; exit 2; }
patchfile=$(realpath "$1"); shift
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/ab.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
[ -x build/bin/gpsm ] || { echo "device-ab: build/bin/gpsm missing: build the base first" >&2; exit 2; }
t0=$(date +%s)
rm -rf /tmp/gpsm-ab && mkdir -p /tmp/gpsm-ab
tar cf - --exclude='./build*' --exclude='./out' . | tar xf - -C /tmp/gpsm-ab
(cd /tmp/gpsm-ab && patch -p1 --quiet <"$patchfile") || { echo "device-ab: $patchfile does not apply" | tee -a "$log"; exit 1; }
(cd /tmp/gpsm-ab && GPSM_JOBS=$(nproc) ./scripts/build.sh >/tmp/gpsm-ab-build.log 2>&1) ||
  { tail -40 /tmp/gpsm-ab-build.log | tee -a "$log"; echo "device-ab: variant build failed" | tee -a "$log"; exit 1; }
echo "device-ab: variant ($(basename "$patchfile")) built in $(( $(date +%s) - t0 )) s" | tee -a "$log"
rc=0; n=0
run() {  # run NAME BINARY ARGS...
  local name=$1 bin=$2; shift 2
  echo "== $name: $bin $*" >>"$log"
  "$bin" "$@" --json "$out/ab-$n-$name.json" >>"$log" 2> >(tr '\r' '\n' | grep -v $'\e\[K\[' | grep -v '^$' | tail -5 >>"$log") || rc=1
}
for args in "$@"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  { run base-1 build/bin/gpsm $args; run variant-1 /tmp/gpsm-ab/build/bin/gpsm $args
    run variant-2 /tmp/gpsm-ab/build/bin/gpsm $args; run base-2 build/bin/gpsm $args; }
  echo "device-ab: $args done at $(( $(date +%s) - t0 )) s" | tee -a "$log"
done
python3 experiments/ab/ab_summary.py "$out" --markdown "$out/ab.md" | tee -a "$log" || rc=1
exit $rc
