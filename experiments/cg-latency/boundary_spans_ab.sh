#!/usr/bin/env bash
# Question: gps_pipe's boundary chunks (the ones an iteration waits for after wait_all) read
# their subscriber masks after the wait, every iteration: View::local_span over the column range
# before the SpMV, View::span of w and of the next w before the update, each a chain of dependent
# loads. Taking them once per launch (cg_gps_pipe.cu: ChunkSpans; spans_per_iteration.patch puts
# the per-iteration asks back) should take those reads off the critical path. Prediction:
# poisson2d:512 on 2 GPUs 11.6 -> ~11.1-11.4 us (cpu_free_pipe ~11.0), less on one GPU (its chunks
# are sole: the plain variant, no spans). First the CG GPU tests that run gps_pipe, then base,
# variant, variant, base.
# Usage on a device: G=0,1 OUT=$OUT experiments/build_then.sh experiments/cg-latency/boundary_spans_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests (build_then.sh sets it)}"
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
gpus=1; [ "$n" -gt 1 ] && gpus=1,$n
out=${OUT:-$PWD/out}; mkdir -p "$out/tests"
t0=$(date +%s)
timeout 150 "$B/gpsm_gpu_tests" --gtest_filter='CgGpu.GpsPipe*:CgGpu.Nvshmem*:CgGpu.DenseRow*:CgGpu.PoissonUneven*:CgGpu.SeveralRows*' \
  --gtest_output=xml:"$out/tests/cg-tests.xml" >"$out/tests/cg-tests.log" 2>&1
echo "boundary_spans_ab: tests rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "PASSED|FAILED" "$out/tests/cg-tests.log" | head
OUT=$out/ab bash experiments/ab/device-ab.sh experiments/cg-latency/spans_per_iteration.patch \
  "bench --app cg --size poisson2d:256,poisson2d:512 --gpus $gpus --paradigm cpu_free_pipe,gps_pipe --reps 5"
