#!/usr/bin/env bash
# ptxas (sm_90, the build's flags) stack / spill / registers of every kernel in the GPS kernel
# files at commit OLD and in the working tree, and the kernels that differ. Every View kernel
# carries every publish mode's device path, so a change to view.hpp or decoupled.hpp can cost a
# kernel that never uses it (2026-11-29: a batched decoupled push spilled 124 bytes in Jacobi's
# persistent GPS kernel, and Jacobi's gps ran 10-15 % slower on 4xH200). Needs a configured build/.
# Usage: experiments/ptxas-diff/ptxas_diff.sh OLD [FILE.cu relative to src/ ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
old=${1:?usage: ptxas_diff.sh OLD [files]}; shift
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(apps/jacobi/jacobi_kernels.cu apps/stencil3d/stencil3d_kernels.cu apps/cg/cg_gps.cu
  apps/cg/cg_gps_pipe.cu apps/graph/graph_kernels.cu apps/fd3d/fd3d_gps_kernels.cu apps/filter/filter_kernels.cu
  publish/publish_bench.cu)
wt=$PWD/.wt-ptxas-old
git worktree add -q --detach "$wt" "$old"
trap 'git worktree remove --force "$wt"' EXIT
norm() { sed -E 's/_GLOBAL__N__[0-9a-f]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]+//' | sort; }
for f in "${files[@]}"; do
  python3 experiments/ptxas-diff/ptxas_kernels.py "$wt" "$f" | norm >/tmp/ptxas_old.txt
  python3 experiments/ptxas-diff/ptxas_kernels.py "$PWD" "$f" | norm >/tmp/ptxas_new.txt
  echo "== $f ($(wc -l </tmp/ptxas_old.txt) kernels at $old, $(wc -l </tmp/ptxas_new.txt) now; stack/spill/registers)"
  join /tmp/ptxas_old.txt /tmp/ptxas_new.txt | awk '$2 != $3 {print "  " $1, $2, "->", $3}'
done
