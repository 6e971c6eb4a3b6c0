#!/usr/bin/env bash
# Question (2026-11-29): heat3d / wave3d 256^3 on 2 GPUs, gps ~30 / ~35 us against um_hints'
# ~27 / ~33. gps's host loop orders the GPUs with fence_async(): by default a one-block barrier
# kernel per GPU per iteration (GPSM_ASYNC_FENCE=kernel), which 4 GPUs need (events there: 78 us
# against 16 at heat3d 256^3); um_hints orders them with the loop's events, graph edges between
# neighbours. Is the barrier kernel what gps pays on 2 GPUs? kernel / events / events / kernel in
# one call, same binary, every run verified. Prediction: events 1-2 us faster on 2 GPUs.
# Usage on a device: B=<bin> G=0,1 OUT=$OUT experiments/gps-ratio/async_fence_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm}"
n=2; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
out=${OUT:-$PWD/out}; mkdir -p "$out"
i=0
for f in kernel events events kernel; do
  i=$((i + 1))
  for app in heat3d wave3d; do
    GPSM_ASYNC_FENCE=$f "$B/gpsm" bench --app $app --size 256 --gpus $n --reps 5 --paradigm um_hints,p2p_inline,gps \
      --json "$out/$app-$i-$f.json" >"$out/$app-$i-$f.log" 2>&1 || echo "async_fence_ab: $app $f failed"
  done
done
grep -h -E "^  (um_hints|p2p_inline|gps) " "$out"/*.log | head -40
