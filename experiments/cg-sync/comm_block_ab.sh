#!/usr/bin/env bash
# Does a communication block close gps_pipe's one-GPU gap to cpu_free_pipe (poisson2d:512 11.67
# against 10.92 us at 436c85a)? Base binaries B0 (the fence's last block to arrive reduces, then
# runs its own chunks) against B1 (block 0 reduces through DeviceFence::count_in/publish_values
# and runs no chunks, as cpu_free_pipe's block 0), interleaved base, new, new, base on the small
# sizes and the 2- and 4-GPU shares of 2048^2; then the device-fence and CG GPU tests of B1.
# Run at e53b980 by experiments/cg-sync/comm_block_device.sh, which builds both on the device.
# Usage: B0=<base bin dir> B1=<new bin dir> [T1=<new gpsm_gpu_tests>] OUT=... experiments/cg-sync/comm_block_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B0:?B0: base binaries}" "${B1:?B1: new binaries}"
NV=$(python3 -c 'import nvidia;print(list(nvidia.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$NV/nvshmem/lib:$NV/nccl/lib:${LD_LIBRARY_PATH:-}
export GPSM_NVSHMEM_CG_WORKER=$B1/gpsm-nvshmem-cg
T1=${T1:-$B1/gpsm_gpu_tests}
S="--app cg --size poisson2d:256,poisson2d:512,poisson2d:512x256 --gpus 1 --paradigm cpu_free_pipe,gps_pipe --reps 5"
L="--app cg --size poisson2d:2048x512 --gpus 1 --paradigm cpu_free_pipe,gps_pipe --reps 5"
steps=()
for round in a b; do
  first=$B0; second=$B1; f=base; s=new
  [ $round = b ] && { first=$B1; second=$B0; f=new; s=base; }
  steps+=("small-$f-$round:60:$first/gpsm bench $S --json \$STEP_OUT/small-$f-$round.json"
          "small-$s-$round:60:$second/gpsm bench $S --json \$STEP_OUT/small-$s-$round.json"
          "large-$f-$round:60:$first/gpsm bench $L --json \$STEP_OUT/large-$f-$round.json"
          "large-$s-$round:60:$second/gpsm bench $L --json \$STEP_OUT/large-$s-$round.json")
done
steps+=("tests:150:$T1 --gtest_filter='GpsDeviceFence.*:CgGpu.*'"
        "memcheck:90:compute-sanitizer --tool memcheck $T1 --gtest_filter='GpsDeviceFence.SplitPhase*:CgGpu.GpsPipeComputesWhatCpuFreePipeComputes*'")
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
