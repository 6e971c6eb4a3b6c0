#!/usr/bin/env bash
# Questions left open on 2026-11-28 (see the closing note of that stop), for the next 4xH200 call:
#  1. What do the 3D gps cells still above 1.05 at 4 GPUs cost (heat3d 256^3 1.22x um_hints,
#     512^3 1.12x, wave3d 512^3 1.14x at 9158913)? Nsight Compute of one step's kernels, gps
#     against p2p_inline: instructions, DRAM and peer bytes (event fences: ncu serializes kernels,
#     and the barrier-kernel fence would wait forever for the GPUs it serialized away).
#  2. Graph or stream for the 3D host loop at 4 GPUs (GPSM_HOST_LOOP=stream beside the default).
#  3. CPU-free over CPU-controlled CG at 4 GPUs (issue 29's geometric mean; 2 GPUs: 1.67x / 2.64x).
#  4. memcheck of the GPS graph and CG tests without the host API-error reports that NCCL's init
#     raises (the 2026-11-28 run had 270 of them and so could not show a clean device side).
# Usage on nvidia-h200-x4 from the repository root, with the binaries built here and carried:
#   G=.cmpab/n/gpsm T=.cmpab/n/gpsm_gpu_tests COMMIT=<sha> bash experiments/gps-4gpu/next-4gpu.sh
set -u
cd "$(dirname "$0")/../.."
G=${G:?} T=${T:?}
NV=$(python3 -c 'import nvidia;print(list(nvidia.__path__)[0])'); export LD_LIBRARY_PATH=$NV/nvshmem/lib:$NV/nccl/lib:${LD_LIBRARY_PATH:-}
NCU="ncu --target-processes all --devices 1 --clock-control none --cache-control none --metrics gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active --csv --page raw"
GPSM_COMMIT=${COMMIT:-unknown} bash scripts/device-batch.sh --budget 580 \
 "ncu3d:150:for s in 256 512; do GPSM_ASYNC_FENCE=events $NCU -k regex:step_kernel --launch-skip 40 --launch-count 6 $G bench --app heat3d --size \$s --gpus 4 --reps 1 --paradigm p2p_inline > \$STEP_OUT/ncu-\$s-p2p.csv 2>&1; GPSM_ASYNC_FENCE=events $NCU -k regex:'listed' --launch-skip 60 --launch-count 12 $G bench --app heat3d --size \$s --gpus 4 --reps 1 --paradigm gps > \$STEP_OUT/ncu-\$s-gps.csv 2>&1; done" \
 "loop:90:for a in heat3d wave3d; do $G bench --app \$a --size 256,512 --gpus 4 --reps 5 --paradigm um_hints,p2p_inline,gps --json \$STEP_OUT/\$a.json; GPSM_HOST_LOOP=stream $G bench --app \$a --size 256,512 --gpus 4 --reps 5 --paradigm gps --json \$STEP_OUT/\$a-stream.json; done" \
 "t31:200:$G bench --app cg --size table3.1:9-18 --iters 200 --gpus 4 --reps 5 --paradigm cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe --json \$STEP_OUT/t31-9-18-4gpu.json" \
 "memcheck:100:compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $T --gtest_filter='GraphAppsGpu.HeldKindWhereTheRankHoldsEveryPage:GraphAppsGpu.SplitRowsEveryParadigm:CgGpu.Gps*' > \$STEP_OUT/sanitizer-memcheck.log 2>&1; echo rc=\$?; tail -3 \$STEP_OUT/sanitizer-memcheck.log"
