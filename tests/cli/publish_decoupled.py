#!/usr/bin/env python3
"""gpsm publish --mode decoupled on two or more GPUs: the mode learns each chunk's store count from
two untimed, checked reps under tracking, then runs its timed reps like the other modes. Runs
coalesced (one writer per chunk: every GPU completes chunks its agent pushes) and random (words
of every chunk stored by every GPU: nothing learned, the fence publishes all) at 8 MiB beside
inline and combine, and checks: exit 0, every pattern's test ok with a verified series per mode,
decoupled's learned_chunks_per_gpu present, above zero on every GPU for coalesced and zero for
random, its reps_verified counting the two learning reps.
With fewer than two GPUs gpsm publish cannot run: reported as skipped (77), never passed.
Usage: publish_decoupled.py --gpsm PATH --work DIR"""
import argparse
import json
import os
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpsm", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    info = subprocess.run([a.gpsm, "info"], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"^GPUs: (.*)$", info, re.M)
    n = int(m.group(1).split()[0]) if m and m.group(1).split()[0].isdigit() else 0
    if n < 2:
        print("skipped: gpsm publish needs two GPUs; gpsm info:", m.group(0) if m else "(no GPUs line)")
        return 77
    out = os.path.join(a.work, "publish-decoupled.json")
    if os.path.exists(out):
        os.remove(out)
    reps, warm = 5, 1
    cmd = [a.gpsm, "publish", "--devices", "0,1", "--size", "8M", "--pattern", "coalesced,random",
           "--mode", "inline,combine,decoupled", "--reps", str(reps), "--warmup", str(warm), "--json", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    fail = []
    if p.returncode != 0:
        fail.append(f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
    try:
        doc = json.load(open(out))
    except (OSError, ValueError) as e:
        doc = {"tests": []}
        fail.append(f"no results file: {e}")
    tests = {t["name"]: t for t in doc.get("tests", [])}
    for pattern in ("coalesced", "random"):
        t = tests.get(f"publish_{pattern}")
        if t is None:
            fail.append(f"no publish_{pattern} test")
            continue
        if t.get("status") != "ok":
            fail.append(f"publish_{pattern}: status {t.get('status')}: {t.get('reason')}")
            continue
        series = {s["label"]: s for s in t.get("series", [])}
        for mode in ("inline", "combine", "decoupled"):
            s = series.get(mode)
            if s is None or not all(pt.get("verified") for pt in s.get("points", [])):
                fail.append(f"publish_{pattern}: {mode} missing or not verified")
        d = series.get("decoupled")
        if d is None:
            continue
        learned = d["params"].get("learned_chunks_per_gpu")
        if learned is None:
            fail.append(f"publish_{pattern}: decoupled has no learned_chunks_per_gpu")
            continue
        counts = [int(x) for x in learned.split(",")]  # per GPU, rank order
        if pattern == "coalesced" and (len(counts) != 2 or min(counts) == 0):
            fail.append(f"publish_coalesced: every GPU should complete chunks of its own, got {learned!r}")
        if pattern == "random" and any(counts):
            fail.append(f"publish_random: chunks every GPU stores into learn no count, got {learned!r}")
        # two learning reps, the warm-up and timed reps, the counting rep
        want = 2 + warm + reps + 1
        if d["params"].get("reps_verified") != str(want):
            fail.append(f"publish_{pattern}: decoupled reps_verified {d['params'].get('reps_verified')}, want {want}")
    for f in fail:
        print("FAIL:", f)
    if not fail:
        print("ok: decoupled learned and verified on 2 GPUs:",
              {n: s["params"].get("learned_chunks_per_gpu") for t in tests.values() for s in t.get("series", [])
               if s["label"] == "decoupled" for n in [t["name"]]})
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
