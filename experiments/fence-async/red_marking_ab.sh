#!/usr/bin/env bash
# Question (written 2026-11-30, not yet run): since d6f226e a combine / decoupled store marks its
# dirty bit with a reduction (REDG.E.OR.STRONG.SYS in publish_bench.cu's SASS) instead of a
# returning system-scope atomic whose old value decided whether to raise dirty_any (the fence now
# raises it). How much does that give where stores are many and scattered: `gpsm publish` combine
# on random / strided / coalesced 4-byte stores (issue 28's >= 3x inline goodput target: on 2xH200
# local/inline was 2.76x, so below 3x whatever the mode; on 4xH200 combine was 2.62-2.90x), and CT
# medium's gps update (105.84 ms an iteration against memcpy's 101.37 at 997b51e)?
# Prediction: combine random 10-25 % faster, CT's update within 2 % of memcpy's.
# red / atomic (atomic_marking.patch puts the returning atomic back; view.hpp: most kernels
# rebuild) / red, in one call; the fence tests first (fence_async's new path and the marking).
# Usage on a device: B=build/bin G=0,1[,2,3] OUT=$OUT experiments/fence-async/red_marking_ab.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}" "${G:?}"
n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
[ "${BUDGET:-570}" -ge 430 ] || { echo "red_marking_ab: needs 430 s of budget, has ${BUDGET}; nothing run"; exit 1; }
P=experiments/fence-async
rebuild='GPSM_JOBS=$(nproc) ./scripts/build.sh >/dev/null 2>&1 || { echo rebuild failed; exit 1; }'
runs() {  # runs TAG
  echo "$B/gpsm publish --devices $G --mode local,inline,combine --json \$STEP_OUT/$1-publish.json; $B/gpsm bench --app ct --size medium --gpus $n --reps 5 --paradigm memcpy,gps --json \$STEP_OUT/$1-ct.json"
}
steps=(
  "tests:60:$B/gpsm_gpu_tests --gtest_filter='*GpsFenceAsync*:*GpsDecoupled*:*MultiGpuGraph*:GpsModes*:GpsDrain*' --gtest_output=xml:\$STEP_OUT/gpu-tests-fence.xml"
  "red1:60:$(runs red1)"
  "atomic:260:git apply $P/atomic_marking.patch && $rebuild && $(runs atomic); git apply -R $P/atomic_marking.patch && $rebuild"
  "red2:60:$(runs red2)"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
