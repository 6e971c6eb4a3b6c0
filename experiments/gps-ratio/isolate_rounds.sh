#!/usr/bin/env bash
# Question: is wave3d 256³ gps's one-process 2-3 % over single on one GPU gone under
# `gpsm bench --isolate`, round after round? Four rounds of: gps alone; gps and single in one
# process (gpsm bench runs its paradigms in its fixed order, single first, whatever --paradigm's
# order, so "gps,single" and "single,gps" are the same command); and the two with --isolate.
# Answer (2026-11-29, 1×H200, results/nvidia-h200/2026-11-29_0fdbf83_bench-isolate/call3): yes.
# gps alone 55.09-55.36 µs; after single in one process 56.22-56.58 (single 54.81-55.10: 1.021-1.031);
# isolated 55.13-55.29 (single 54.72-55.08: 1.002-1.010).
# Usage (on the device, gpsm built in build/bin): OUT=... experiments/gps-ratio/isolate_rounds.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
B=${B:-build/bin}
out=${OUT:-$PWD/out}; mkdir -p "$out"
for r in 1 2 3 4; do
  for v in "gps" "gps,single" "gps,single --isolate" "single,gps"; do
    tag=$(echo "$v" | tr ', -' '___')
    # shellcheck disable=SC2086  # $v holds the paradigm list and, for one, --isolate
    "$B/gpsm" bench --app wave3d --size 256 --gpus 1 --paradigm $v --reps 5 --json "$out/r${r}_$tag.json" 2>/dev/null |
      grep -E "^  (gps|single) " | sed "s/^/r$r [$v] /"
  done
done
