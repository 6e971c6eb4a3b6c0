#!/usr/bin/env bash
# One device call for um / um_hints / rdl on the 3D marching step (branch march3d): build + the
# Stencil3D GPU tests, then `gpsm bench` of heat3d and wave3d at 256^3 for the paradigms it
# changed next to single and p2p_inline (same kernel, the bytes elsewhere), along z on 1, 2 and 4
# GPUs, and along y and x on 4 GPUs (um_hints is unsupported along x). Keeps at most 8 files in
# $OUT (the device tool's limit): logs.txt, bench.log and one results file per run.
# Usage (4xH200): GPSM_COMMIT=<sha> bash experiments/march3d/device-march3d.sh
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"
# TEST_FILTER=none: gpsm is already built (e.g. by an earlier step of scripts/device-batch.sh)
if [ "${TEST_FILTER:-}" != none ]; then
  bash scripts/device-run.sh --kind nvidia-h200-x4 --tests quick --filter "${TEST_FILTER:-Stencil3D}" --bench none >/dev/null 2>&1
  grep -E "Failure|FAILED|Expected|Which is|error|tests passed|tests failed" "$out/tests.log" | head -80 >>"$out/logs.txt"
  rm -f "$out/ctest.xml" "$out/tests.log"
fi
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
run() {  # app axis gpus paradigms
  echo "command: build/bin/gpsm bench --app $1 --axis $2 --gpus $3 --size 256 --paradigm $4 --json \$OUT/$1-$2.json" >>"$out/bench.log"
  timeout "${RUN_LIMIT:-150}" build/bin/gpsm bench --app "$1" --axis "$2" --gpus "$3" --size 256 --paradigm "$4" \
    --json "$out/$1-$2.json" >>"$out/bench.log" 2>/dev/null
  echo "device-march3d: $1 along $2 rc=$?" >>"$out/bench.log"
}
for app in heat3d wave3d; do
  run "$app" z 1,2,4 single,um,um_hints,rdl,p2p_inline
  run "$app" y 4 um,um_hints,rdl,p2p_inline
done
run heat3d x 4 um,rdl,p2p_inline
