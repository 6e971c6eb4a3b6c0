#!/usr/bin/env bash
# One device call that runs several steps under one wall-clock budget, so the call always ends
# (and its results come back) inside the device tool's limit. Each step gets
# min(its own limit, what is left of the budget - 25 s); its output goes to $OUT/steps/<n>.step.log
# and its files to $OUT/steps/ (the log's own suffix, so a step's file named <n>.log is not
# overwritten by the step's output). At the end everything except logs.txt is packed into
# $OUT/results.tgz: the device tool returns at most 8 files.
# Usage: GPSM_COMMIT=<sha> scripts/device-batch.sh --budget 570 \
#          'suite:300:scripts/device-run.sh --kind nvidia-h200-x4 --tests quick --bench none' \
#          'proact:120:build/bin/gpsm proact --gpus 0,1,2,3 --json $STEP_OUT/proact.json'
# A step is NAME:LIMIT_S:COMMAND; COMMAND runs with OUT=$STEP_OUT=$OUT/steps (bash -c).
# DEVICE_BATCH_ONLY=name1,name2 runs only the steps of those names (a script's steps split over
# several calls); a name that matches no step is an error before anything runs.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=570
[ "${1:-}" = --budget ] && { budget=$2; shift 2; }
out=${OUT:-$PWD/out}; mkdir -p "$out/steps"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
if [ -n "${DEVICE_BATCH_ONLY:-}" ]; then
  names=" "; for step in "$@"; do names+="${step%%:*} "; done
  for want in ${DEVICE_BATCH_ONLY//,/ }; do
    case "$names" in *" $want "*) ;; *) echo "device-batch: DEVICE_BATCH_ONLY names '$want', not a step of this batch (steps:$names)" >&2; exit 2 ;; esac
  done
fi
start=$(date +%s); summary="$out/logs.txt"; rc=0
for step in "$@"; do
  name=${step%%:*}; rest=${step#*:}; limit=${rest%%:*}; cmd=${rest#*:}
  if [ -n "${DEVICE_BATCH_ONLY:-}" ]; then
    case ",$DEVICE_BATCH_ONLY," in *",$name,"*) ;; *) continue ;; esac
  fi
  left=$(( budget - ($(date +%s) - start) - 25 ))
  [ "$limit" -gt "$left" ] && limit=$left
  if [ "$limit" -le 5 ]; then echo "device-batch: $name skipped (budget spent)" | tee -a "$summary"; rc=1; continue; fi
  t0=$(date +%s)
  echo "== $name (limit ${limit} s): $cmd" | tee -a "$summary"
  OUT="$out/steps" STEP_OUT="$out/steps" timeout --kill-after=10 "$limit" bash -c "$cmd" >"$out/steps/$name.step.log" 2>&1
  s=$?
  echo "device-batch: $name rc=$s in $(( $(date +%s) - t0 )) s" | tee -a "$summary"
  tail -15 "$out/steps/$name.step.log" | tr '\r' '\n' | grep -v '^$' | tail -15 >>"$summary"
  [ $s -eq 0 ] || rc=1
done
# device-run.sh writes its own logs.txt into the steps folder: keep it inside the tarball
tar czf "$out/results.tgz" -C "$out" steps && rm -rf "$out/steps"
exit $rc
