#!/usr/bin/env bash
# On a GPU machine after scripts/device-run.sh built gpsm: Nsight Compute on the graph apps' row
# kernels, to say where gps loses time against single / infinite. Output: $OUT/ncu-graph.log.
#  1. One GPU, pagerank and sssp on road:5120, single beside gps: time, DRAM and L2 bytes,
#     instructions per launch, and the warp stall reasons of one launch.
#  2. Four GPUs (when there are four), sssp road:5120, infinite beside gps: the kernel time of each
#     GPU's launch (one metric: a single pass, so no replay touches the peers' replicas).
# --inst: instead, the instruction matrix an issue bound in gpsm sim needs (docs/sim.md): warp
#     instructions, warps launched, time and DRAM bytes of one row-kernel launch for pagerank and
#     sssp on road:5120 and rmat:23, single, p2p_inline and gps, one GPU.
# --split: the hub-row segment kernel beside the row kernel (time at the GPU's own clocks, not
#     ncu's locked base clock, so comparable with gpsm bench; instructions; DRAM bytes): pagerank
#     and sssp, single, rmat:23 and rmat:20, one GPU, two iterations' launches.
# --changed: sssp rmat:20 single, every launch of one run (10 iterations until no distance falls):
#     time, L2 write and atomic sectors per launch at the GPU's clocks and warm caches, to set the
#     row kernel's time against the warps that store the `changed` flag (docs/sim.md "Hot words").
# --road-small: the row kernels' time on road:1024, pagerank and sssp, single on 1 GPU and
#     infinite on 2 GPUs (each GPU's launches, warm caches, the GPU's clocks): is the 2-GPU loop's
#     time its kernel plus the event hop (the sim's model), or less?
set -uo pipefail
cd "$(dirname "$0")/../.."  # the repository root
out=${OUT:-$PWD/out}; mkdir -p "$out"; log="$out/ncu-graph.log"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
kernels='regex:pagerank_kernel|sssp_kernel|pagerank_segments|sssp_segments'
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,smsp__inst_executed.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
rc=0
# probe TITLE TIMEOUT KEEP_REGEX NCU_ARGS... -- BENCH_ARGS...: one ncu run of gpsm bench (10
# iterations, one rep after one warm-up), the lines matching KEEP_REGEX into the log
probe() {
  local title=$1 limit=$2 keep=$3; shift 3
  local ncu_args=()
  while [ "$1" != -- ]; do ncu_args+=("$1"); shift; done
  shift
  echo "== ncu $title" >>"$log"
  timeout "$limit" ncu "${ncu_args[@]}" ./build/bin/gpsm bench "$@" --iters 10 --reps 1 --warmup 1 >/tmp/ncu-probe.out 2>&1 || rc=1
  grep -vE '^\s*$|^==PROF==|progress|^gpsm bench: \[' /tmp/ncu-probe.out | grep -E "Device [0-9]|$keep" >>"$log"
}
if [ "${1:-}" = --road-small ]; then
  for app in pagerank sssp; do
    for run in "single 1" "infinite 2"; do
      set -- $run
      probe "road-small $app road:1024 $1 ($2 GPU(s), launches 11-18, boost clocks, warm caches)" 90 "gpu__time|segments|kernel" \
        -k "$kernels" --clock-control none --cache-control none --launch-skip 10 --launch-count 8 \
        --metrics gpu__time_duration.sum -- --app $app --size road:1024 --gpus $2 --paradigm $1
    done
  done
elif [ "${1:-}" = --changed ]; then
  probe "changed sssp rmat:20 single (1 GPU, the timed run's 20 launches, boost clocks, warm caches)" 150 "dram__|lts__|gpu__time|segments|kernel" \
    -k "$kernels" --clock-control none --cache-control none --launch-skip 20 --launch-count 20 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum \
    -- --app sssp --size rmat:20 --gpus 1 --paradigm single
elif [ "${1:-}" = --split ]; then
  for graph in rmat:23 rmat:20; do
    for app in pagerank sssp; do
      probe "split $app $graph single (1 GPU, launches 5-8, boost clocks)" 150 "dram__|smsp__|gpu__time|segments|kernel" \
        -k "$kernels" --clock-control none --launch-skip 4 --launch-count 4 \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum \
        -- --app $app --size $graph --gpus 1 --paradigm single
    done
  done
elif [ "${1:-}" = --inst ]; then
  for graph in road:5120 rmat:23; do  # road first: its kernels are the ones the sim misses
    for app in pagerank sssp; do
      for par in single p2p_inline gps; do
        probe "inst $app $graph $par (1 GPU, launch 3: gps's first after tracking)" 120 "dram__|smsp__|sm__|gpu__time" \
          -k 'regex:pagerank_kernel|sssp_kernel' --launch-skip 2 --launch-count 1 \
          --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__warps_launched.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
          -- --app $app --size $graph --gpus 1 --paradigm $par
      done
    done
  done
else
  for app in pagerank sssp; do
    for par in single gps; do
      probe "metrics $app road:5120 $par (1 GPU, launch 3)" 90 "dram__|lts__|l1tex__|smsp__|gpu__time" \
        -k "$kernels" --launch-skip 2 --launch-count 1 --metrics "$metrics" -- --app $app --size road:5120 --gpus 1 --paradigm $par
    done
  done
  for par in single gps; do
    probe "warp states pagerank road:5120 $par (1 GPU, launch 3)" 90 "Stall|Warp Cycles|Duration|Throughput|Issued|----" \
      -k "$kernels" --launch-skip 2 --launch-count 1 --section WarpStateStats --section SpeedOfLight \
      -- --app pagerank --size road:5120 --gpus 1 --paradigm $par
  done
  if [ "$(nvidia-smi -L | wc -l)" -ge 4 ]; then
    for par in infinite gps; do
      probe "time sssp road:5120 $par (4 GPUs, launches 9-16)" 90 "gpu__time" \
        -k "$kernels" --launch-skip 8 --launch-count 8 --metrics gpu__time_duration.sum -- --app sssp --size road:5120 --gpus 4 --paradigm $par
    done
  fi
fi
cat "$log"
exit $rc
