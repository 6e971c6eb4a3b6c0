#!/usr/bin/env bash
# README command 1: the main job. With GPUs: `gpsm scope --quick` (a one-minute characterization
# of this node), then `gpsm bench` (every app on every paradigm it has, on 1, 2, 4... GPUs up to
# the GPUs present), results and plots in gpsm-out/. Without a GPU: says so and runs the
# simulator instead (`gpsm sim --app all --gpus 1,2,4 --system h200x4`, gpsm-out/sim.json).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
[ -x build/bin/gpsm ] || ./scripts/build.sh >/dev/null
if ./build/bin/gpsm info | grep -q '^GPUs: none'; then
  # The apps at their strong-scaling sizes (the large ones take the simulator far longer: run
  # gpsm sim --app all for those), on the 4xH200 node measured here.
  echo "gpsm: no GPU here: running the simulator (simulated results) on the h200x4 preset"
  mkdir -p gpsm-out
  for app_size in jacobi2d:4096 heat3d:256 wave3d:256; do
    echo "gpsm: gpsm sim --app ${app_size%%:*} --size ${app_size##*:} --gpus 1,2,4 --system h200x4"
    ./build/bin/gpsm sim --app "${app_size%%:*}" --size "${app_size##*:}" --gpus 1,2,4 --system h200x4 \
      --json "gpsm-out/sim-${app_size%%:*}.json"
  done
  echo "gpsm: simulated results in gpsm-out/sim-*.json (run this command on a GPU node to measure)"
  exit 0
fi
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
./build/bin/gpsm scope --quick --out gpsm-out "$@"
ngpu=$(./build/bin/gpsm info | sed -n 's/^GPUs: \([0-9][0-9]*\).*/\1/p')
counts=1; g=2
while [ -n "$ngpu" ] && [ "$g" -le "$ngpu" ]; do counts="$counts,$g"; g=$((g * 2)); done
./build/bin/gpsm bench --app all --gpus "$counts" --json gpsm-out/bench.json
./build/bin/gpsm report gpsm-out/results.json gpsm-out/bench.json --out gpsm-out/plots ||
  echo "gpsm: plots skipped (matplotlib missing?)"
