#!/usr/bin/env python3
"""Predicted (gpsm sim) against measured (gpsm bench) time per iteration, per app, problem,
paradigm and GPU count: the simulator's calibration table (docs/sim.md, "Calibration").

Usage: experiments/sim-calibration/sim_calibrate.py --bench BENCH.json[:PARADIGM,...] [...] --sim SIM.json [SIM.json ...]
                                [--markdown OUT.md] [--json OUT.json] [--target 0.2]

A bench file may name the paradigms (series labels) to take from it after a colon; a point
measured in two bench files is taken from the later one. Points are matched by app, problem
label, split axis (problem.axis; "z" when absent), paradigm and GPU count; each row names the
results directory its measurement came from, and the summary counts rows per app and paradigm.

Both kinds of file follow the gpsm.results schema (docs/results-schema.md): tests[] with app and
problem.label, series[] labelled by paradigm, points[] with x = GPUs and median in microseconds.
Only (app, problem, paradigm, gpus) present in both are compared; paradigms the simulator models
but no real run has (gps_hw, finepack, proact) are listed as not comparable. Exit status 0 always
(a calibration miss is a finding, not an error), 2 on unreadable input.
"""
import argparse
import json
import os
import sys


def fail(msg):
    print(f"sim_calibrate: {msg}", file=sys.stderr)
    sys.exit(2)


def load_points(paths, want_tool):
    pts, src = {}, {}
    for spec in paths:
        path, only = spec, None
        if ":" in spec and not spec.endswith(".json"):
            path, sel = spec.rsplit(":", 1)
            only = set(x for x in sel.split(",") if x)
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            fail(f"cannot read {path}: {e}")
        tool = doc.get("tool")
        if tool != want_tool:
            fail(f"{path} is a '{tool}' results file, expected '{want_tool}'")
        for t in doc.get("tests", []):
            app = t.get("app")
            label = (t.get("problem") or {}).get("label")
            axis = (t.get("problem") or {}).get("axis") or "z"
            for s in t.get("series", []):
                if only is not None and s["label"] not in only:
                    continue
                for p in s.get("points", []):
                    if p.get("median") is None:
                        continue
                    key = (app, label, axis, s["label"], int(p["x"]))
                    pts[key] = float(p["median"])
                    src[key] = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return pts, src


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", nargs="+", required=True)
    ap.add_argument("--sim", nargs="+", required=True)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    ap.add_argument("--target", type=float, default=0.2, help="relative error target (default 0.2)")
    a = ap.parse_args()
    measured, source = load_points(a.bench, "bench")
    predicted, _ = load_points(a.sim, "sim")
    rows = []
    for key in sorted(set(measured) & set(predicted)):
        m, p = measured[key], predicted[key]
        rows.append({"app": key[0], "problem": key[1], "axis": key[2], "paradigm": key[3], "gpus": key[4],
                     "measured_us": m, "predicted_us": p, "rel_error": (p - m) / m, "measured_in": source[key]})
    only_sim = sorted({k[3] for k in predicted} - {k[3] for k in measured})
    lines = ["| app | problem | axis | paradigm | GPUs | measured µs | predicted µs | error | measured in |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = "" if abs(r["rel_error"]) <= a.target else " ✗"
        lines.append(f"| {r['app']} | {r['problem']} | {r['axis']} | {r['paradigm']} | {r['gpus']} | "
                     f"{r['measured_us']:.1f} | {r['predicted_us']:.1f} | {100 * r['rel_error']:+.0f} %{mark} | "
                     f"{r['measured_in']} |")
    within = sum(abs(r["rel_error"]) <= a.target for r in rows)
    groups = {}
    for r in rows:
        g = groups.setdefault((r["app"], r["paradigm"]), [0, 0])
        g[0] += abs(r["rel_error"]) <= a.target
        g[1] += 1
    lines += ["", "| app | paradigm | within | compared |", "|---|---|---|---|"]
    lines += [f"| {k[0]} | {k[1]} | {v[0]} | {v[1]} |" for k, v in sorted(groups.items())]
    summary = (f"{within} of {len(rows)} predictions within {100 * a.target:.0f} % of the measurement"
               + (f"; simulated only (no real counterpart): {', '.join(only_sim)}" if only_sim else ""))
    text = "\n".join(lines) + "\n\n" + summary + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"schema": "gpsm.sim_calibration", "schema_version": 1, "target": a.target,
                       "rows": rows, "within": within, "compared": len(rows), "simulated_only": only_sim}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
