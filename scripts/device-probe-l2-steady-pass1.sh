#!/usr/bin/env bash
# The step kernel in the loop's steady state without ncu's replay: ncu restores memory between the
# passes of a multi-pass profile, which leaves the L2 as cold as a flush (2026-11-22_ce12b60's
# 3-pass profiles read as many DRAM bytes as cold ones). Here each metric set is one pass:
# the duration alone, then the DRAM bytes alone. If nsys is there, it also records the bench's
# own loop (kernels of the CUDA graph, nothing serialized) for the 2-GPU runs.
# Usage (device): OUT=dir scripts/device-probe-l2-steady-pass1.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:?OUT}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CACHE=none
cases="256x256x64:1:infinite 256x256x96:1:infinite 256x256x128:1:infinite 256:1:infinite 256x256x128:2:infinite 256:2:infinite"
for app in heat3d wave3d; do
  for m in gpu__time_duration.sum dram__bytes_read.sum,dram__bytes_write.sum; do
    mkdir -p "$out/$m"
    OUT="$out/$m" METRICS=$m APP=$app CASES="$cases" scripts/device-probe-heat3d-box.sh
  done
done
if command -v nsys >/dev/null; then
  nsys --version
  for app in heat3d wave3d; do
    for s in 256x256x64:1 256x256x128:2 256:2; do
      IFS=: read -r size g <<<"$s"
      timeout 120 nsys profile --cuda-graph-trace=node -o "$out/nsys-$app-$size-$g" --force-overwrite true \
        build/bin/gpsm bench --app $app --size $size --gpus $g --paradigm infinite >"$out/nsys-$app-$size-$g.log" 2>&1
      timeout 120 nsys stats -r cuda_gpu_kern_sum,cuda_gpu_trace -f csv -o "$out/nsys-$app-$size-$g" "$out/nsys-$app-$size-$g.nsys-rep" \
        >>"$out/nsys-$app-$size-$g.log" 2>&1
      rm -f "$out/nsys-$app-$size-$g.nsys-rep" "$out/nsys-$app-$size-$g.sqlite"
      gzip -f "$out"/nsys-$app-$size-$g*cuda_gpu_trace*.csv 2>/dev/null
      grep -A3 "Time (%)" "$out"/nsys-$app-$size-$g*kern_sum*.csv 2>/dev/null | head -5
    done
  done
else
  echo "no nsys on this machine"
fi
