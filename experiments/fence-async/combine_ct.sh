#!/usr/bin/env bash
# Question (2026-11-30): fence_async now drains combine and decoupled arrays on the streams (one
# round, records that do not fit spilled as word stores; docs/gps.md). Do its GPU tests pass on
# 2 GPUs, and what does it do to CT's gps, whose two host fences per subset cost 8.7-10.6 ms an
# iteration per phase against memcpy's 1.8-4.3 (results/nvidia-h200-x2/2026-11-30_28db8e2_*)?
# Prediction: exchanges below 3 ms an iteration per phase, gps within 3 % of memcpy at medium,
# decoupled (pushes during the update) ahead of combine.
# Usage on a device: B=build/bin G=0,1 OUT=$OUT experiments/fence-async/combine_ct.sh (build_then.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${B:?}"
CT="$B/gpsm bench --app ct --size medium --gpus 2 --reps 5"
steps=(
  "tests:120:$B/gpsm_gpu_tests --gtest_filter='GpsFenceAsync*:*GpsDecoupled*:MultiGpuGraph*' --gtest_output=xml:\$STEP_OUT/gpu-tests-fence.xml"
  "ct-combine:70:$CT --paradigm memcpy,proact,gps --json \$STEP_OUT/ct-combine.json"
  "ct-dec-inline:45:GPSM_PUBLISH_MODE=decoupled GPSM_DECOUPLED_AGENT=inline $CT --paradigm gps --json \$STEP_OUT/ct-decoupled-inline.json"
  "ct-dec-persistent:45:GPSM_PUBLISH_MODE=decoupled GPSM_DECOUPLED_AGENT=persistent $CT --paradigm gps --json \$STEP_OUT/ct-decoupled-persistent.json"
  "3d:30:$B/gpsm bench --app heat3d --size 256 --gpus 2 --reps 5 --paradigm um_hints,gps --json \$STEP_OUT/heat3d.json; $B/gpsm bench --app wave3d --size 256 --gpus 2 --reps 5 --paradigm um_hints,gps --json \$STEP_OUT/wave3d.json"
  "rest:150:$B/gpsm_gpu_tests --gtest_filter='-CgGpu.*:GpsFenceAsync*:*GpsDecoupled*:MultiGpuGraph*' --gtest_output=xml:\$STEP_OUT/gpu-tests-rest.xml"
)
OUT=${OUT:-$PWD/out} bash scripts/device-batch.sh --budget "${BUDGET:-570}" "${steps[@]}"
