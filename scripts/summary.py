#!/usr/bin/env python3
"""One-screen summary of gpsm bench or gpsm sim results (the main job's last step, scripts/run.sh).

Usage: summary.py RESULTS.json [MORE.json ...] [--out FILE]

Per app and size, at the largest GPU count of its file: the fastest paradigm, its speedup over the
fastest 1-GPU run (any paradigm but infinite), its percent of the bound (infinite at the same GPU
count over its time), the same for gps (gps_hw in the simulator), and the figure the design papers
report for that kind of app. A percent of the bound is never shown above 100: a run faster than
infinite by more than noise (gpsm bench's beats_bound, or for older files the same rule on the
file's medians and spreads) is marked '!' and listed under the table. Reads the results schema
(docs/results-schema.md) of tool bench or sim; other files are refused with one line (exit 2).
"""
import json
import math
import os
import sys
import tempfile
import textwrap

# gpsm bench's noise rule (src/apps/harness/bench_report.hpp kBoundNoise, beats_bound): a run beats
# the bound when infinite's median over its median exceeds 1 + the larger of 2 % and either run's
# spread over its reps ((max - min) / median).
BOUND_NOISE = 0.02

# The papers' figures for each kind of app (docs/references.md), and the paradigm each is about
# (bench name, sim name). The GPS paper and the PROACT dissertation report means over their app
# sets on simulated 4-GPU systems; the GPS paper's set holds Jacobi, Diffusion (3D heat),
# Pagerank, SSSP and ALS. The CPU-free thesis reports CPU-free over CPU-controlled CG (8 GPUs).
GPS_MEAN = (("gps", "gps_hw"), "GPS paper: 3.0x, 93.7 %")
PAPERS = {
    "jacobi2d": GPS_MEAN,
    "heat3d": GPS_MEAN,
    "wave3d": GPS_MEAN,
    "pagerank": GPS_MEAN,
    "sssp": GPS_MEAN,
    "als": GPS_MEAN,
    "cg": (("cpu_free_pipe", "cpu_free_pipe"), "CPU-free thesis: 1.63x ctrl_pipe"),
    "scatter": (("proact", "finepack"), "PROACT diss.: finepack 77 %"),
}
FOOTNOTE = ("papers (simulated 4 GPUs, mean of their apps, speedup over 1 GPU and % of the infinite-bandwidth "
            "bound): GPS paper §7 (gps); PROACT dissertation §2.4 (proact 3.0x, 83 %), Fig 5.7 (finepack); "
            "CPU-free thesis Table 3.1 (cpu_free_pipe over cpu_ctrl_pipe, 8 A100)")


class BadInput(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}; give a results file gpsm bench or gpsm sim wrote")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not JSON ({e}); give a results file gpsm bench or gpsm sim wrote")
    if not isinstance(doc, dict) or doc.get("tool") not in ("bench", "sim") or not isinstance(doc.get("tests"), list):
        raise BadInput(f"{path}: not a gpsm bench or gpsm sim results file (tool 'bench' or 'sim' with tests); "
                       "the summary reads those")
    return doc


def runs_of(test):
    """[(label, gpus, point)] of one test's ok points."""
    out = []
    for s in test.get("series", []) or []:
        for p in s.get("points", []) or []:
            if isinstance(p, dict) and isinstance(p.get("median"), (int, float)) and p["median"] > 0:
                out.append((str(s.get("label", "?")), int(round(p.get("x", 0))), p))
    return out


def spread(p):
    lo, hi, m = p.get("min"), p.get("max"), p["median"]
    return (hi - lo) / m if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and m > 0 else 0.0


def bound_of(p, inf):
    """(percent of the bound capped at 100, beats: faster than the bound beyond noise) or (None, False)."""
    if inf is None:
        return None, False
    ratio = inf["median"] / p["median"]
    beats = p.get("beats_bound")
    if beats is None:  # files from before gpsm bench flagged it: the same rule on the file's figures
        beats = ratio > 1 + max(BOUND_NOISE, spread(inf), spread(p))
    return 100.0 * min(1.0, ratio), bool(beats)


def summarize_test(test, tool):
    """The summary row of one (app, size), or None when nothing ran."""
    runs = runs_of(test)
    if not runs:
        return None
    gmax = max(g for _, g, _ in runs)
    one = [p["median"] for label, g, p in runs if g == 1 and label != "infinite"]
    base = min(one) if one else None
    at = {label: p for label, g, p in runs if g == gmax}
    inf = at.get("infinite")
    if gmax == 1 and inf is not None:  # one GPU: the fastest run is its own elided run (gpsm bench's rule)
        inf = min(at.values(), key=lambda p: p["median"])
    cands = {l: p for l, p in at.items() if l != "infinite"}
    if not cands:
        return None
    best = min(cands, key=lambda l: cands[l]["median"])

    def figures(label):
        p = cands.get(label)
        if p is None:
            return None
        pct, beats = bound_of(p, inf)
        return {"label": label, "us": p["median"], "speedup": base / p["median"] if base else None,
                "bound_pct": pct, "beats": beats, "bound_us": inf["median"] if inf else None}

    app = str(test.get("app") or test.get("name", "?"))
    problem = test.get("problem", {})
    size = problem.get("label", "?") if isinstance(problem, dict) else "?"
    labels, paper = PAPERS.get(app, (("gps", "gps_hw"), "-"))
    theirs = labels[1] if tool == "sim" else labels[0]
    return {"app": app, "size": size, "gpus": gmax, "best": figures(best),
            "theirs": figures(theirs) or {"label": theirs, "missing": True}, "paper": paper,
            "flagged": flagged_runs(runs), "free_over_ctrl": free_over_ctrl(at) if app == "cg" else {}}


def free_over_ctrl(at):
    """cg at one GPU count: {variant: cpu_ctrl time / cpu_free time} for each variant both ran."""
    out = {}
    for v in ("std", "pipe"):
        ctrl, free = at.get("cpu_ctrl_" + v), at.get("cpu_free_" + v)
        if ctrl is not None and free is not None:
            out[v] = ctrl["median"] / free["median"]
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def free_over_ctrl_lines(rows):
    """The CPU-free thesis' Table 3.1 figure: the geometric mean over matrices of CPU-free over
    CPU-controlled speedups, per tool and GPU count (each matrix at its largest GPU count)."""
    groups = {}
    for r in rows:
        if r["free_over_ctrl"]:
            groups.setdefault((r["tool"], r["gpus"]), []).append(r["free_over_ctrl"])
    lines = []
    for (tool, g), ratios in sorted(groups.items()):
        cells = []
        for v, name in (("std", "Standard"), ("pipe", "Pipelined")):
            xs = [x[v] for x in ratios if v in x]
            if xs:
                cells.append(f"{name} {geomean(xs):.2f}x over {len(xs)} matri{'x' if len(xs) == 1 else 'ces'}")
        lines.append(f"cg {'SIMULATED ' if tool == 'sim' else ''}CPU-free over CPU-controlled at {g} GPU"
                     f"{'s' if g > 1 else ''} (geometric mean): " + ", ".join(cells) +
                     " (thesis Table 3.1, 8 A100: Standard 1.54x, Pipelined 1.63x)")
    return lines


def flagged_runs(runs):
    """Every (label, gpus, percent uncapped) that beats the bound at its GPU count."""
    inf = {g: p for label, g, p in runs if label == "infinite"}
    out = []
    for label, g, p in runs:
        if label == "infinite" or g not in inf or g == 1:  # one GPU: nothing to elide, nothing beats it
            continue
        _, beats = bound_of(p, inf[g])
        if beats:
            out.append((label, g, 100.0 * inf[g]["median"] / p["median"], p["median"], inf[g]["median"]))
    return out


def cell(f, with_us=True):
    us = f"{f['us']:>8.2f} " if with_us and not f.get("missing") else (" " * 9 if with_us else "")
    if f.get("missing"):
        return f"{f['label']:<13} {us}{'not run':>7} {'':>6}"
    sp = f"{f['speedup']:.2f}x" if f["speedup"] else "-"
    pct = f"{f['bound_pct']:.0f}%{'!' if f['beats'] else ''}" if f["bound_pct"] is not None else "-"
    return f"{f['label']:<13} {us}{sp:>7} {pct:>6}"


def render(docs):
    lines = []
    rows = []
    for path, doc in docs:
        for t in doc["tests"]:
            r = summarize_test(t, doc["tool"]) if isinstance(t, dict) else None
            if r:
                r["tool"] = doc["tool"]
                system = doc.get("system")
                r["where"] = system.get("name", "") if doc["tool"] == "sim" and isinstance(system, dict) else ""
                rows.append(r)
    if not rows:
        raise BadInput("no app ran in " + ", ".join(p for p, _ in docs) + "; nothing to summarize")
    sims = sorted({r["where"] for r in rows if r["tool"] == "sim"})
    kinds = []
    if any(r["tool"] == "bench" for r in rows):
        kinds.append("measured (gpsm bench)")
    if sims:
        kinds.append("SIMULATED on " + ", ".join(sims) + " (gpsm sim)")
    lines.append("gpsm summary: " + " and ".join(kinds) +
                 "; per app at its largest GPU count, us per iteration (median), speedup over the fastest "
                 "1-GPU run, % of the bound (infinite)")
    lines.append(f"{'app':<9} {'size':<14} {'N':>2}  {'best paradigm':<13} {'us':>8} {'speedup':>7} {'bound':>6}  "
                 f"{'the papers':<13} {'speedup':>7} {'bound':>6}  they report")
    for r in rows:
        lines.append(f"{r['app']:<9} {r['size'][:14]:<14} {r['gpus']:>2}  {cell(r['best'])}  "
                     f"{cell(r['theirs'], False)}  {r['paper']}")
    lines.extend(free_over_ctrl_lines(rows))
    flagged = [(r, f) for r in rows for f in r["flagged"]]
    if flagged:
        lines.append("! faster than infinite beyond noise (shown as 100 %): the elided run is not the bound there:")
        for r, (label, g, pct, us, inf_us) in flagged:
            lines.append(f"  {r['app']} {r['size']} {label} on {g} GPU{'s' if g > 1 else ''}: {us:.2f} us, "
                         f"infinite {inf_us:.2f} us ({pct:.0f} %)")
    lines.extend(textwrap.wrap(FOOTNOTE, 118, subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv):
    args, out = [], None
    i = 0
    while i < len(argv):
        if argv[i] == "--out":
            if i + 1 >= len(argv):
                print("summary: --out needs a file name", file=sys.stderr)
                return 2
            out = argv[i + 1]
            i += 2
            continue
        args.append(argv[i])
        i += 1
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        text = render([(p, load(p)) for p in args])
    except BadInput as e:
        print(f"gpsm summary: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    if out:
        write_atomic(out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
