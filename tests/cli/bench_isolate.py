#!/usr/bin/env python3
"""gpsm bench --isolate on a GPU: every run in a child process, the table and results file as
without it. Runs heat3d 64^3 under single and gps with --isolate on one GPU, and where the machine
has two or more GPUs p2p_inline and gps on 1 and 2 GPUs (the main job runs its multi-GPU runs
isolated), and checks: exit 0, every run ok and verified in the results file, options.isolate
true, a progress line per run,
and nothing left in TMPDIR (the children's logs and outcomes, the shared references' folder).
Then a longer isolated command is sent SIGINT (Ctrl-C) while a child runs: gpsm must end by
that signal, say so, and leave TMPDIR empty (its child stopped, the folders removed).
Without a GPU, gpsm exits 3: reported as skipped (77), never passed.
Usage: bench_isolate.py --gpsm PATH --work DIR"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpsm", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    out = os.path.join(a.work, "isolate.json")
    if os.path.exists(out):
        os.remove(out)
    info = subprocess.run([a.gpsm, "info"], capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"^GPUs: (\d+)", info, re.M)
    multi = m is not None and int(m.group(1)) >= 2
    counts, pars = ("1,2", ("p2p_inline", "gps")) if multi else ("1", ("single", "gps"))
    runs = [(par, g) for g in map(int, counts.split(",")) for par in pars]
    cmd = [a.gpsm, "bench", "--isolate", "--app", "heat3d", "--size", "64", "--gpus", counts,
           "--paradigm", ",".join(pars), "--reps", "2", "--json", out]
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
    for par, g in runs:
        if f"heat3d 64x64x64 {par} on {g} GPU" not in p.stderr:
            fail.append(f"no progress line for the {par} run on {g} GPU(s) on stderr")
    try:
        doc = json.load(open(out))
    except (OSError, ValueError) as e:
        print(f"FAIL: no results file {out}: {e}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    if doc.get("options", {}).get("isolate") is not True:
        fail.append("options.isolate is not true")
    tests = doc.get("tests", [])
    series = {s["label"]: s for t in tests for s in t.get("series", [])}
    for par, g in runs:
        s = series.get(par)
        if s is None:
            fail.append(f"no {par} series")
            continue
        pts = [q for q in s.get("points", []) if q.get("x") == g]  # x: the GPU count
        if len(pts) != 1 or not pts[0].get("verified") or len(pts[0].get("time_s", [])) != 2:
            fail.append(f"{par} on {g} GPU(s): expected one verified point with 2 reps, got {pts}")
    if fail:
        print("FAIL: " + "; ".join(fail) + f"\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return 1
    # Ctrl-C in the middle: heat3d 512^3, 3 paradigms x 200 reps of 100 iterations (~30 ms a rep on
    # an H200) and a CPU reference of seconds: 20 s or more, so 4 s in a child is running.
    q = subprocess.Popen([a.gpsm, "bench", "--isolate", "--app", "heat3d", "--size", "512", "--gpus", "1",
                          "--paradigm", "single,memcpy,gps", "--reps", "200"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(4)
    q.send_signal(signal.SIGINT)
    try:
        out2, err2 = q.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        q.kill()
        print("FAIL: gpsm bench --isolate did not end within 60 s of SIGINT")
        return 1
    if q.returncode != -signal.SIGINT:
        fail.append(f"after SIGINT: exit {q.returncode}, not killed by SIGINT")
    if "interrupted by signal 2" not in err2:
        fail.append("after SIGINT: no 'interrupted by signal 2' on stderr")
    left = os.listdir(tmp)
    if left:
        fail.append(f"after SIGINT: left in TMPDIR: {left}")
    if fail:
        print("FAIL: " + "; ".join(fail) + f"\nstderr:\n{err2[-3000:]}")
        return 1
    print(f"ok: {len(runs)} runs, each in a child, verified; table:\n" + p.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
