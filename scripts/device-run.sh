#!/usr/bin/env bash
# On a GPU machine (the device tool's): build, run the GPU tests, run a named benchmark set, and
# leave machine-readable results in $OUT (default ./out) for results/<machine-kind>/.
# Usage: GPSM_COMMIT=$(git rev-parse --short=12 HEAD) scripts/device-run.sh [--kind KIND]
#          [--tests quick|full|none] [--filter CTEST_REGEX] [--tests-limit S] [--sanitize] [--publish "ARGS"]
#          [--bench quick|full|none] [-- extra scope args]
#   --tests-limit S  stop ctest after S seconds; gpu-tests.json then comes from its log (the quick
#                    suite took ~240 s on 2xH200; on 4xH200 its 454 tests before package.consumer took
#                    496 s, 2026-11-22: with the build it does not fit one 600-s call there. Its 91
#                    gpu.* tests took 470 s: on x4 run --filter '^gpu\.' (CI runs the others))
#   --sanitize       compute-sanitizer memcheck and racecheck over the GPS GPU tests (scaled down)
#   --publish ARGS   run `gpsm publish ARGS --json $OUT/publish.json`
# The tree must carry .deps (scripts/setup.sh stages it, ~7 MB): the GPU machine has no package
# registry. Do not carry .deps-nccl (330 MB) or .deps-nvshmem (45 MB): there CMake finds NCCL and
# NVSHMEM in python3's nvidia/nccl and nvidia/nvshmem.
set -uo pipefail
cd "$(dirname "$0")/.."
kind=${GPSM_DEVICE_KIND:-unknown}; tests=quick; tests_limit=; bench=quick; filter=""; sanitize=0; publish=
while [ $# -gt 0 ]; do
  case $1 in
    --kind) kind=$2; shift 2;;
    --tests) tests=$2; shift 2;;
    --bench) bench=$2; shift 2;;
    --filter) filter=$2; shift 2;;
    --tests-limit) tests_limit=$2; shift 2;;
    --sanitize) sanitize=1; shift;;
    --publish) publish=$2; shift 2;;
    --) shift; break;;
    *) echo "device-run: unknown argument $1" >&2; exit 2;;
  esac
done
out=${OUT:-$PWD/out}; mkdir -p "$out"
export GPSM_DEVICE_KIND=$kind NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
[ -d .deps/json/include ] || { echo "device-run: .deps missing: run scripts/setup.sh here and carry .deps" >&2; exit 2; }
# at most 8 files come back from the device tool: logs.txt gathers the small logs
log="$out/logs.txt"
{ nvidia-smi -L; nvidia-smi topo -m; } >"$log" 2>&1; cat "$log"
# the device tool sends the tree without .git: pass GPSM_COMMIT=<sha> in the command
# (an explicit GPSM_COMMIT is trusted: the device copy's .git, if any, can be stale)
if [ -n "${GPSM_COMMIT:-}" ]; then
  commit=$GPSM_COMMIT
else
  commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  dirty=$(git status --porcelain 2>/dev/null | grep -v '^??' | head -1)
  [ -n "$dirty" ] && commit="$commit-dirty"
fi
export GPSM_COMMIT=$commit
t0=$(date +%s)
GPSM_JOBS=$(nproc) ./scripts/build.sh -DGPSM_TEST_LEVEL="$([ "$tests" = full ] && echo full || echo quick)" \
  >/tmp/gpsm-build.log 2>&1 || { tail -60 /tmp/gpsm-build.log | tee -a "$log"; echo "device-run: build failed"; exit 1; }
echo "device-run: built in $(( $(date +%s) - t0 )) s"
rc=0
if [ "$tests" != none ]; then
  # --tests-limit: ctest stops there and the results come from its log (the tests it had started
  # and not finished are "unfinished"), so a suite cut by the call's limit still leaves gpu-tests.json
  rm -f "$out/ctest.xml"
  (cd build && ${tests_limit:+timeout --kill-after=10 "$tests_limit"} ctest --output-on-failure --timeout 600 \
     ${filter:+-R "$filter"} --output-junit "$out/ctest.xml") >"$out/tests.log" 2>&1 || rc=1
  grep -E "tests passed|tests failed|\(Failed\)|\(Skipped\)|\(Timeout\)" "$out/tests.log" | tail -30 | tee -a "$log"
  cmd="scripts/device-run.sh --kind $kind --tests $tests ${filter:+--filter $filter} ${tests_limit:+--tests-limit $tests_limit} --bench $bench"
  if [ -s "$out/ctest.xml" ]; then
    python3 scripts/junit_to_json.py "$out/ctest.xml" --kind "$kind" --commit "$commit" --command "$cmd" >"$out/gpu-tests.json" || rc=1
  else
    echo "device-run: ctest left no XML (${tests_limit:+stopped at --tests-limit $tests_limit s, or }killed): results from its log" | tee -a "$log"
    python3 scripts/junit_to_json.py --log "$out/tests.log" --kind "$kind" --commit "$commit" --command "$cmd" >"$out/gpu-tests.json" || rc=1
  fi
fi
if [ "$sanitize" = 1 ]; then
  # kernels run ~100x slower under the sanitizer: GPSM_TEST_SCALE shrinks trials and sizes; the
  # withheld-producer test traps on purpose (in a child process) and is left out. API error
  # reports are off: a context enables peer access and accepts "already enabled" (every other
  # CUDA call is checked by gpsm and fails the test)
  san_filter='Gps*:Gps/*:-GpsSync.WithheldProducerEndsInBoundedWaitMessage'
  for tool in memcheck racecheck; do
    t1=$(date +%s)
    GPSM_TEST_SCALE=0.002 timeout 240 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 --print-limit 20 \
      build/tests/gpsm_gpu_tests --gtest_filter="$san_filter" >"/tmp/san-$tool.log" 2>&1
    src=$?
    { echo "== compute-sanitizer --tool $tool (rc=$src, $(( $(date +%s) - t1 )) s)"; grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran|Hazard|Invalid" "/tmp/san-$tool.log" | head -40; } | tee -a "$log"
    [ $src -eq 0 ] || rc=1
    cat "/tmp/san-$tool.log" >>"$out/sanitizer.log"
  done
fi
if [ -n "$publish" ]; then
  echo "command: build/bin/gpsm publish $publish --json \$OUT/publish.json" >>"$log"
  # shellcheck disable=SC2086
  ./build/bin/gpsm publish $publish --json "$out/publish.json" >"$out/publish.log" 2>>"$log" || rc=1
  cat "$out/publish.log"
fi
if [ "$bench" != none ]; then
  args=(); [ "$bench" = quick ] && args+=(--quick)
  echo "command: build/bin/gpsm scope ${args[*]} --out \$OUT/scope $*" >>"$log"
  ./build/bin/gpsm scope "${args[@]}" --out "$out/scope" "$@" >"$out/scope.log" 2>/tmp/gpsm-scope.err || rc=1
  # progress lines end in \r: keep only the messages
  tr '\r' '\n' </tmp/gpsm-scope.err | grep -v $'^\e\[K' | grep -v '^$' | grep -v '^\[[0-9]*/[0-9]*\]' >>"$log" || true
  tail -c 5000 "$out/scope.log"
fi
echo "device-run: done in $(( $(date +%s) - t0 )) s, rc=$rc" | tee -a "$log"
exit $rc
