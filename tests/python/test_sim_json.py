#!/usr/bin/env python3
"""gpsm sim --json: every simulated point carries the kernel bounds that --explain prints.

Plain script, no pytest:  python3 tests/python/test_sim_json.py build/bin/gpsm
Prints one line per check, then "N passed, N failed"; exits nonzero on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish

FIELDS = {"gpu", "name", "bound", "time_us", "dram_us", "l2_us", "flops_us", "compute_us", "wave_factor", "serial_us",
          "chain_us", "issue_us", "warp_insts", "hot_word_us", "hot_requests", "dram_bytes", "l2_bytes"}
BOUNDS = {"dram", "l2", "flops", "compute", "serial", "chain", "issue", "chain+issue", "dram+chain", "l2+chain",
          "flops+chain"}


def check_bounds(label, g, k):
    check(set(k) == FIELDS, f"{label} on {g}: the documented fields", str(sorted(k)))
    # compute_us (a measured compute, CT's projectors) comes after its own whole-wave factor
    roof = max(max(k["dram_us"], k["l2_us"], k["flops_us"]) * k["wave_factor"], k["compute_us"])
    check(abs(k["time_us"] - max(roof, k["serial_us"], k["chain_us"] + k["issue_us"]) - k["hot_word_us"]) < 1e-9,
          f"{label} on {g}: time is the largest bound (chain + issue one bound) plus the hot word's", json.dumps(k))
    check(k["hot_word_us"] >= 0 and k["hot_requests"] >= 0, f"{label} on {g}: hot word fields non-negative",
          json.dumps(k))
    check(k["bound"] in BOUNDS, f"{label} on {g}: the bound is named", k["bound"])


def main():
    gpsm = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "sim.json")
        p = subprocess.run([gpsm, "sim", "--app", "jacobi2d", "--size", "256", "--gpus", "1,2", "--paradigm",
                            "memcpy,infinite", "--iters", "2", "--json", out], capture_output=True, text=True)
        check(p.returncode == 0, "gpsm sim exits 0", p.stderr[-500:])
        doc = json.load(open(out)) if os.path.exists(out) else {"tests": []}
        pts = [(s["label"], pt) for t in doc["tests"] for s in t.get("series", []) for pt in s.get("points", [])]
        check(len(pts) == 4, "four points (2 paradigms x 2 GPU counts)", str(len(pts)))
        for label, pt in pts:
            kb = pt.get("kernel_bounds", [])
            g = int(round(pt["x"]))
            check(len(kb) == g, f"{label} on {g} GPU(s): one kernel per GPU", json.dumps(kb)[:300])
            for k in kb:
                check_bounds(label, g, k)
                check(k["warp_insts"] == 0 and k["issue_us"] == 0, f"{label} on {g}: jacobi2d gives no instructions",
                      json.dumps(k))
        # a graph app's row kernel gives its warp instructions: an issue term
        out = os.path.join(d, "pr.json")
        p = subprocess.run([gpsm, "sim", "--app", "pagerank", "--size", "road:64", "--gpus", "1", "--paradigm",
                            "memcpy,p2p_inline", "--iters", "2", "--json", out], capture_output=True, text=True)
        check(p.returncode == 0, "gpsm sim pagerank exits 0", p.stderr[-500:])
        doc = json.load(open(out)) if os.path.exists(out) else {"tests": []}
        rows = {s["label"]: k for t in doc["tests"] for s in t.get("series", []) for pt in s.get("points", [])
                for k in pt.get("kernel_bounds", []) if k["name"] == "pagerank_rows"}
        check(set(rows) == {"memcpy", "p2p_inline"}, "pagerank_rows for both paradigms", str(sorted(rows)))
        for label, k in rows.items():
            check_bounds(label, 1, k)
            check(k["warp_insts"] > 0 and k["issue_us"] > 0, f"{label}: pagerank_rows gives warp instructions", json.dumps(k))
        if len(rows) == 2:
            check(rows["p2p_inline"]["warp_insts"] > rows["memcpy"]["warp_insts"],
                  "p2p_inline's push variant issues more instructions than the local kernel", json.dumps(rows))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
