#!/usr/bin/env python3
"""The table of an experiments/ab/device-ab.sh run: per command, problem, paradigm and GPU count, the base's
and the variant's medians (two runs each, in the order base, variant, variant, base) and the ratio
variant / base of their means. A run that failed or was not verified shows as such and gets no
ratio (a time for a wrong answer is not a result); `infinite` is a bound whose answer is never
checked, and keeps its times.

Usage: experiments/ab/ab_summary.py DIR [--markdown FILE]   (DIR holds ab-<n>-{base,variant}-{1,2}.json)
"""
import argparse, glob, json, os, re, sys

NAME = re.compile(r"ab-(\d+)-(base|variant)-([12])\.json$")


def points(path):
    """{(problem, paradigm, gpus): median or a word saying why there is none}. gpsm bench lists a
    run that failed or was skipped under the test's `failed` / `skipped`, not as a point."""
    d = json.load(open(path))
    out = {}
    for t in d.get("tests", []):
        prob = t.get("problem", {}).get("label", t.get("name", "?"))
        for s in t.get("series", []):
            for p in s.get("points", []):
                key = (prob, s["label"], int(round(p["x"])))
                if p.get("verified") is False and s["label"] != "infinite":  # infinite: a bound, never checked
                    out[key] = "unverified"
                else:
                    out[key] = float(p["median"])
        for word in ("failed", "skipped"):
            for f in t.get(word, []):
                out[(prob, f["paradigm"], int(f["gpus"]))] = word
    return out


def table(directory):
    runs = {}
    for f in sorted(glob.glob(os.path.join(directory, "ab-*.json"))):
        m = NAME.search(f)
        if m:
            runs.setdefault(int(m.group(1)), {})[(m.group(2), int(m.group(3)))] = points(f)
    if not runs:
        raise SystemExit(f"ab_summary: {directory}: no ab-<n>-<base|variant>-<1|2>.json files")
    rows = []
    for n in sorted(runs):
        r = runs[n]
        keys = sorted(set().union(*r.values()))
        for k in keys:
            b = [r.get(("base", i), {}).get(k) for i in (1, 2)]
            v = [r.get(("variant", i), {}).get(k) for i in (1, 2)]
            ok = all(isinstance(x, float) for x in b + v)
            ratio = sum(v) / sum(b) if ok else None
            rows.append((n, *k, b, v, ratio))
    return rows


def fmt(x):
    return f"{x:.2f}" if isinstance(x, float) else (x or "missing")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--markdown")
    a = ap.parse_args(argv)
    lines = ["| # | problem | paradigm | GPUs | base µs (1 / 2) | variant µs (1 / 2) | variant / base |",
             "|---|---|---|---|---|---|---|"]
    for n, prob, par, g, b, v, ratio in table(a.dir):
        lines.append(f"| {n} | {prob} | {par} | {g} | {fmt(b[0])} / {fmt(b[1])} | {fmt(v[0])} / {fmt(v[1])} | "
                     f"{'%.4f' % ratio if ratio is not None else '-'} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.markdown:
        open(a.markdown, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
