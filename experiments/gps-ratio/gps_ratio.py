#!/usr/bin/env python3
"""gps time / best hand-written time per app, size and GPU count, from gpsm.results documents."""
import json, sys, collections
HAND = {'single','memcpy','um','um_hints','rdl','p2p_inline','nccl','nvshmem','cpu_free',
        'cpu_ctrl_std','cpu_ctrl_pipe','cpu_free_std','cpu_free_pipe'}
GPS = {'gps', 'gps_pipe'}
# Runs of one app, size and GPU count are compared across all the files given, so paradigms run
# in separate processes (one_gpu_column.sh ISOLATE=1) meet in one row; pass one device call's files.
rows = {}  # (app, size label, gpus) -> {paradigm: verified median}, in order of first appearance
for f in sys.argv[1:]:
    d = json.load(open(f))
    if not isinstance(d, dict) or not isinstance(d.get('tests'), list):
        continue  # not a gpsm.results document (provenance.json and the like)
    for t in d['tests']:
        for s in t['series']:
            p = s['label']
            for pt in s.get('points', s.get('data', [])):
                row = rows.setdefault((t['app'], t['problem']['label'], int(pt['x'])), {})
                if p in row:
                    print(f"gps_ratio: {t['app']} {t['problem']['label']} {int(pt['x'])} {p} is in more than one file; "
                          f"the later ({f}) is used", file=sys.stderr)
                row[p] = pt['median'] if pt.get('verified') else None
for (app, label, g), by in rows.items():
    h = {p: v for p, v in by.items() if p in HAND and v}
    # The app's GPS versions: gps, and CG's Pipelined one (gps_pipe); the faster verified one.
    mine = {p: v for p, v in by.items() if p in GPS and v}
    if not mine or not h: continue
    bp, gp = min(h, key=h.get), min(mine, key=mine.get)
    print(f"{app:9s} {label:22s} {g} {gp:8s} {mine[gp]:9.2f} best {bp:13s} {h[bp]:9.2f} ratio {mine[gp]/h[bp]:.3f}")
