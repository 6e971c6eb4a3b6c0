#!/usr/bin/env bash
# One device call for the 3D host-loop launch change: build + Stencil3D GPU tests, Nsight Compute
# on the step vs persistent kernel, the 3D bench at both sizes (default launch: CUDA graph), and
# the host-driven paradigms again with GPSM_HOST_LOOP=stream at the strong-scaling size.
# Keeps at most 8 files in $OUT (the device tool's limit).
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"
bash scripts/device-run.sh --kind nvidia-h200-x4 --tests quick --filter "${TEST_FILTER:-Stencil3D}" --bench none >/dev/null 2>&1
grep -E "Failure|FAILED|Expected|Which is|error" "$out/tests.log" | head -80 >>"$out/logs.txt"
rm -f "$out/ctest.xml" "$out/tests.log"
[ "${NCU:-1}" = 1 ] && bash experiments/stencil3d-launch/device-probe-3d.sh 256 >"$out/ncu-3d.log" 2>&1
bash scripts/device-bench.sh --limit 200 heat3d wave3d
for app in heat3d wave3d; do
  echo "command: GPSM_HOST_LOOP=stream build/bin/gpsm bench --app $app --gpus 1,2,4 --size 256 --paradigm single,memcpy,rdl,p2p_inline,infinite --json \$OUT/stream-$app.json" >>"$out/bench.log"
  GPSM_HOST_LOOP=stream timeout 150 build/bin/gpsm bench --app $app --gpus 1,2,4 --size 256 \
    --paradigm single,memcpy,rdl,p2p_inline,infinite --json "$out/stream-$app.json" >>"$out/bench.log" 2>/dev/null
done
