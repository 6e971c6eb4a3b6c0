#!/usr/bin/env bash
# Reproduces the papers' simulator experiments on the 4x V100 PCIe 4 preset with `gpsm sim` (CPU
# only, no GPU): the paradigm comparison of GPS paper Fig 8 / PROACT dissertation Fig 5.7
# (jacobi2d, heat3d, scatter), FinePack's link efficiency over P2P stores on small scattered
# stores (scatter), and the sweeps of GPS paper Fig 13-14 and PROACT dissertation Fig 5.10-5.11
# (link bandwidth, write queue entries, GPS page size, FinePack sub-header bytes) on scatter and
# jacobi2d. docs/sim.md "Reproduction of the papers' simulated systems" discusses the numbers.
#
# Usage: scripts/sim-reproduce.sh OUTDIR   (writes OUTDIR/*.json, *.log, commands.txt, summary.md)
# GPSM overrides the binary (default build/bin/gpsm). About 5 minutes on one core.
set -euo pipefail
out=${1:?usage: scripts/sim-reproduce.sh OUTDIR}
cd "$(dirname "$0")/.."
gpsm=${GPSM:-build/bin/gpsm}
[ -x "$gpsm" ] || { echo "sim-reproduce: $gpsm not built (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$out"
: >"$out/commands.txt"
sys=v100-pcie4
run() {  # run NAME ARGS...: gpsm sim ARGS --json OUT/NAME.json, the table to OUT/NAME.log
  local name=$1
  shift
  local cmd=("$gpsm" sim --system "$sys" "$@" --json "$out/$name.json")
  echo "${cmd[*]}" | sed "s#$out/#OUT/#" >>"$out/commands.txt"
  echo "== $name" >&2
  local t0=$SECONDS
  "${cmd[@]}" >"$out/$name.log" 2>"$out/$name.err" || { tail -5 "$out/$name.err" >&2; exit 1; }
  rm -f "$out/$name.err"  # progress lines only
  echo "   $((SECONDS - t0)) s" >&2
}
# Paradigm comparison (GPS paper Fig 8, PROACT dissertation Fig 5.7): 1 GPU (the baseline) and 4
# GPUs.
# jacobi2d at 4096^2 (host-loop bound on 4 GPUs) and 8192^2 (every block traced: GPS subscriptions
# need unsampled traces, docs/sim.md "Not modelled").
run paradigms_jacobi2d --app jacobi2d --size 4096,8192 --gpus 1,4 --paradigm all --sample 1
run paradigms_heat3d --app heat3d --size 256 --gpus 1,4 --paradigm all
run paradigms_scatter --app scatter --size 1M --gpus 1,4 --paradigm all
# Sweeps (GPS paper Fig 13-14, PROACT dissertation Fig 5.10-5.11) on scatter and jacobi2d.
for app in scatter jacobi2d; do
  size=1M
  [ "$app" = jacobi2d ] && size=4096
  run "sweep_link_bw_$app" --app "$app" --size "$size" --gpus 1,4 \
    --paradigm memcpy,p2p_inline,gps_hw,finepack,proact,infinite --sweep link_bw 8,16,32,64,128,256
  run "sweep_queue_$app" --app "$app" --size "$size" --gpus 4 --paradigm p2p_inline,gps_hw,finepack \
    --sweep queue 16,32,64,128,256,512
  run "sweep_page_$app" --app "$app" --size "$size" --gpus 4 --paradigm p2p_inline,gps_hw,finepack \
    --sweep page 4K,64K,2M
  run "sweep_subheader_$app" --app "$app" --size "$size" --gpus 4 --paradigm p2p_inline,finepack \
    --sweep subheader 2,3,4,5,6
done
python3 scripts/sim_reproduce_summary.py "$out" >"$out/summary.md"
echo "sim-reproduce: wrote $out (summary.md)" >&2
