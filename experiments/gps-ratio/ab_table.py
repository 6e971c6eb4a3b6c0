#!/usr/bin/env python3
"""Medians of two gpsm.results documents side by side (same app, size, paradigm, GPU count):
which runs a change moved, from an A/B made in one device call. Usage: ab_table.py OLD.json NEW.json"""
import json, sys

def load(f):
    d = json.load(open(f))
    out = {}
    for t in d['tests']:
        for s in t['series']:
            for p in s.get('points', []):
                out[(t['app'], t['problem']['label'], s['label'], int(p['x']))] = (p['median'], bool(p.get('verified')))
    return out

old, new = load(sys.argv[1]), load(sys.argv[2])
print(f"{'app':9s} {'size':26s} {'paradigm':14s} GPUs {'old us':>10s} {'new us':>10s} new/old  (! = not verified)")
for k in sorted(set(old) | set(new)):
    a, b = old.get(k), new.get(k)
    fa = f"{a[0]:10.2f}{'' if a[1] else '!'}" if a else f"{'-':>10s}"
    fb = f"{b[0]:10.2f}{'' if b[1] else '!'}" if b else f"{'-':>10s}"
    r = f"{b[0] / a[0]:.3f}" if a and b else ''
    print(f"{k[0]:9s} {k[1]:26s} {k[2]:14s} {k[3]:4d} {fa} {fb} {r}")
