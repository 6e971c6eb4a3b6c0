#!/usr/bin/env python3
"""Before/after table of two graph calibrations (experiments/sim-calibration/sim_graph_compare.py's OUT_PREFIX.json).

Usage: experiments/sim-calibration/sim_graph_before_after.py BEFORE.json AFTER.json OUT.md
Rows are matched by (app, problem, GPUs, measured paradigm, simulated paradigm); the count of
same-paradigm rows within 20 % is given for both (gps_hw rows, set beside other measured
paradigms, are listed but not counted, as in sim_graph_compare.py).
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_graph_compare import same_paradigm  # noqa: E402

before, after = (json.load(open(p))["rows"] for p in sys.argv[1:3])
key = lambda r: (r["app"], r["problem"], r["gpus"], r["measured_paradigm"], r["simulated_paradigm"])
b = {key(r): r for r in before}
lines = ["| app | graph | GPUs | measured | simulated | measured us | before us | error | after us | error |",
         "|---|---|---|---|---|---|---|---|---|---|"]
nb = na = n = 0
for r in after:
    o = b.get(key(r))
    if same_paradigm(r) and o is not None:
        n += 1
        nb += abs(o["error_pct"]) <= 20
        na += abs(r["error_pct"]) <= 20
    ob = f'{o["predicted_us"]:.1f} | {o["error_pct"]:+.0f} %' if o else "- | -"
    lines.append(f'| {r["app"]} | {r["problem"]} | {r["gpus"]} | {r["measured_paradigm"]} | {r["simulated_paradigm"]} | '
                 f'{r["measured_us"]:.1f} | {ob} | {r["predicted_us"]:.1f} | {r["error_pct"]:+.0f} % |')
lines.append("")
lines.append(f"Same-paradigm rows within 20 %: before {nb} of {n}, after {na} of {n}.")
open(sys.argv[3], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
