#!/usr/bin/env bash
# Strong scaling of the whole suite on one GPU machine (issue 8: nvidia-h200-x8; dry runs on
# nvidia-h200-x4 with --gpus 1,2,4): builds and tests via device-run.sh (unless --no-build), then
# `gpsm scope --quick`, then `gpsm bench` for every app at its default sizes and every paradigm
# on each GPU count, each app under its own time limit. Results and logs go to $OUT (at most 8
# files come back from the device tool, so the logs are gathered into logs.txt and bench.log).
# Usage: GPSM_COMMIT=<sha> scripts/device-scaling.sh [--gpus 1,2,4,8] [--apps "jacobi2d heat3d wave3d"]
#          [--limit SECONDS] [--no-build] [--tests quick|none]
set -uo pipefail
cd "$(dirname "$0")/.."
n=$(nvidia-smi -L 2>/dev/null | wc -l)
gpus=""; apps="jacobi2d heat3d wave3d"; limit=300; build=1; tests=quick
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) gpus=$2; shift 2;;
    --apps) apps=$2; shift 2;;
    --limit) limit=$2; shift 2;;
    --no-build) build=0; shift;;
    --tests) tests=$2; shift 2;;
    *) echo "device-scaling: unknown argument $1 (see the header of $0)" >&2; exit 2;;
  esac
done
[ "$n" -gt 0 ] || { echo "device-scaling: no GPU here (nvidia-smi -L lists none); run it through the device tool" >&2; exit 2; }
if [ -z "$gpus" ]; then  # 1, 2, 4, ... up to every GPU of the machine
  gpus=1; g=2; while [ $g -le "$n" ]; do gpus="$gpus,$g"; g=$((g * 2)); done
  [ $((g / 2)) -eq "$n" ] || gpus="$gpus,$n"
fi
out=${OUT:-$PWD/out}; mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
kind=${GPSM_DEVICE_KIND:-nvidia-h200-x$n}
if [ $build = 1 ]; then
  bash scripts/device-run.sh --kind "$kind" --tests "$tests" --bench none >/dev/null 2>&1 || echo "device-scaling: device-run.sh failed (see logs.txt)"
  [ -f "$out/tests.log" ] && grep -E "Failure|FAILED|Expected|Which is" "$out/tests.log" | head -60 >>"$out/logs.txt"
  rm -f "$out/ctest.xml" "$out/tests.log"
fi
[ -x build/bin/gpsm ] || { echo "device-scaling: build/bin/gpsm missing: the build failed" >&2; exit 1; }
echo "device-scaling: $n GPUs, counts $gpus, apps $apps" | tee -a "$out/logs.txt"
t0=$(date +%s)
timeout 240 ./build/bin/gpsm scope --quick --out "$out/scope" >>"$out/logs.txt" 2>/dev/null || echo "device-scaling: gpsm scope failed or timed out" | tee -a "$out/logs.txt"
# scope writes a folder; keep its machine model and results in one archive (the 8-file limit)
[ -d "$out/scope" ] && tar -C "$out" -czf "$out/scope.tar.gz" scope && rm -rf "$out/scope"
echo "device-scaling: scope in $(( $(date +%s) - t0 )) s" | tee -a "$out/logs.txt"
# shellcheck disable=SC2086
bash scripts/device-bench.sh --gpus "$gpus" --limit "$limit" $apps
rc=$?
if ls "$out"/bench-*.json >/dev/null 2>&1; then
  ./build/bin/gpsm report "$out"/bench-*.json --out /tmp/gpsm-plots >/dev/null 2>&1 &&
    tar -C /tmp -czf "$out/plots.tar.gz" gpsm-plots
  # one archive for every app's results file (the device tool's 8-file limit)
  (cd "$out" && tar -czf bench-json.tar.gz bench-*.json && rm -f bench-*.json)
fi
exit $rc
