#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: how a 3D um solve's iterations cost
# from the first one on (gpsm sim's um model: when do the halo pages pin?).
# Output: $OUT/um-pin.log, $OUT/um-pin-<app>-<gpus>-<iters>.json (gpsm.results).
#
# Usage: experiments/um-probes/device-probe-um-pin.sh [long|protocol]  (long: solves of 48-256 iterations;
# protocol: three fresh 100-iteration solves each, then the bench's own protocol, 1 warm-up + 5 reps)
# Each point is a fresh process (fresh managed buffers, nothing pinned), one timed solve of N
# iterations, no warm-up; the marginal cost of iterations (N1, N2] is the difference of the
# solves' totals. um_hints at the longest N is the no-fault baseline of the same run.
#
# Prediction, written before the run (the model's cadence, docs/sim.md "The sampled 3D march's
# halo chunks; demand migration on several GPUs at once"): a halo page goes over at the start of
# the neighbour's march, back at the end of the owner's, and over again two iterations later; it
# pins only if 2T - kernel < 500 us. If its 2 MiB a GPU migrate at um_fault_all's 8.19 GB/s,
# heat3d 512^3 on 2 GPUs has T ~ 450 us and never pins: every iteration costs ~300 us over
# um_hints at every N. The bench's 156.7 us (100 iterations after a warm-up solve) says it pins;
# so either its first iterations are cheap (migrations far faster than um_fault_all's), or they
# are dear and the pages pin anyway (the model's rule is wrong).
# Protocol mode, predicted before its run: fresh 100-iteration heat3d solves average 300-700 us
# (between the long run's N = 96 and 128 points) with a wide spread; in the bench's protocol the
# timed reps are faster (the warm-up's pins carry over), near 157 us, unless a pin's 150-ms life
# runs out between reps; wave3d's reps stay near 1 ms.
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/um-pin.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
rc=0
run() {  # app gpus paradigm iters
  local f="$out/um-pin-$1-$2-$3-$4.json"
  timeout 120 ./build/bin/gpsm bench --app "$1" --size 512 --gpus "$2" --paradigm "$3" --iters "$4" \
    --reps 1 --warmup 0 --json "$f" >>"$log" 2>&1 || rc=1
  python3 - "$f" "$1" "$2" "$3" "$4" <<'EOF' | tee -a "$log.table"
import json, sys
f, app, gpus, par, iters = sys.argv[1:]
try:
    d = json.load(open(f))
except Exception as e:
    print(f"{app} {gpus} {par} {iters} no result ({e})"); sys.exit()
pts = [p for t in d.get("tests", []) for s in t.get("series", []) for p in s.get("points", [])]
if not pts:
    print(f"{app} gpus={gpus} {par} iters={iters} no point"); sys.exit()
p = pts[0]
print(f"{app} gpus={gpus} {par} iters={iters} us_per_iter={p['median']:.2f} solve_us={p['median'] * int(iters):.1f} verified={p['verified']}")
EOF
}
if [ "${1:-}" = protocol ]; then  # the spread of fresh 100-iteration solves, then the bench's protocol
  for rep in 1 2 3; do run heat3d 2 um 100; run wave3d 2 um 100; done
  for app in heat3d wave3d; do
    f="$out/um-pin-$app-2-um-protocol.json"
    timeout 150 ./build/bin/gpsm bench --app $app --size 512 --gpus 2 --paradigm um --iters 100 --reps 5 --warmup 1 \
      --json "$f" >>"$log" 2>&1 || rc=1
    python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['tests'][0]['series'][0]['points'][0]; print(sys.argv[2], 'gpus=2 um iters=100 warmup=1 reps=5: per-rep us', [round(t*1e6,1) for t in p['time_s']], 'median', round(p['median'],2), 'verified', p['verified'])" "$f" $app | tee -a "$log.table"
  done
elif [ "${1:-}" = long ]; then  # longer solves: when do heat3d's pages pin?
  for it in 48 64 96 128 192 256; do run heat3d 2 um $it; run heat3d 4 um $it; done
  for it in 64 256; do run wave3d 2 um $it; done
else
  for it in 1 2 3 4 6 8 12 16 24 32; do
    run heat3d 2 um $it; run wave3d 2 um $it; run heat3d 4 um $it
  done
  run heat3d 2 um_hints 32; run wave3d 2 um_hints 32; run heat3d 4 um_hints 32
fi
cat "$log.table"
exit $rc
