#!/usr/bin/env bash
# Question: on one H200, how much slower is fd3d's rdl step kernel that picks each load's block
# (kRemote=true) than the plain kernel `infinite` runs over the same box, and does the split launch
# (GPSM_FD3D_RDL_LAUNCH=split) recover it? On 2xH200 rdl ran ~11 % over `infinite` at 512^3:h16
# and 768^3:h16 along z; on one GPU the link's cost is gone, so what is left is the kernels'.
# The same configs are split along x and y too (the picking kernel's xy pick differs from z's).
# Compiles rdl_pick_probe.cu against build/src/*.a (the product's fd3d_kernels.cu as built there,
# with its --fmad=false) with the libraries' own nvcc, includes, defines and flags, then runs it
# (~80 s expected: 24 configs, 8 per axis z, x, y, each checked bit for bit against the plain step
# before it is timed).
# Usage: OUT=$OUT experiments/build_then.sh experiments/fd3d-gps/rdl_pick_probe.sh
#    or, build/ already built: OUT=... experiments/fd3d-gps/rdl_pick_probe.sh
# PROBE_ONLY=axis:n:halo:ranks:rank[,...] (e.g. x:512:16:4:1) runs those configs only.
# PROBE_REMOTE=host: the neighbours' blocks in mapped host memory (a link's latency on one GPU).
# BASE_DIR=<dir>: as BASE_REF, from <dir>/src (e.g. `git archive <ref> src | tar x -C <dir>`, with
# the ref in <dir>/COMMIT), for a device machine whose git history lacks the ref.
# BASE_REF=<git ref>: also build the probe with that ref's fd3d_kernels.cu (and the fd3d headers it
# includes) in place of build/'s, and run it first into $OUT/base/: the kernels before and after a
# change, in one call (the probe's own code and every other object are this tree's). The device
# machine's git history may lag the tree it runs (2026-11-29: HEAD there was 8996bf3 while the
# tree was four commits on): the "base =" line names the commit it took; check it.
# B is not used (the probe links the libraries, not the binaries); BUDGET caps the run (default 200 s).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${OUT:-$PWD/out}; mkdir -p "$out"
t0=$(date +%s); budget=${BUDGET:-200}
d=build/src/CMakeFiles/gpsm_apps.dir
[ -f "$d/flags.make" ] || { echo "rdl_pick_probe: $d/flags.make missing: build gpsm first (scripts/build.sh)"; exit 2; }
nvcc=$(sed -n 's/^# compile CUDA with //p' "$d/flags.make")
defs=$(sed -n 's/^CUDA_DEFINES = //p' "$d/flags.make")
flags=$(sed -n 's/^CUDA_FLAGS = //p' "$d/flags.make" | tr -d '"')  # some CMake versions quote a flag
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; bin=$tmp/rdl_pick_probe
# Static libraries in dependency order (apps on top, common at the bottom); only the objects the
# probe reaches are pulled in.
libs="build/src/libgpsm_apps.a build/src/libgpsm_proact.a build/src/libgpsm_proact_cdp.a build/src/libgpsm_runtime.a
      build/src/libgpsm_scope.a build/src/libgpsm_common.a"
set -f  # the flags hold [compute_90,sm_90]: no globbing
# shellcheck disable=SC2086  # the flags are word lists
"${nvcc:-nvcc}" $defs --options-file "$d/includes_CUDA.rsp" $flags experiments/fd3d-gps/rdl_pick_probe.cu $libs \
  -lcudadevrt -ldl -lpthread -lrt -o "$bin" >"$out/rdl_pick_probe.build.log" 2>&1 \
  || { tail -30 "$out/rdl_pick_probe.build.log"; echo "rdl_pick_probe: compile failed"; exit 1; }
if [ -n "${BASE_REF:-}" ] || [ -n "${BASE_DIR:-}" ]; then
  bs=$tmp/base-src; mkdir -p "$bs" "$out/base"
  if [ -n "${BASE_DIR:-}" ]; then
    cp -r "$BASE_DIR/src" "$bs/" || { echo "rdl_pick_probe: no $BASE_DIR/src"; exit 2; }
    base_name="$BASE_DIR/src ($(cat "$BASE_DIR/COMMIT" 2>/dev/null || echo 'no COMMIT file'))"
  else
    git archive "$BASE_REF" src | tar x -C "$bs" || { echo "rdl_pick_probe: git archive $BASE_REF failed"; exit 2; }
    base_name="$BASE_REF ($(git rev-parse --short "$BASE_REF"))"
  fi
  cp build/src/libgpsm_apps.a "$tmp/libgpsm_apps.a"
  # The base sources' directory first: its fd3d headers shadow this tree's (fd3d_kernels.cu's own
  # includes are "apps/fd3d/...", found through -I). --fmad=false as src/CMakeLists.txt builds it.
  # shellcheck disable=SC2086
  (cd "$tmp" && "${nvcc:-nvcc}" $defs -I"$bs/src" --options-file "$OLDPWD/$d/includes_CUDA.rsp" $flags --fmad=false \
      -c "$bs/src/apps/fd3d/fd3d_kernels.cu" -o fd3d_kernels.cu.o && ar r libgpsm_apps.a fd3d_kernels.cu.o) \
      >"$out/base/build.log" 2>&1 || { tail -30 "$out/base/build.log"; echo "rdl_pick_probe: base build failed"; exit 1; }
  # shellcheck disable=SC2086
  "${nvcc:-nvcc}" $defs --options-file "$d/includes_CUDA.rsp" $flags experiments/fd3d-gps/rdl_pick_probe.cu \
    "$tmp/libgpsm_apps.a" ${libs#build/src/libgpsm_apps.a} -lcudadevrt -ldl -lpthread -lrt -o "$tmp/base_probe" \
    >>"$out/base/build.log" 2>&1 || { tail -30 "$out/base/build.log"; echo "rdl_pick_probe: base link failed"; exit 1; }
  left=$(( (budget - ($(date +%s) - t0)) / 2 - 5 )); [ "$left" -gt 10 ] || left=10
  echo "rdl_pick_probe: base = fd3d_kernels.cu of $base_name" | tee "$out/base/rdl_pick_probe.txt"
  timeout "$left" "$tmp/base_probe" "$out/base/rdl_pick_probe.json" 2>&1 | tee -a "$out/base/rdl_pick_probe.txt"
fi
left=$(( budget - ($(date +%s) - t0) - 5 )); [ "$left" -gt 10 ] || left=10
echo "rdl_pick_probe: built in $(( $(date +%s) - t0 )) s; commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  | tee "$out/rdl_pick_probe.txt"
timeout "$left" "$bin" "$out/rdl_pick_probe.json" 2>&1 | tee -a "$out/rdl_pick_probe.txt"
rc=${PIPESTATUS[0]}
echo "rdl_pick_probe: exit $rc" | tee -a "$out/rdl_pick_probe.txt"
exit "$rc"
