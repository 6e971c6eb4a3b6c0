#!/usr/bin/env bash
# Question: CG's gps paradigm (Standard, cg_gps.cu) asks its view for each checked chunk (the
# ones not GpsStd::plain) after every fence round: View::local_span over the column range before
# the SpMV, View::span of its own rows in the SpMV and again in the update, each a chain of
# dependent mask reads on the iteration's critical path. gps_pipe's boundary chunks did the same
# until 97b2e30, and asking once per launch made gps_pipe 11-12 % faster on 2 GPUs
# (boundary_spans_ab.sh). std_spans_once.patch does the same for gps (StdChunkSpans: a block's
# first two checked chunks, once per launch; ptxas sm_90: the GPS variants' spills fall in most
# shapes, e.g. the default Poisson shape with q kept 60/136 -> 36/36 bytes; the sole variants
# unchanged). Written 2026-11-29 without device time left: compiled, not run. Prediction: two
# fence rounds an iteration, ~1 us each: poisson2d:512 on 2 GPUs 15.1 -> ~13-14 us (cpu_free_std
# 13.9), 2048^2 on 2 GPUs a little (85.2: bandwidth-bound), one GPU unchanged (sole).
# Base = the tree, variant = the patch: base, variant, variant, base; every run verified against
# the CPU reference. If it wins: git apply the patch, run the CG GPU tests, update docs/cg.md.
# Usage on a device: G=0,1 OUT=$OUT experiments/build_then.sh experiments/cg-latency/std_spans_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
gpus=1; [ "$n" -gt 1 ] && gpus=1,$n
OUT=${OUT:-$PWD/out} bash experiments/ab/device-ab.sh experiments/cg-latency/std_spans_once.patch \
  "bench --app cg --size poisson2d:256,poisson2d:512,poisson2d:2048 --gpus $gpus --paradigm cpu_free_std,gps --reps 5"
