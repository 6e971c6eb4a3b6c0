#!/usr/bin/env bash
# The multi-GPU loop's overhead beside its kernel, for the simulator's graph-loop model (docs/sim.md,
# "A switched node, the phase wait and the copy after a kernel"): on every GPU of the machine,
# lat_event_hop's phase waits (gated, host-issued, CUDA graph) six times, then the 3D apps' 256^3
# runs on all GPUs beside the one-GPU run of the box each GPU owns there (bench loop), and the step
# kernel of both under Nsight Compute (cold L2). Prediction, from 2xH200 (graph wait 1.66 us,
# host-issued 2.39): on 4 GPUs the middle GPUs wait for two neighbours and the host-issued phase
# for three peers, so the waits should be no smaller; the 4-GPU 256^3 loop should exceed its
# one-GPU box (256x256x64: 8.21 us on 2xH200) by the graph wait plus the kernel's plan difference.
# Usage (device): OUT=dir experiments/phase-wait/device-probe-phase-wait.sh
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:?OUT}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
n=$(nvidia-smi -L | wc -l)
devs=$(seq -s, 0 $((n - 1)))
nvidia-smi topo -m >"$out/topo.txt" 2>&1
for i in 1 2 3 4 5 6; do
  build/bin/gpsm scope -t lat_event_hop --devices "$devs" --json "$out/scope-hop-$i.json" >"$out/scope-hop-$i.log" 2>&1 ||
    echo "lat_event_hop run $i failed"
  grep -E "phase wait" "$out/scope-hop-$i.log"
done
nz=$((256 / n))
for app in heat3d wave3d; do
  build/bin/gpsm bench --app $app --size 256 --gpus "$n" --paradigm infinite,p2p_inline,rdl --json "$out/bench-$app-$n.json" \
    >"$out/bench-$app-$n.log" 2>&1 && tail -4 "$out/bench-$app-$n.log"
  build/bin/gpsm bench --app $app --size "256x256x$nz" --gpus 1 --paradigm infinite --json "$out/bench-$app-box.json" \
    >"$out/bench-$app-box.log" 2>&1 && tail -2 "$out/bench-$app-box.log"
  APP=$app CASES="256x256x$nz:1:infinite 256:$n:infinite" experiments/l2-steady-state/device-probe-heat3d-box.sh
done
