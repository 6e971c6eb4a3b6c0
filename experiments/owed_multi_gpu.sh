#!/usr/bin/env bash
# Question: everything stops 42-48 wrote for a multi-GPU node without one to run it on (one H200
# only was lent). This lays the owed runs out over three device calls of one session, issued back to
# back so that calls 2 and 3 find the machine warm (a rebuild then takes seconds, a fresh one
# 125-155 s). Each part runs an existing script with DEVICE_BATCH_ONLY picking its steps, into a
# folder of its own under $OUT (device-batch packs each folder's steps into its results.tgz).
#   CALL=1: the GPU test binary on every GPU in two steps, without CgGpu (245 s on 4 GPUs at fb9d3b2),
#           then CgGpu (283 s on 2 GPUs at 7877357, >450 s on 4; fewer NVSHMEM launches since 07938ec);
#           fd3d along z if time is left. (The --isolate CLI test passed on 2 GPUs at 7877357: dropped.)
#   CALL=2: CG's targets (the default values: the table for Poisson) and Table 3.1's CPU-controlled
#           runs with a host thread per GPU at the issue's 1000 iterations (experiments/cg-sync; at
#           0d7b47e on x2 this call ran f64, f32, table and Table 3.1 at 200 iterations).
#   CALL=3: fd3d's rdl launch A/B (one vs split), per-item step and x/y split, memcheck; the issue-28 cells above 1.05 again, with
#           --isolate: heat3d and wave3d 256/512, sssp rmat:20/23 (experiments/gps-ratio).
#   CALL=4: (one call on a rarely lent node) heat3d, wave3d and cg's issue-28/29 cells isolated, then
#           the GPU test binary without CgGpu (whose 14 tests took 283 s on 2 GPUs and >450 s on 4 at
#           fb9d3b2) in what is left.
#   CALL=5: fd3d's scaling at 768^3:h16 (1 and all GPUs; issue 32: >= 1.9x on 2, >= 3.7x on 4) and x/y
#           rdl, then CT's seed size on all GPUs (issue 31: proact >= 90 % of infinite).
#   CALL=6: cli.publish_decoupled and gpsm publish with every mode on 2 GPUs (ran at d0a7fdc on x2 with
#           the one-kernel A/B, since answered and removed: results/nvidia-h200-x2/2026-11-29_d0a7fdc_one-launch-publish).
#   CALL=7: (x4, first of two calls back to back) CG's 4-GPU targets (the table's Poisson cells), the
#           issue-28 3D cells on all GPUs, then gpsm publish with every mode and with the persistent agent.
#   CALL=8: (x4, second) the GPU test binary without CgGpu, CG's gps tests, fd3d's scaling at 768^3:h16.
#   (CALL=7 and 8 ran on x4 at a2a2b71, with the sweep's A/B since removed: results/nvidia-h200-x4/2026-11-29_a2a2b71_*.)
# Ran on 2xH200 at 0d7b47e, CALL=3, 2, 1 back to back (results/nvidia-h200-x2/2026-11-29_0d7b47e_owed-calls).
# experiments/fd3d-gps/apron_ahead.sh ran on x2 at 47414f8; experiments/cg-latency/q_shared_ab.sh
# on x2 at 81f321e (shared won: the default since); std_spans_ab.sh on x2 at d0a7fdc (adopted).
# Owed next (after a2a2b71's x4 calls 7 and 8): on x4, CALL=7's jacobi cell again (Jacobi's gps at
# 4 GPUs was 1.10-1.15x cpu_free at a2a2b71, with spills since removed at e83299a), Table 3.1 at
# 1000 iterations in two halves (table3.1:9-13, 14-18: one 300-s step did 18 of 40 runs), CALL=5's
# CT seed size; on x2: CALL=6 with GPSM_DECOUPLED_AGENT=persistent (decoupled at 2 GPUs). async_fence_ab.sh
# and the sssp held-kernel tests ran on x2 at 3003e5d-dde2891 (experiments/gps-ratio/README.md). On
# x4 also: fence_async's default is now auto (the kernel beyond two GPUs, unchanged there); the
# 4-GPU cells need no re-run for it.
# CALL=9 and 12 ran on x2 at 28db8e2 (results/nvidia-h200-x2/2026-11-30_28db8e2_tests-umlead-sssp-ncu),
# CALL=13 too (warp_store_ab.sh: answered no, removed; ..._sssp-warp-store); the 2-GPU column of the
# issue-28 table and CgGpu on 2 GPUs at 28db8e2 (..._issue28-2gpu).
#   CALL=10: (x4) the jacobi2d cell (e83299a's fix of the 4-GPU regression), then Table 3.1 rows 9-13
#           at 1000 iterations; CALL=11: rows 14-18. CALL=5 on x4 for CT's seed size.
#   CALL=12: (x2 or x4) fence_async's new tests on all GPUs (GpsFenceAsync*, the EveryMode cases,
#           GpsDecoupled under both fences), then CT medium's gps in every mode with fence_async:
#           the persistent agent's hang at 997b51e was fixed in c6a58b7 and has not run since; and
#           pagerank / sssp's gps in combine mode (fence_async there since a4fd83d).
#   CALL=14: (x4) the GPU tests without CgGpu, then CgGpu (the checked kernels' file split, 1e826c3,
#           has run on 2 GPUs only).
#   CALL=15: (x2 and x4, alone: it needs 430 s after the build) experiments/fence-async/red_marking_ab.sh
#           (d6f226e's reduction marking against the returning atomic, and the fence tests it added).
#   CALL=16: (x2, alone: 400 s after the build) experiments/gps-ratio/held_block128_ab.sh (sssp's held
#           kernel in 128-thread blocks).
# Usage on the device: CALL=1|...|16 (or a list, e.g. 9,12: one after the other in one budget) G=0,1[,2,3] OUT=$OUT experiments/build_then.sh experiments/owed_multi_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
: "${B:?B: the folder holding gpsm and gpsm_gpu_tests}" "${G:?G: the GPUs, e.g. 0,1}" "${CALL:?CALL: 1 to 16}"
n=$(( $(tr -cd , <<<"$G" | wc -c) + 1 ))
out=${OUT:-$PWD/out}; t0=$(date +%s); total=${BUDGET:-570}
left() { echo $(( total - ($(date +%s) - t0) )); }
part() {  # part FOLDER [VAR=VALUE...] SCRIPT: the script with what is left of this call's budget
  local dir=$1; shift
  local l; l=$(left)
  if [ "$l" -le 40 ]; then echo "owed: $dir skipped (budget spent)" | tee -a "$out/owed.txt"; return; fi
  mkdir -p "$out/$dir"
  env OUT="$out/$dir" BUDGET="$l" B="$B" G="$G" "$@"
}
mkdir -p "$out"
for call in ${CALL//,/ }; do
case "$call" in
  1) part tests bash scripts/device-batch.sh --budget "$(left)" \
       "tests:300:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml" \
       "cgtests:400:$B/gpsm_gpu_tests --gtest_filter=CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests-cg.xml"
     part fd3d DEVICE_BATCH_ONLY=z bash experiments/fd3d-gps/multi_gpu_check.sh ;;
  2) part cg DEVICE_BATCH_ONLY=table,t31k bash experiments/cg-sync/multi_gpu_check.sh ;;
  3) part fd3d DEVICE_BATCH_ONLY=rdl,items,xy,memcheck bash experiments/fd3d-gps/multi_gpu_check.sh
     part ratio GPUS="$n" ISOLATE=1 DEVICE_BATCH_ONLY=heat,wave,sssp bash experiments/gps-ratio/one_gpu_column.sh ;;
  4) part ratio GPUS="$n" ISOLATE=1 DEVICE_BATCH_ONLY=heat,wave,cg bash experiments/gps-ratio/one_gpu_column.sh
     part tests bash scripts/device-batch.sh --budget "$(left)" \
       "tests:600:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml" ;;
  6) part publish bash scripts/device-batch.sh --budget "$(left)" \
       "pubtest:150:cd $B/.. && ctest -R cli.publish_decoupled --output-on-failure" \
       "publish:150:$B/gpsm publish --devices 0,1 --mode all --json \$STEP_OUT/publish-all.json" ;;
  5) part fd3d bash scripts/device-batch.sh --budget "$(left)" \
       "scale:200:$B/gpsm bench --app fd3d --size 768:h16:z,512:h4:xy --gpus 1,$n --paradigm single,memcpy,p2p_inline,rdl,gps,infinite --reps 5 --json \$STEP_OUT/fd3d-scale.json"
     part ct GPUS="$n" PART=3 bash experiments/gps-ratio/one_gpu_column.sh ;;
  7) part cg DEVICE_BATCH_ONLY=table bash experiments/cg-sync/multi_gpu_check.sh
     part ratio GPUS="$n" DEVICE_BATCH_ONLY=heat,wave bash experiments/gps-ratio/one_gpu_column.sh
     part publish bash scripts/device-batch.sh --budget "$(left)" \
       "pub:60:$B/gpsm publish --devices $G --mode all --json \$STEP_OUT/publish-all.json" \
       "persistent:40:GPSM_DECOUPLED_AGENT=persistent $B/gpsm publish --devices $G --mode inline,combine,decoupled --json \$STEP_OUT/publish-persistent.json" ;;
  8) part tests bash scripts/device-batch.sh --budget "$(left)" \
       "tests:300:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml" \
       "cgtests:150:$B/gpsm_gpu_tests --gtest_filter='CgGpu.Gps*:CgGpu.PoissonUneven*:CgGpu.SeveralRows*' --gtest_output=xml:\$STEP_OUT/gpu-tests-cg.xml" \
       "fd3d:200:$B/gpsm bench --app fd3d --size 768:h16:z --gpus 1,$n --paradigm single,memcpy,p2p_inline,rdl,gps,infinite --reps 5 --json \$STEP_OUT/fd3d-scale.json" ;;
  9) part tests bash scripts/device-batch.sh --budget "$(left)" \
       "tests:150:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml"
     part publish bash scripts/device-batch.sh --budget "$(left)" \
       "persistent:60:GPSM_DECOUPLED_AGENT=persistent $B/gpsm publish --devices $G --mode inline,combine,decoupled --json \$STEP_OUT/publish-persistent.json" ;;
  10) part jacobi bash scripts/device-batch.sh --budget "$(left)" \
        "jacobi:200:$B/gpsm bench --app jacobi2d --size 4096,16384 --gpus $n --paradigm single,memcpy,p2p_inline,cpu_free,gps --reps 5 --json \$STEP_OUT/jacobi.json" \
        "t31a:300:GPSM_CG_HOST_THREADS=1 $B/gpsm bench --app cg --size table3.1:9-13 --iters 1000 --gpus $n --paradigm cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe --reps 5 --json \$STEP_OUT/t31-1000-a.json" ;;
  11) part cg bash scripts/device-batch.sh --budget "$(left)" \
        "t31b:300:GPSM_CG_HOST_THREADS=1 $B/gpsm bench --app cg --size table3.1:14-18 --iters 1000 --gpus $n --paradigm cpu_ctrl_std,cpu_ctrl_pipe,cpu_free_std,cpu_free_pipe --reps 5 --json \$STEP_OUT/t31-1000-b.json" ;;
  12) part fence bash scripts/device-batch.sh --budget "$(left)" \
        "tests:150:$B/gpsm_gpu_tests --gtest_filter='*GpsFenceAsync*:*GpsDecoupled*:*MultiGpuGraph*' --gtest_output=xml:\$STEP_OUT/gpu-tests-fence.xml" \
        "ct:70:$B/gpsm bench --app ct --size medium --gpus $n --reps 5 --paradigm memcpy,proact,gps --json \$STEP_OUT/ct-combine.json" \
        "ct-inline:45:GPSM_PUBLISH_MODE=decoupled GPSM_DECOUPLED_AGENT=inline $B/gpsm bench --app ct --size medium --gpus $n --reps 5 --paradigm gps --json \$STEP_OUT/ct-decoupled-inline.json" \
        "ct-persistent:60:GPSM_PUBLISH_MODE=decoupled GPSM_DECOUPLED_AGENT=persistent $B/gpsm bench --app ct --size medium --gpus $n --reps 5 --paradigm gps --json \$STEP_OUT/ct-decoupled-persistent.json" \
        "graph-combine:60:GPSM_PUBLISH_MODE=combine $B/gpsm bench --app pagerank --size rmat:20 --gpus $n --reps 5 --paradigm p2p_inline,gps --json \$STEP_OUT/pagerank-combine.json; GPSM_PUBLISH_MODE=combine $B/gpsm bench --app sssp --size rmat:20 --gpus $n --reps 5 --paradigm gps --json \$STEP_OUT/sssp-combine.json" ;;
  14) part tests bash scripts/device-batch.sh --budget "$(left)" \
        "tests:300:$B/gpsm_gpu_tests --gtest_filter=-CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests.xml" \
        "cgtests:280:$B/gpsm_gpu_tests --gtest_filter=CgGpu.* --gtest_output=xml:\$STEP_OUT/gpu-tests-cg.xml" ;;
  15) part marking bash experiments/fence-async/red_marking_ab.sh ;;
  16) part sssp bash experiments/gps-ratio/held_block128_ab.sh ;;
  *) echo "owed: CALL must be 1 to 12 or 14 to 16 (or a comma list of them)" >&2; exit 2 ;;
esac
done
