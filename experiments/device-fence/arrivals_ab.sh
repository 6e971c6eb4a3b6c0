#!/usr/bin/env bash
# Question: does the device fence's one growing arrival counter, polled by wait_local at GPU scope
# (fe34ce3), make the persistent kernels built on it faster than the parity counters the last
# block reset and the `local` word it raised after them (old_fence.patch puts those back)? The
# fence's users: CG's gps (arrive_and_reduce, two rounds an iteration) and gps_pipe (count_in,
# wait_local, publish_values, wait_all), Jacobi's gps and cpu_free (arrive_and_wait). CG's
# cpu_free_std / cpu_free_pipe use their own sync (cg_sync.hpp): the control. Prediction: the
# hop was two atomics and a fence on every round's critical path, ~0.5-1.5 us a round, so
# gps_pipe 512^2 on 2 GPUs 12.3 -> ~11-11.5 us (cpu_free_pipe 11.0), no change in the controls.
# Base = this tree (new fence), variant = the old one, in the order base, variant, variant, base.
# Usage on a device: G=0,1 OUT=$OUT experiments/build_then.sh experiments/device-fence/arrivals_ab.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
n=1; [ -n "${G:-}" ] && n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
gpus=1; [ "$n" -gt 1 ] && gpus=1,$n
export CCACHE_BASEDIR=/  # the variant's tree in /tmp hits the base's cache for every unchanged unit
OUT=${OUT:-$PWD/out} bash experiments/ab/device-ab.sh experiments/device-fence/old_fence.patch \
  "bench --app cg --size poisson2d:256,poisson2d:512 --gpus $gpus --paradigm cpu_free_pipe,gps_pipe,cpu_free_std,gps --reps 5" \
  "bench --app jacobi2d --size 4096 --gpus $gpus --paradigm cpu_free,gps --reps 5"
