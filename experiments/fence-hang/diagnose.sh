#!/usr/bin/env bash
# Question: why did GpsDeviceFence.PersistentHaloIterationsLoseNoUpdate run past the 300-s step on
# 2xH200 at 7877357 (it passed in 533 ms at c0b14f7), when every device wait traps after 10 s?
# Runs the test alone up to TRIES times (each cut at 45 s); on the first that is still running
# after 30 s it records the GPUs' utilization, a host backtrace (gdb) and cuda-gdb's view of the
# kernels, then kills it. Then the fence tests in the binary's order, then the rest of the GPU
# test binary without the ring test, in what is left of BUDGET.
# Usage on the device: OUT=$OUT experiments/build_then.sh experiments/fence-hang/diagnose.sh
set -uo pipefail
: "${B:?B: the folder holding gpsm_gpu_tests}"
out=${OUT:-$PWD/out}; mkdir -p "$out"; t0=$(date +%s); total=${BUDGET:-450}
left() { echo $(( total - ($(date +%s) - t0) )); }
T=$B/gpsm_gpu_tests; log=$out/hang.txt
probe() {  # probe FILTER: runs it cut at 45 s; on a hang after 30 s, records what it can
  local f=$1 s; s=$(date +%s)
  "$T" --gtest_filter="$f" >"$out/run.log" 2>&1 &
  local pid=$!
  for _ in $(seq 60); do sleep 0.5; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then
    echo "== $f still running after 30 s: utilization" >>"$log"
    nvidia-smi --query-gpu=index,utilization.gpu,power.draw,clocks.sm --format=csv >>"$log" 2>&1
    command -v gdb >/dev/null && timeout 40 gdb -p $pid -batch -ex "thread apply all bt" >>"$log" 2>&1
    CG=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
    [ -x "$CG" ] && timeout 60 "$CG" -p $pid -batch -ex "info cuda kernels" -ex "info cuda blocks" \
      -ex "cuda kernel 0 block 0 thread 0" -ex "bt" -ex "cuda kernel 1 block 0 thread 0" -ex "bt" >>"$log" 2>&1
    kill -9 $pid; wait $pid 2>/dev/null
    echo "$f: HUNG (killed after $(( $(date +%s) - s )) s)" >>"$log"; tail -20 "$out/run.log" >>"$log"; return 1
  fi
  wait $pid; local rc=$?
  echo "$f: rc=$rc in $(( $(date +%s) - s )) s; $(grep -h 'fence halo\|OK \]\|FAILED \]' "$out/run.log" | tr '\n' ' ')" >>"$log"
  [ $rc -eq 0 ] || tail -40 "$out/run.log" >>"$log"
  return 0
}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nvidia-smi topo -m >"$out/topo.txt" 2>&1
for i in $(seq "${TRIES:-4}"); do probe 'GpsDeviceFence.PersistentHalo*' || break; done
probe 'GpsDeviceFence.*'
l=$(left); echo "rest of the binary, $l s left" >>"$log"
[ "$l" -gt 60 ] && timeout $(( l - 15 )) "$T" --gtest_filter='-GpsDeviceFence.PersistentHalo*' \
  --gtest_output=xml:"$out/gpu-tests.xml" >"$out/gpu-tests.log" 2>&1; echo "rest rc=$? in $(( $(date +%s) - t0 )) s" >>"$log"
grep -E '^\[ *(PASSED|FAILED|SKIPPED) *\]|tests ran' "$out/gpu-tests.log" >>"$log"
cat "$log"
