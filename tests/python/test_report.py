#!/usr/bin/env python3
"""Tests of tools/gpsm/report.py over the synthetic fixture tests/fixtures/results/scope_sample.json.

Plain script, no pytest:  python3 tests/python/test_report.py tools/gpsm/report.py
Prints one line per check, then "N passed, N failed"; exits nonzero on any failure.
"""

import copy
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "results", "scope_sample.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# what the fixture must produce: one plot per ok sweep/matrix test, one for all latencies
EXPECTED_PNGS = ["ce_peer.png", "ce_peer_peak.png", "sm_store_granularity.png",
                 "sm_store_blocks.png", "latencies.png"]
WAIVED = "um_fault"

from checks import check, finish


def run(report, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, report] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def png_ok(path):
    """Non-empty file with the PNG signature and an IHDR of nonzero size."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return False
    if len(head) < 24 or head[:8] != PNG_MAGIC or head[12:16] != b"IHDR":
        return False
    w, h = struct.unpack(">II", head[16:24])
    return w > 0 and h > 0


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def test_fixture(report, tmp):
    out = os.path.join(tmp, "single")
    rc, so, se = run(report, FIXTURE, "--out", out)
    if not check(rc == 0, "fixture: exit 0", "rc=%d\nstderr: %s" % (rc, se)):
        return
    for name in EXPECTED_PNGS:
        path = os.path.join(out, name)
        check(png_ok(path), "fixture: %s is a valid PNG" % name)
        check(path in so.splitlines(), "fixture: %s printed" % name, so)
    index = os.path.join(out, "index.md")
    check(os.path.isfile(index) and os.path.getsize(index) > 0, "fixture: index.md written")
    check(index in so.splitlines(), "fixture: index.md printed", so)
    pngs = sorted(f for f in os.listdir(out) if f.endswith(".png"))
    check(pngs == sorted(EXPECTED_PNGS), "fixture: exactly the expected PNGs", "got %s" % pngs)
    check(not os.path.exists(os.path.join(out, WAIVED + ".png")), "fixture: no plot for the waived test")
    text = open(index).read() if os.path.isfile(index) else ""
    for name in EXPECTED_PNGS:
        check("](%s)" % name in text, "index.md: links %s" % name)
    check(WAIVED in text and "waived" in text and "no concurrent managed access" in text,
          "index.md: waived test listed with its reason")
    # headline numbers: per series peak median (ce_peer gpu0->gpu1 peaks at 374.5 GB/s @ 1GiB)
    check("374.5 GB/s (peak @ 1GiB)" in text, "index.md: ce_peer headline (peak median)", text)
    check("2.23 us" in text, "index.md: lat_launch headline (median)", text)
    check("fixture-synthetic" in text, "index.md: names the device kind")
    check(se.strip() == "", "fixture: nothing on stderr", se)


def test_list(report, tmp):
    rc, so, se = run(report, FIXTURE, "--list", "--out", os.path.join(tmp, "list"))
    check(rc == 0, "--list: exit 0", se)
    doc = json.load(open(FIXTURE))
    for t in doc["tests"]:
        check(t["name"] in so, "--list: shows %s" % t["name"])
    check("plot=matrix" in so and "plot=latency" in so and "plot=line" in so,
          "--list: says how each test is plotted", so)
    check("waived" in so, "--list: shows the waived status")
    check(not os.path.exists(os.path.join(tmp, "list")), "--list: writes nothing")


def test_filter(report, tmp):
    out = os.path.join(tmp, "filter")
    rc, so, se = run(report, FIXTURE, "-t", "^sm_store", "--out", out)
    check(rc == 0, "-t: exit 0", se)
    pngs = sorted(f for f in os.listdir(out) if f.endswith(".png")) if os.path.isdir(out) else []
    check(pngs == ["sm_store_blocks.png", "sm_store_granularity.png"], "-t ^sm_store: only those plots",
          "got %s" % pngs)
    out2 = os.path.join(tmp, "filter2")
    rc, so, se = run(report, FIXTURE, "-t", "^ce_peer$", "-t", "^lat_", "--out", out2)
    pngs = sorted(f for f in os.listdir(out2) if f.endswith(".png")) if os.path.isdir(out2) else []
    check(rc == 0 and pngs == ["ce_peer.png", "latencies.png"], "-t twice: tests matching either",
          "rc=%d got %s %s" % (rc, pngs, se))
    rc, so, se = run(report, FIXTURE, "-t", "(", "--out", out)
    check(rc == 2 and "bad regular expression" in se, "-t with a bad regex: exit 2", "rc=%d %s" % (rc, se))


def test_help(report):
    rc, so, se = run(report, "--help")
    check(rc == 0 and "--out" in so and "--list" in so and "RESULTS.json" in so, "--help: usage text", so + se)


def expect_bad(report, tmp, label, path, needle):
    out = os.path.join(tmp, "bad_" + label)
    rc, so, se = run(report, path, "--out", out)
    lines = se.strip().splitlines()
    prefix = "gpsm: report: %s: " % path
    check(rc == 2, "bad file (%s): exit 2" % label, "rc=%d stderr=%s" % (rc, se))
    check(len(lines) == 1 and lines[0].startswith(prefix) and needle in lines[0],
          "bad file (%s): one line '%s...%s'" % (label, prefix, needle), "stderr: %r" % se)
    check(not os.path.exists(out), "bad file (%s): no output directory" % label)
    check("Traceback" not in se, "bad file (%s): no traceback" % label, se)


def test_bad_files(report, tmp):
    doc = json.load(open(FIXTURE))
    wrong = copy.deepcopy(doc)
    wrong["schema"] = "nvbandwidth.results"
    expect_bad(report, tmp, "wrong schema", write(os.path.join(tmp, "wrong_schema.json"), json.dumps(wrong)),
               "not a gpsm results file")
    expect_bad(report, tmp, "not JSON", write(os.path.join(tmp, "not_json.json"), "ce_peer 1024 0.13\n"),
               "not JSON")
    expect_bad(report, tmp, "missing", os.path.join(tmp, "does_not_exist.json"), "no such file")
    cache = {"schema": "gpsm.proact_cache", "schema_version": 1, "entries": []}
    expect_bad(report, tmp, "choice cache", write(os.path.join(tmp, "cache.json"), json.dumps(cache)),
               "gpsm proact --show-cache FILE")
    newer = copy.deepcopy(doc)
    newer["schema_version"] = 2
    expect_bad(report, tmp, "version 2", write(os.path.join(tmp, "v2.json"), json.dumps(newer)),
               "unsupported schema_version 2")
    broken = copy.deepcopy(doc)
    del broken["tests"][0]["unit"]
    expect_bad(report, tmp, "no unit", write(os.path.join(tmp, "no_unit.json"), json.dumps(broken)),
               "tests[0] (ce_peer): missing 'unit'")
    # one bad file among good ones: still rejected, nothing drawn
    out = os.path.join(tmp, "bad_mixed")
    rc, so, se = run(report, FIXTURE, os.path.join(tmp, "not_json.json"), "--out", out)
    check(rc == 2 and not os.path.exists(out), "good + bad file: exit 2 before drawing anything",
          "rc=%d %s" % (rc, se))


SIM = os.path.join(HERE, "..", "fixtures", "results", "sim_jacobi2d_sample.json")


def test_sim(report, tmp):
    """A gpsm sim --json file (system.gpus is a count, not a list of GPUs): drawn like a bench
    file, every plot and the index marked simulated; overlaid on a measured bench file."""
    out = os.path.join(tmp, "sim")
    rc, so, se = run(report, SIM, "--out", out)
    if not check(rc == 0, "sim: exit 0", "rc=%d\n%s" % (rc, se)):
        return
    check("Traceback" not in se and se.strip() == "", "sim: nothing on stderr", se)
    for f in ["bench_jacobi2d_256x256.png", "bench_jacobi2d_256x256_speedup.png"]:
        check(png_ok(os.path.join(out, f)), "sim: %s is a PNG" % f, so)
    idx = open(os.path.join(out, "index.md")).read()
    check("| simulated h200x4 | 2 x H200 |" in idx, "sim: index names the simulated system and its GPUs", idx[:600])
    rc, so, se = run(report, SIM, "--list", "--out", os.path.join(tmp, "sim_list"))
    check(rc == 0 and "SIMULATED" in so and "bench_jacobi2d_256x256" in so, "sim --list: marked simulated",
          so + se)
    out2 = os.path.join(tmp, "sim_overlay")
    rc, so, se = run(report, BENCH, SIM, "--out", out2)
    idx = open(os.path.join(out2, "index.md")).read() if rc == 0 else ""
    check(rc == 0 and "simulated h200x4" in idx and "| 4 x NVIDIA H200 |" in idx,
          "sim + bench overlay: both runs, the simulated one marked", "rc=%d %s" % (rc, se))


def test_publish_shape(report, tmp):
    """gpsm publish --json writes the scope results document with tool "publish", no model, its
    own options and a "skipped" list per test (publish_plan.cpp publish_document): drawn as such."""
    doc = json.load(open(FIXTURE))
    doc["tool"] = "publish"
    doc.pop("model", None)
    doc["options"] = {"reps": 5, "warmup": 1, "devices": [0, 1], "size": 1 << 26, "patterns": ["coalesced"],
                      "modes": ["inline", "combine"], "timing": "host_wall_launch_to_fence"}
    doc["tests"][0]["skipped"] = [{"mode": "bulk", "reason": "needs 2 or more GPUs"}]
    out = os.path.join(tmp, "publish")
    rc, so, se = run(report, write(os.path.join(tmp, "publish.json"), json.dumps(doc)), "--out", out)
    check(rc == 0 and png_ok(os.path.join(out, "ce_peer.png")), "publish-shaped file: drawn", "rc=%d %s" % (rc, se))


def mutate(rng, doc):
    """doc with one field somewhere replaced by a value of another type (or removed)."""
    doc = copy.deepcopy(doc)
    paths = []

    def walk(v, path):
        paths.append(path)
        if isinstance(v, dict):
            for k in v:
                walk(v[k], path + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v[:3]):
                walk(x, path + [i])
    walk(doc, [])
    path = rng.choice(paths[1:])
    parent = doc
    for k in path[:-1]:
        parent = parent[k]
    choice = rng.randrange(8)
    if choice == 0 and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = [None, 7, -1e308, "x", [], {}, True, [1, "a"]][choice]
    return doc


def test_bad_inputs(report, tmp):
    """Whatever the input, one `gpsm: report: FILE: why` line and exit 2 (or a drawing), never a
    traceback: a directory, an empty file, binary data, deep nesting, fields of the wrong type."""
    d = os.path.join(tmp, "a_directory")
    os.makedirs(d)
    expect_bad(report, tmp, "directory", d, "is a directory")
    expect_bad(report, tmp, "empty", write(os.path.join(tmp, "empty.json"), ""), "empty file")
    with open(os.path.join(tmp, "binary.json"), "wb") as f:
        f.write(bytes(range(256)))
    expect_bad(report, tmp, "binary", os.path.join(tmp, "binary.json"), "not JSON")
    expect_bad(report, tmp, "deep", write(os.path.join(tmp, "deep.json"), "[" * 100000 + "]" * 100000),
               "nested too deeply")
    expect_bad(report, tmp, "array", write(os.path.join(tmp, "array.json"), "[1, 2]"), "not a JSON object")
    sim = json.load(open(SIM))
    sim["system"]["gpus"] = "two"
    rc, so, se = run(report, write(os.path.join(tmp, "sim_gpus_str.json"), json.dumps(sim)),
                     "--out", os.path.join(tmp, "sim_gpus_str"))
    check(rc == 0 and "Traceback" not in se, "sim with system.gpus a string: still drawn", se)
    broken = json.load(open(SIM))
    broken["tests"][0]["series"][0]["points"][0]["median"] = "fast"
    expect_bad(report, tmp, "median a string", write(os.path.join(tmp, "median_str.json"), json.dumps(broken)),
               "expected a number")
    # seeded random type swaps over the sim, bench and scope fixtures: exit 0 or a one-line exit 2
    import random
    rng = random.Random(30)
    bad = []
    for k in range(15):
        src = [SIM, BENCH, FIXTURE][k % 3]
        path = write(os.path.join(tmp, "mut%d.json" % k), json.dumps(mutate(rng, json.load(open(src)))))
        out = os.path.join(tmp, "mut%d" % k)
        rc, so, se = run(report, path, "--out", out)
        lines = se.strip().splitlines()
        ok = (rc == 0 and "Traceback" not in se) or (
            rc == 2 and len(lines) == 1 and lines[0].startswith("gpsm: report: %s: " % path))
        if not ok:
            bad.append("%s: rc=%d %s" % (path, rc, se[-400:]))
    check(not bad, "15 seeded mutants: each drawn or one `gpsm: report:` line, no traceback", "\n".join(bad))


def test_overlay(report, tmp):
    doc = json.load(open(FIXTURE))
    other = copy.deepcopy(doc)
    other["device_kind"] = "fixture-synthetic-b"
    for t in other["tests"]:
        for s in t["series"]:
            for p in s["points"]:
                for k in ("median", "min", "max"):
                    p[k] = round(p[k] * 0.9, 6)
    other["tests"].append({"name": "ce_host", "group": "cpu-gpu", "description": "pinned host to GPU",
                           "unit": "GB/s", "x": "bytes", "status": "failed",
                           "reason": "verification failed at 64KiB", "series": []})
    second = write(os.path.join(tmp, "run_b.json"), json.dumps(other))
    out = os.path.join(tmp, "overlay")
    rc, so, se = run(report, FIXTURE, second, "--out", out)
    if not check(rc == 0, "overlay: exit 0", "rc=%d\n%s" % (rc, se)):
        return
    for name in EXPECTED_PNGS:
        check(png_ok(os.path.join(out, name)), "overlay: %s is a valid PNG" % name)
    text = open(os.path.join(out, "index.md")).read()
    check("fixture-synthetic-b" in text and "| fixture-synthetic |" in text,
          "overlay: index.md names both runs")
    check("337.1 GB/s (peak @ 1GiB)" in text and "374.5 GB/s (peak @ 1GiB)" in text,
          "overlay: headline numbers of both runs", text)
    check("ce_host" in text and "failed" in text and "verification failed at 64KiB" in text,
          "overlay: failed test listed with its reason")
    # the same file twice (same device kind): runs told apart by file stem
    copy_path = write(os.path.join(tmp, "again.json"), json.dumps(doc))
    out2 = os.path.join(tmp, "overlay_same")
    rc, so, se = run(report, FIXTURE, copy_path, "--out", out2)
    text = open(os.path.join(out2, "index.md")).read() if rc == 0 else ""
    check(rc == 0 and "fixture-synthetic/scope_sample" in text and "fixture-synthetic/again" in text,
          "overlay: same device kind told apart by file name", "rc=%d %s" % (rc, se))


BENCH = os.path.join(HERE, "..", "fixtures", "results", "bench_jacobi2d_sample.json")


def test_bench(report, tmp):
    """A gpsm bench file (a real 4xH200 run, commit cfefadd7f696): scaling lines and speedup bars;
    a bench test with a failed run is still drawn, the failure listed in the index."""
    out = os.path.join(tmp, "bench")
    rc, so, se = run(report, BENCH, "--out", out)
    check(rc == 0, "bench: exit 0", se)
    for f in ["bench_jacobi2d_4096x4096.png", "bench_jacobi2d_4096x4096_speedup.png"]:
        check(png_ok(os.path.join(out, f)), "bench: %s is a PNG" % f, so + se)
    doc = json.load(open(BENCH))
    t = doc["tests"][0]
    t["status"] = "failed"
    t["reason"] = "1 run(s) failed"
    t["failed"] = [{"paradigm": "gps", "gpus": 4, "reason": "verification failed: made up for the test"}]
    t["series"] = [sr for sr in t["series"] if sr["label"] != "gps"]
    bad = os.path.join(tmp, "bench_failed.json")
    write(bad, json.dumps(doc))
    out2 = os.path.join(tmp, "bench_failed")
    rc, so, se = run(report, bad, "--out", out2)
    check(rc == 0, "bench with a failed run: exit 0", se)
    check(png_ok(os.path.join(out2, "bench_jacobi2d_4096x4096_speedup.png")),
          "bench with a failed run: still drawn", so + se)
    idx = open(os.path.join(out2, "index.md")).read()
    check("failed" in idx, "bench with a failed run: the index says so", idx[-600:])



def test_graph_bench(report, tmp):
    """A bench file with the graph apps' fields (derived from the jacobi fixture): link bytes
    normalized to memcpy and the GPS subscriber distribution get their own plots."""
    with open(BENCH) as f:
        doc = json.load(f)
    t = doc["tests"][0]
    for k, sr in enumerate(t["series"]):
        for pt in sr["points"]:
            pt["link_bytes_vs_memcpy"] = 1.0 / (k + 1)
            if k == 0:
                pt["subscriber_pages"] = [6, 2, 1, 1][:max(1, int(pt["x"]))]
    src = os.path.join(tmp, "graph_bench.json")
    write(src, json.dumps(doc))
    out = os.path.join(tmp, "graph_bench")
    rc, so, se = run(report, src, "-o", out)
    check(rc == 0, "graph bench: exit 0", se)
    for f in [t["name"] + "_link_bytes.png", t["name"] + "_subscribers.png"]:
        check(png_ok(os.path.join(out, f)), "graph bench: %s is a PNG" % f, so + se)
def test_cg_figures(report, tmp):
    """cg bench files (derived from the jacobi fixture): the CPU-free thesis' Fig 3.3 per GPU count
    with the geometric mean its Table 3.1 quotes, printed exactly, unverified points left out, and
    Fig 3.4 (strong scaling) from the matrices with a 1-GPU point."""
    with open(BENCH) as f:
        base = json.load(f)
    proto = base["tests"][0]
    pt0 = proto["series"][0]["points"][0]
    # matrix: {paradigm: {gpus: median}}; at 4 GPUs Standard 2.0 and 9.0 (geomean 4.24),
    # Pipelined 3.0 and 12.0 (6.00); at 2 GPUs B's cpu_free_std is unverified, so Standard is A's
    # 1.67 alone, Pipelined 2.0 and 6.67 (3.65).
    times = {"mA": {"cpu_ctrl_std": {1: 200, 2: 150, 4: 100}, "cpu_free_std": {1: 180, 2: 90, 4: 50},
                    "cpu_ctrl_pipe": {1: 210, 2: 160, 4: 120}, "cpu_free_pipe": {1: 170, 2: 80, 4: 40}},
             "mB": {"cpu_ctrl_std": {2: 95, 4: 90}, "cpu_free_std": {2: 20, 4: 10},
                    "cpu_ctrl_pipe": {2: 100, 4: 96}, "cpu_free_pipe": {2: 15, 4: 8}}}
    tests = []
    for mat, by in times.items():
        t = json.loads(json.dumps(proto))
        t["app"], t["name"] = "cg", "bench_cg_" + mat
        t["problem"] = {"label": mat}
        t["series"] = []
        for lbl, pts in by.items():
            sr = {"label": lbl, "params": {}, "points": []}
            for g, m in sorted(pts.items()):
                pt = dict(pt0, x=float(g), median=float(m), min=float(m), max=float(m), time_s=[m * 1e-6])
                pt.pop("speedup", None)
                pt.pop("opportunity", None)
                if mat == "mB" and lbl == "cpu_free_std" and g == 2:
                    pt["verified"] = False
                sr["points"].append(pt)
            t["series"].append(sr)
        tests.append(t)
    base["tests"] = tests
    src = write(os.path.join(tmp, "cg_bench.json"), json.dumps(base))
    out = os.path.join(tmp, "cg_figs")
    rc, so, se = run(report, src, "--out", out)
    check(rc == 0, "cg figures: exit 0", se)
    check("at 4 GPUs (geometric mean): Standard 4.24x over 2, Pipelined 6.00x over 2" in so,
          "cg figures: the 4-GPU means", so)
    check("at 2 GPUs (geometric mean): Standard 1.67x over 1, Pipelined 3.65x over 2" in so,
          "cg figures: the unverified point is left out of the 2-GPU mean", so)
    for f in ["cg_free_over_ctrl_2gpu.png", "cg_free_over_ctrl_4gpu.png", "cg_strong_scaling.png"]:
        check(png_ok(os.path.join(out, f)), "cg figures: %s is a PNG" % f, so + se)
    idx = open(os.path.join(out, "index.md")).read()
    check("Fig 3.3" in idx and "Fig 3.4" in idx, "cg figures: listed in the index", idx[-800:])

    # The bandwidth each run achieved per GPU against the HBM rate of a gpsm scope file given beside
    # it: sm_stream_local's median at each series' largest footprint, the larger of the two GPUs'
    # (4000; the 6000 at 1 MB is the L2's). mA's cpu_free_std at 4 GPUs: 12000 GB/s over 4 = 3000.
    for t in tests:
        for sr in t["series"]:
            for pt in sr["points"]:
                best = t["name"] == "bench_cg_mA" and sr["label"] == "cpu_free_std" and pt["x"] == 4
                pt["mem_GBps"] = 12000.0 if best else 100.0 * pt["x"]
    src = write(os.path.join(tmp, "cg_bench_bw.json"), json.dumps(base))
    scope = json.loads(json.dumps(base))
    scope["tests"] = [{"name": "sm_stream_local", "group": "sm", "status": "ok", "unit": "GB/s", "x": "footprint_bytes",
                       "description": "copy loop", "series": [
                           {"label": "gpu0 copy loop (read + write)", "params": {"src": "gpu0", "dst": "gpu0"},
                            "points": [dict(pt0, x=1e6, median=6000.0, min=6000.0, max=6000.0),
                                       dict(pt0, x=1e9, median=4000.0, min=4000.0, max=4000.0)]},
                           {"label": "gpu1 copy loop (read + write)", "params": {"src": "gpu1", "dst": "gpu1"},
                            "points": [dict(pt0, x=1e9, median=3900.0, min=3900.0, max=3900.0)]}]}]
    for t in scope["tests"]:
        for sr in t["series"]:
            for pt in sr["points"]:
                for k in ("speedup", "opportunity", "mem_GBps"):
                    pt.pop(k, None)
    sc = write(os.path.join(tmp, "scope_stream.json"), json.dumps(scope))
    out = os.path.join(tmp, "cg_bw")
    rc, so, se = run(report, src, sc, "--out", out)
    check(rc == 0, "cg bandwidth: exit 0", se)
    check("at 4 GPUs: best 3000 GB/s (cpu_free_std, mA) = 75% of the 4000 GB/s gpsm scope measured" in so,
          "cg bandwidth: the 4-GPU best against the scope's HBM rate", so)
    check(png_ok(os.path.join(out, "cg_bandwidth_4gpu.png")), "cg bandwidth: a PNG per GPU count", so + se)
    rc, so, se = run(report, src, "--out", os.path.join(tmp, "cg_bw_nopeak"))
    check(rc == 0 and "pass a gpsm scope results file with sm_stream_local" in so,
          "cg bandwidth: without a scope file the report says how to get the HBM line", so + se)


def test_proact(report, tmp):
    """gpsm proact files (synthetic fixture): the sweep and tracking lines plus Fig 2.6, 2.8, 2.9."""
    fixture = os.path.join(HERE, "..", "fixtures", "results", "proact_sample.json")
    out = os.path.join(tmp, "proact")
    rc, so, se = run(report, fixture, "--out", out)
    check(rc == 0, "proact: report exits 0", se)
    for name in ("proact_sweep.png", "proact_sweep_fig2.6_speedup.png", "proact_sweep_fig2.9_overlap.png",
                 "proact_tracking_fig2.8_slowdown.png"):
        check(png_ok(os.path.join(out, name)), "proact: %s is a PNG" % name)
    with open(os.path.join(out, "index.md")) as f:
        index = f.read()
    check("Fig 2.6" in index and "Fig 2.8" in index and "Fig 2.9" in index, "proact: index lists the figures", index)
    # regions of Fig 2.6 from one curve: the plateau within 90 % of the peak
    sys.path.insert(0, os.path.dirname(os.path.abspath(report)))
    import report as rep  # noqa: E402
    pts = [(4096, 0.6), (65536, 1.7), (262144, 1.8), (1 << 20, 1.75), (16 << 20, 1.2)]
    check(rep.proact_regions(pts) == (65536, 1 << 20), "proact: regions from the plateau", str(rep.proact_regions(pts)))
    check(rep.proact_regions(pts[:1]) is None, "proact: no regions from one point")
    # a failed configuration still draws the others
    with open(fixture) as f:
        doc = json.load(f)
    doc["tests"][1]["status"] = "failed"
    doc["tests"][1]["reason"] = "1 configuration(s) failed"
    bad = os.path.join(tmp, "proact_failed.json")
    write(bad, json.dumps(doc))
    out2 = os.path.join(tmp, "proact_failed")
    rc, so, se = run(report, bad, "--out", out2)
    check(rc == 0 and png_ok(os.path.join(out2, "proact_sweep_fig2.6_speedup.png")),
          "proact: a failed sweep still draws its ok configurations", se)


def test_remote_study(report, tmp):
    """The remote-access study (synthetic fixture): each test's plot plus GPU-SM's Figs 6, 7, 8."""
    fixture = os.path.join(HERE, "..", "fixtures", "results", "remote_study_sample.json")
    out = os.path.join(tmp, "remote")
    rc, so, se = run(report, fixture, "--out", out)
    check(rc == 0, "remote: report exits 0", se)
    for name in ("remote.h1_bandwidth.png", "remote.h2_timeline.png", "remote.h3_intensity.png",
                 "remote.h4_occupancy.png", "remote.h5_readonly_cache.png", "remote.h2_timeline_fig6_rate.png",
                 "remote.h3_intensity_fig7_slowdown.png", "remote.h4_occupancy_fig8_slowdown.png"):
        check(png_ok(os.path.join(out, name)), "remote: %s is a PNG" % name)
    with open(os.path.join(out, "index.md")) as f:
        index = f.read()
    check("Fig 6" in index and "Fig 7" in index and "Fig 8" in index, "remote: index lists the figures", index)
    sys.path.insert(0, os.path.dirname(os.path.abspath(report)))
    import report as rep  # noqa: E402
    s = {"points": [{"x": 0, "median": 100.0, "verified": True}, {"x": 50, "median": 150.0, "verified": True},
                    {"x": 10, "median": 104.0, "verified": True}]}
    check(rep.remote_slowdowns(s) == [(0, 1.0), (10, 1.04), (50, 1.5)], "remote: slowdowns against the 0 % point",
          str(rep.remote_slowdowns(s)))
    s["points"][0]["verified"] = False
    check(rep.remote_slowdowns(s) == [], "remote: no slowdowns without a verified 0 % point")
    check(rep.remote_slowdowns(s, simulated=True)[1] == (10, 1.04), "remote: a simulated run's 0 % point counts")
    # `gpsm sim --remote-study --json` beside a measured run: one Fig 7 with both
    sim = os.path.join(HERE, "..", "fixtures", "results", "remote_study_sim_sample.json")
    out2 = os.path.join(tmp, "remote_overlay")
    rc, so, se = run(report, fixture, sim, "--out", out2, "-t", "remote\\.h3")
    check(rc == 0 and png_ok(os.path.join(out2, "remote.h3_intensity_fig7_slowdown.png")),
          "remote: measured and simulated runs overlaid in Fig 7", se)
    with open(os.path.join(out2, "index.md")) as f:
        index = f.read()
    check("simulated v100-pcie3" in index, "remote: the index names the simulated run", index)


def write_ct_slices(tmp, name, truncate=False):
    """A CT slices index and raw file as `gpsm bench --app ct --pictures` writes them (ct_slices.hpp):
    three images x three planes of a 6x5x4 volume, the phantom coded by position."""
    raw, slices = b"", []
    for k, image in enumerate(("phantom", "first iterate", "final image")):
        for plane, rows, cols in (("axial", 5, 6), ("coronal", 4, 6), ("sagittal", 4, 5)):
            vals = [(-1000.0 + 10 * k + r * cols + c) for r in range(rows) for c in range(cols)]
            slices.append({"image": image, "plane": plane, "rows": rows, "cols": cols, "offset": len(raw)})
            raw += struct.pack("<%df" % len(vals), *vals)
    doc = {"schema": "gpsm.ct_slices", "schema_version": 1, "size": "6x5x4:32x8x48:helical",
           "geometry": "6x5x4:32x8x48:helical", "voxel_mm": [1.0, 1.0, 2.0], "subsets": 4,
           "raw": name + ".f32", "slices": slices, "cost": [10.0, 4.0, 3.5], "rmse_hu": [1000.0, 80.0, 60.0]}
    with open(os.path.join(tmp, name + ".f32"), "wb") as f:
        f.write(raw[:-4] if truncate else raw)
    return write(os.path.join(tmp, name + ".json"), json.dumps(doc))


def test_ct_slices(report, tmp):
    path = write_ct_slices(tmp, "ct-small")
    out = os.path.join(tmp, "ct_out")
    rc, so, se = run(report, path, FIXTURE, "--out", out)
    if not check(rc == 0, "ct slices: exit 0 beside a results file", "rc=%d\nstderr: %s" % (rc, se)):
        return
    for name in ("ct-small_slices.png", "ct-small_cost.png"):
        check(png_ok(os.path.join(out, name)), "ct slices: %s is a valid PNG" % name)
    with open(os.path.join(out, "index.md")) as f:
        check("ct-small_slices.png" in f.read(), "ct slices: the index lists the slices figure")
    bad = write_ct_slices(tmp, "ct-short", truncate=True)
    rc, so, se = run(report, bad, "--out", os.path.join(tmp, "ct_bad"))
    check(rc == 2 and "ct-short.json" in se and "outside" in se,
          "ct slices: a raw file too short for its index is refused with exit 2", "rc=%d\nstderr: %s" % (rc, se))


def main():
    if len(sys.argv) != 2:
        print("usage: test_report.py PATH/TO/report.py", file=sys.stderr)
        return 2
    report = os.path.abspath(sys.argv[1])
    if not os.path.isfile(report):
        print("test_report.py: %s: no such file" % report, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpsm_report_test_") as tmp:
        test_help(report)
        test_fixture(report, tmp)
        test_list(report, tmp)
        test_filter(report, tmp)
        test_bad_files(report, tmp)
        test_overlay(report, tmp)
        test_bench(report, tmp)
        test_graph_bench(report, tmp)
        test_cg_figures(report, tmp)
        test_proact(report, tmp)
        test_remote_study(report, tmp)
        test_sim(report, tmp)
        test_publish_shape(report, tmp)
        test_bad_inputs(report, tmp)
        test_ct_slices(report, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
