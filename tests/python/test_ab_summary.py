#!/usr/bin/env python3
"""Tests of experiments/ab/ab_summary.py over hand-made gpsm bench results files.

Plain script, no pytest:  python3 tests/python/test_ab_summary.py experiments/ab/ab_summary.py
Prints one line per check, then "N passed, N failed"; exits nonzero on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish


def bench(points):
    """A gpsm bench document: points = {paradigm: (median or None, verified)} at 1 GPU, problem road:64."""
    series = [{"label": par, "points": [{"x": 1.0, "median": med, "verified": ver}]} for par, (med, ver) in points.items()]
    return {"schema": "gpsm.results", "tests": [{"name": "bench_pagerank_road:64", "problem": {"label": "road:64"},
                                                  "series": series}]}


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        files = {
            "ab-1-base-1.json": {"single": (100.0, True), "gps": (110.0, True), "infinite": (90.0, False)},
            "ab-1-variant-1.json": {"single": (100.0, True), "gps": (99.0, True), "infinite": (90.0, False)},
            "ab-1-variant-2.json": {"single": (100.0, True), "gps": (101.0, False), "infinite": (91.0, False)},
            "ab-1-base-2.json": {"single": (102.0, True), "gps": (112.0, True), "infinite": (92.0, False)},
        }
        for name, pts in files.items():
            json.dump(bench(pts), open(os.path.join(d, name), "w"))
        md = os.path.join(d, "ab.md")
        p = subprocess.run([sys.executable, script, d, "--markdown", md], capture_output=True, text=True)
        rows = {line.split("|")[3].strip(): line for line in p.stdout.splitlines() if line.startswith("| 1 ")}
        check(p.returncode == 0, "exit 0", p.stderr)
        check(set(rows) == {"single", "gps", "infinite"}, "one row per paradigm", str(list(rows)))
        # single: (100 + 100) / 2 over (100 + 102) / 2
        check("| 100.00 / 102.00 | 100.00 / 100.00 | 0.9901 |" in rows.get("single", ""), "single: means' ratio",
              rows.get("single", ""))
        # gps: one variant run unverified -> shown, no ratio
        check("| 110.00 / 112.00 | 99.00 / unverified | - |" in rows.get("gps", ""),
              "an unverified run gets no ratio", rows.get("gps", ""))
        # infinite: never checked, keeps its times: (90 + 91) / (90 + 92)
        check("| 90.00 / 92.00 | 90.00 / 91.00 | 0.9945 |" in rows.get("infinite", ""), "infinite keeps its times",
              rows.get("infinite", ""))
        check(os.path.exists(md) and open(md).read() == p.stdout, "--markdown writes the same table")
        # a run gpsm bench reports as failed (under the test's `failed`, with no point)
        doc = bench({"single": (100.0, True), "infinite": (90.0, False)})
        doc["tests"][0]["failed"] = [{"paradigm": "gps", "gpus": 1, "reason": "verification failed"}]
        json.dump(doc, open(os.path.join(d, "ab-1-variant-1.json"), "w"))
        p = subprocess.run([sys.executable, script, d], capture_output=True, text=True)
        gps = [l for l in p.stdout.splitlines() if "| gps |" in l]
        check(gps and "| failed / unverified |" in gps[0] and gps[0].endswith("| - |"),
              "a failed run is named and gets no ratio", str(gps))
        os.remove(os.path.join(d, "ab-1-base-2.json"))
        p = subprocess.run([sys.executable, script, d], capture_output=True, text=True)
        single = [l for l in p.stdout.splitlines() if "| single |" in l]
        check(single and "100.00 / missing" in single[0] and single[0].endswith("| - |"),
              "a missing run is named and gets no ratio", str(single))
        empty = os.path.join(d, "empty")
        os.mkdir(empty)
        p = subprocess.run([sys.executable, script, empty], capture_output=True, text=True)
        check(p.returncode != 0 and "no ab-" in p.stderr, "a folder without runs fails naming what it wants", p.stderr)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
