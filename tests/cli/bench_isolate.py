#!/usr/bin/env python3
"""gpsm bench --isolate on a GPU: every run in a child process, the table and results file as
without it. Runs heat3d 64^3 on one GPU under single and gps with --isolate and checks: exit 0,
both runs ok and verified in the results file, options.isolate true, a progress line per run,
and nothing left in TMPDIR (the children's logs and outcomes, the shared references' folder).
Without a GPU, gpsm exits 3: reported as skipped (77), never passed.
Usage: bench_isolate.py --gpsm PATH --work DIR"""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpsm", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    out = os.path.join(a.work, "isolate.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.gpsm, "bench", "--isolate", "--app", "heat3d", "--size", "64", "--gpus", "1",
           "--paradigm", "single,gps", "--reps", "2", "--json", out]
    tmp = os.path.join(a.work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    for name in os.listdir(tmp):
        subprocess.run(["rm", "-rf", os.path.join(tmp, name)], check=True)
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if p.returncode == 3:
        print("skipped: no GPU here:", p.stderr.strip())
        return 77
    fail = []
    if p.returncode != 0:
        fail.append(f"exit {p.returncode}")
    # (The children's own progress lines are not checked here: a 64^3 run can end before the
    # parent's first look at its log; the CPU test IsolatedRun.ReturnsTheChildsOutcomeAndShowsItsProgress
    # checks that they are shown.)
    left = os.listdir(tmp)
    if left:
        fail.append(f"left in TMPDIR: {left}")
    for par in ("single", "gps"):
        if f"heat3d 64x64x64 {par} on 1 GPU" not in p.stderr:
            fail.append(f"no progress line for the {par} run on stderr")
    try:
        doc = json.load(open(out))
    except (OSError, ValueError) as e:
        print(f"FAIL: no results file {out}: {e}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    if doc.get("options", {}).get("isolate") is not True:
        fail.append("options.isolate is not true")
    tests = doc.get("tests", [])
    series = {s["label"]: s for t in tests for s in t.get("series", [])}
    for par in ("single", "gps"):
        s = series.get(par)
        if s is None:
            fail.append(f"no {par} series")
            continue
        pts = s.get("points", [])
        if len(pts) != 1 or not pts[0].get("verified") or len(pts[0].get("time_s", [])) != 2:
            fail.append(f"{par}: expected one verified point with 2 reps, got {pts}")
    if fail:
        print("FAIL: " + "; ".join(fail) + f"\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    print("ok: single and gps each ran in a child, verified; table:\n" + p.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
