#!/usr/bin/env python3
"""Predicted (gpsm sim) against measured (gpsm bench) time per iteration of the graph apps.

Usage: experiments/sim-calibration/sim_graph_compare.py MEASURED_DIR SIM_DIR OUT_PREFIX
MEASURED_DIR holds gpsm bench graph-*.json, SIM_DIR gpsm sim sim-*.json; writes OUT_PREFIX.md and
OUT_PREFIX.json. Same paradigms are compared, the measured 1-GPU `single` with the simulated 1-GPU
memcpy (the same kernel), and gps_hw (GPS hardware, which no real run has) with the measured
infinite, p2p_inline and software gps, as reference rows.
"""
import json, sys, os


def same_paradigm(r):
    """A row that counts toward the calibration: the same paradigm measured and simulated, or the
    measured 1-GPU single against the simulated 1-GPU memcpy (the same kernel); not gps_hw's
    reference rows beside other measured paradigms."""
    return r["simulated_paradigm"] == r["measured_paradigm"] or (
        r["measured_paradigm"] == "single" and r["simulated_paradigm"] == "memcpy")


def pts(path):
    d = json.load(open(path)); r = {}
    for t in d["tests"]:
        for s in t.get("series", []):
            for p in s["points"]:
                if p.get("median") is not None:
                    r[(t["app"], t["problem"]["label"], s["label"], int(round(p["x"])))] = (p["median"], p.get("link_bytes_per_iter"))
    return r


def main(meas_dir, sim_dir, out):
    M, S = {}, {}
    for f in sorted(os.listdir(meas_dir)):
        if f.startswith("graph-") and f.endswith(".json"): M.update(pts(os.path.join(meas_dir, f)))
    for f in sorted(os.listdir(sim_dir)):
        if f.startswith("sim-") and f.endswith(".json"): S.update(pts(os.path.join(sim_dir, f)))
    rows = []
    # (measured paradigm, simulated paradigm): same paradigm; 1-GPU single against the 1-GPU memcpy run (same kernel);
    # gps_hw (GPS hardware) against the measured infinite, p2p_inline and software gps, as reference rows
    # (the software gps is not gps_hw: those rows do not count as same-paradigm)
    # g 0: every GPU count > 1 the simulation has
    pairs = [("single", "memcpy", 1), ("memcpy", "memcpy", 0), ("p2p_inline", "p2p_inline", 0), ("rdl", "rdl", 0),
             ("infinite", "infinite", 1), ("infinite", "infinite", 0), ("infinite", "gps_hw", 0),
             ("p2p_inline", "gps_hw", 0), ("gps", "gps_hw", 0)]
    multi = sorted({k[3] for k in S if k[3] > 1})
    for (app, prob) in sorted({(k[0], k[1]) for k in S}):
        for mp, sp, g0 in pairs:
          for g in ([g0] if g0 else multi):
            m, s = M.get((app, prob, mp, g)), S.get((app, prob, sp, g))
            if m is None or s is None: continue
            rows.append(dict(app=app, problem=prob, gpus=g, measured_paradigm=mp, simulated_paradigm=sp,
                             measured_us=m[0], predicted_us=s[0], error_pct=100 * (s[0] - m[0]) / m[0],
                             measured_link_bytes=m[1], predicted_link_bytes=s[1]))
    json.dump(dict(measured=meas_dir, rows=rows), open(out + ".json", "w"), indent=1)
    with open(out + ".md", "w") as f:
        f.write(f"Predicted (gpsm sim, h200x4 preset) against measured ({meas_dir}); error = (predicted - measured) / measured.\n\n")
        f.write("| app | graph | GPUs | measured | simulated | measured us | predicted us | error | link MB meas / pred |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            ml = "-" if not r["measured_link_bytes"] else f"{r['measured_link_bytes']/1e6:.3f}"
            pl = "-" if not r["predicted_link_bytes"] else f"{r['predicted_link_bytes']/1e6:.3f}"
            f.write(f"| {r['app']} | {r['problem']} | {r['gpus']} | {r['measured_paradigm']} | {r['simulated_paradigm']} | {r['measured_us']:.1f} | {r['predicted_us']:.1f} | {r['error_pct']:+.0f} % | {ml} / {pl} |\n")
        n = [r for r in rows if same_paradigm(r)]
        f.write(f"\nSame-paradigm rows within 20 %: {sum(abs(r['error_pct']) <= 20 for r in n)} of {len(n)}.\n")
    print(open(out + ".md").read())


if __name__ == "__main__":
    main(*sys.argv[1:4])
