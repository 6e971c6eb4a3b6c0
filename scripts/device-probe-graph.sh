#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: Nsight Compute on the graph apps' row
# kernels, to say where gps loses time against single / infinite (issue 5). Output: $OUT/ncu-graph.log.
#  1. One GPU, pagerank and sssp on road:5120, single beside gps: time, DRAM and L2 bytes,
#     instructions per launch, and the warp stall reasons of one launch.
#  2. Four GPUs (when there are four), sssp road:5120, infinite beside gps: the kernel time of each
#     GPU's launch (one metric: a single pass, so no replay touches the peers' replicas).
# --inst: instead, the instruction matrix an issue bound in gpsm sim needs (docs/sim.md): warp
#     instructions, warps launched, time and DRAM bytes of one row-kernel launch for pagerank and
#     sssp on road:5120 and rmat:23, single, p2p_inline and gps, one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/ncu-graph.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
kernels='regex:pagerank_kernel|sssp_kernel|pagerank_segments|sssp_segments'
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
if [ "${1:-}" = --inst ]; then
  for app in pagerank sssp; do
    for graph in road:5120 rmat:23; do
      for par in single p2p_inline gps; do
        echo "== ncu inst $app $graph $par (1 GPU, launch 3: gps's first after tracking)" >>"$log"
        timeout 120 ncu -k 'regex:pagerank_kernel|sssp_kernel' --launch-skip 2 --launch-count 1 \
          --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__warps_launched.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
          ./build/bin/gpsm bench --app $app --size $graph --gpus 1 --paradigm $par --iters 10 --reps 1 --warmup 1 2>&1 \
          | grep -E "Device [0-9]|dram__|smsp__|sm__|gpu__time" >>"$log"
      done
    done
  done
  cat "$log"
  exit 0
fi
for app in pagerank sssp; do
  for par in single gps; do
    echo "== ncu metrics $app road:5120 $par (1 GPU, launch 3)" >>"$log"
    timeout 90 ncu -k "$kernels" --launch-skip 2 --launch-count 1 --metrics "$metrics" \
      ./build/bin/gpsm bench --app $app --size road:5120 --gpus 1 --paradigm $par --iters 10 --reps 1 --warmup 1 2>&1 \
      | grep -E "Device [0-9]|dram__|lts__|l1tex__|smsp__|gpu__time" >>"$log"
  done
done
for par in single gps; do
  echo "== ncu warp states pagerank road:5120 $par (1 GPU, launch 3)" >>"$log"
  timeout 90 ncu -k "$kernels" --launch-skip 2 --launch-count 1 --section WarpStateStats --section SpeedOfLight \
    ./build/bin/gpsm bench --app pagerank --size road:5120 --gpus 1 --paradigm $par --iters 10 --reps 1 --warmup 1 2>&1 \
    | grep -vE '^\s*$|^==PROF==|progress|^gpsm bench: \[' | grep -E "Device [0-9]|Stall|Warp Cycles|Duration|Throughput|Issued|----" >>"$log"
done
if [ "$(nvidia-smi -L | wc -l)" -ge 4 ]; then
  for par in infinite gps; do
    echo "== ncu time sssp road:5120 $par (4 GPUs, launches 9-16)" >>"$log"
    timeout 90 ncu -k "$kernels" --launch-skip 8 --launch-count 8 --metrics gpu__time_duration.sum \
      ./build/bin/gpsm bench --app sssp --size road:5120 --gpus 4 --paradigm $par --iters 10 --reps 1 --warmup 1 2>&1 \
      | grep -E "Device [0-9]|gpu__time" >>"$log"
  done
fi
cat "$log"
