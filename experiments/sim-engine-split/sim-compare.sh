#!/usr/bin/env bash
# gpsm sim before/after comparison (the engine split; experiments/sim-engine-split/README.md).
#   /tmp/sim-compare.sh BIN OUTDIR
# Runs every case below with BIN into OUTDIR (stdout tables as NAME.txt, --json as NAME.json,
# exit status as NAME.rc). When OUTDIR is not /tmp/sim-before it then diffs OUTDIR against
# /tmp/sim-before and exits non-zero on any difference.
# Normalized before diffing (legitimately run-dependent, nothing else):
#   JSON: .created (timestamp), .duration_s (wall time), .gpsm.commit (the build's commit),
#         in .command the binary's path and the --json file's folder (the rest is compared)
#   stdout: the wall time in the last line "gpsm sim: N simulated run(s) in X.X s (...)"
#   stderr (progress lines with elapsed seconds) is not kept.
# Machine-model inputs: copies in /tmp/sim-fixture/ (from results/..., which may move).
set -u
BIN=${1:-/work/main/build/bin/gpsm}
OUT=${2:-/tmp/sim-after}
BEFORE=/tmp/sim-before
FIX=/tmp/sim-fixture
rm -rf "$OUT" && mkdir -p "$OUT"

cases() {
  local presets="v100-pcie3 v100-pcie4 v100-pcie5 v100-pcie6 dgx1 dgx2 h200x4"
  for s in $presets; do
    local gpus="1,2,4"
    [ "$s" = dgx1 ] && gpus="1,2,4,8"
    [ "$s" = dgx2 ] && gpus="1,2,4,16"
    echo "grid_${s}_jacobi2d|--system $s --gpus $gpus --app jacobi2d --size 512"
    echo "grid_${s}_heat3d|--system $s --gpus $gpus --app heat3d --size 48"
    echo "grid_${s}_wave3d|--system $s --gpus $gpus --app wave3d --size 48"
    echo "grid_${s}_scatter|--system $s --gpus $gpus --app scatter --size 64K"
    echo "grid_${s}_pagerank|--system $s --gpus $gpus --app pagerank --size rmat:10"
    echo "grid_${s}_sssp|--system $s --gpus $gpus --app sssp --size road:64"
  done
  # the machine-model path (from_machine_model) and its named host loop
  for m in h200x2_model_gpus h200x4_scope_full; do
    echo "model_${m}_stencils|--system $FIX/$m.json --gpus 1,2,4 --app all --size 48"
    echo "model_${m}_jacobi2d|--system $FIX/$m.json --gpus 2,4 --app jacobi2d --size 512"
    echo "model_${m}_pagerank|--system $FIX/$m.json --gpus 1,2,4 --app pagerank --size rmat:10,road:64"
    echo "model_${m}_sssp|--system $FIX/$m.json --gpus 2,4 --app sssp --size rmat:10"
  done
  # --explain (per-kernel and loop bounds on stdout)
  echo "explain_h200x4_stencils|--system h200x4 --gpus 2,4 --app all --size 64 --explain"
  echo "explain_h200x4_graphs|--system h200x4 --gpus 1,4 --app pagerank --size rmat:10 --explain"
  echo "explain_h200x4_sssp|--system h200x4 --gpus 4 --app sssp --size rmat:10 --explain"
  echo "explain_pcie4_scatter|--system v100-pcie4 --gpus 4 --app scatter --size 64K --explain"
  # split axes (rdl's remote columns, um pages shared along y), stream host loop, sampling,
  # PROACT chunks that fill, run lengths
  for ax in x y; do
    echo "axis_${ax}_heat3d|--system h200x4 --gpus 2,4 --app heat3d --size 48 --axis $ax --explain"
    echo "axis_${ax}_wave3d|--system v100-pcie4 --gpus 2,4 --app wave3d --size 48 --axis $ax"
  done
  echo "stream_h200x4_stencils|--system h200x4 --gpus 2,4 --app all --size 48 --host-loop stream"
  echo "sample_h200x4_heat3d|--system h200x4 --gpus 1,2,4 --app heat3d --size 96 --sample 0.2"
  echo "sample_pcie3_jacobi2d|--system v100-pcie3 --gpus 2,4 --app jacobi2d --size 1024 --sample 0.3"
  echo "chunk_h200x4_stencils|--system h200x4 --gpus 2,4 --app all --size 48 --proact-chunk 4K --paradigm proact,memcpy"
  echo "iters_dgx1_stencils|--system dgx1 --gpus 2,8 --app all --size 48 --iters 3 --run-iters 0"
  echo "iters_h200x4_sssp|--system h200x4 --gpus 2 --app sssp --size road:64 --iters 40"
  echo "gpsopts_pcie4_scatter|--system v100-pcie4 --gpus 2,4 --app scatter --size 64K --queue 8 --gps-page 4K --subheader 3 --paradigm gps_hw,finepack,p2p_inline"
  # runs that cannot be traced (a box thinner than the halo): unsupported rows and their reasons
  echo "unsupported_h200x4_heat3d|--system h200x4 --gpus 2,8 --app heat3d --size 4 --paradigm memcpy,p2p_inline,rdl,um"
  # sweeps (default values and given ones)
  echo "sweep_link_bw_heat3d|--system v100-pcie4 --gpus 2,4 --app heat3d --size 48 --sweep link_bw"
  echo "sweep_link_bw_pagerank|--system h200x4 --gpus 4 --app pagerank --size rmat:10 --sweep link_bw 50,400"
  echo "sweep_queue_scatter|--system v100-pcie4 --gpus 4 --app scatter --size 64K --sweep queue --paradigm gps_hw,finepack"
  echo "sweep_page_heat3d|--system v100-pcie6 --gpus 4 --app heat3d --size 48 --sweep page --paradigm gps_hw,finepack"
  echo "sweep_subheader_scatter|--system dgx2 --gpus 4 --app scatter --size 64K --sweep subheader --paradigm finepack"
}

run_case() {
  local name=${1%%|*} args=${1#*|}
  # shellcheck disable=SC2086
  "$BIN" sim $args --json "$OUT/$name.json" >"$OUT/$name.txt" 2>/dev/null
  echo $? >"$OUT/$name.rc"
}
export -f run_case
export BIN OUT FIX
cases >"$OUT/CASES"
t0=$(date +%s)
tr '\n' '\0' <"$OUT/CASES" | xargs -0 -P 2 -I{} bash -c 'run_case "$@"' _ {}
echo "ran $(wc -l <"$OUT/CASES") cases with $BIN in $(( $(date +%s) - t0 )) s"

# normalize
for j in "$OUT"/*.json; do
  jq -S 'del(.created, .duration_s, .gpsm.commit) | .command |= (sub("^\\S+"; "gpsm") | sub("--json \\S+/"; "--json "))' "$j" >"$j.norm" && mv "$j.norm" "$j"
done
for t in "$OUT"/*.txt; do
  sed -i -E 's/( simulated run\(s\)(.*)) in [0-9.]+ s \(/\1 in T s (/' "$t"
done

[ "$OUT" = "$BEFORE" ] && exit 0
bad=0
for f in "$BEFORE"/*; do
  b=$(basename "$f")
  if ! cmp -s "$f" "$OUT/$b"; then
    echo "DIFFERS: $b"
    diff "$f" "$OUT/$b" | head -20
    bad=1
  fi
done
for f in "$OUT"/*; do [ -e "$BEFORE/$(basename "$f")" ] || { echo "NEW: $(basename "$f")"; bad=1; }; done
n=$(ls "$BEFORE" | wc -l)
if [ $bad = 0 ]; then echo "IDENTICAL: all $n files"; else echo "NOT IDENTICAL"; fi
exit $bad
