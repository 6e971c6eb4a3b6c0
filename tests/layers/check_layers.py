#!/usr/bin/env python3
"""The layering check: every #include in src/, tools/ and include/ goes downward only.

The build enforces the layers already (each library sees only its own include root and those of
the layers below it, so a wrong include fails to compile). This check says *which edge* broke, in
words, without a compiler: run it after moving code between layers, and in the test suite.

  check_layers.py [--root DIR] [--plant LAYER:HEADER]

--plant adds one synthetic include (LAYER's code including HEADER) to prove the check can fail:
the test suite runs it once on the real tree (must pass) and once with a planted upward include
(must fail and name the edge).
"""
import argparse
import os
import re
import sys

# Layers, bottom to top, and what each may include besides itself. The map is the contract
# docs/architecture.md describes; keep the two in step.
ALLOWED = {
    "common": set(),
    "runtime": {"common"},
    "scope": {"common"},
    "proact": {"common", "runtime", "scope"},
    "publish": {"common", "runtime", "scope"},
    "apps": {"common", "runtime", "scope", "proact"},
    "sim": {"common", "scope", "apps"},
    "cli": {"common", "runtime", "scope", "proact", "publish", "apps", "sim"},
    "examples": {"runtime", "common"},  # public headers only (gpsm/...): see below
}

# Where each layer's code lives (relative to the repository root).
HOMES = [
    ("src/common", "common"),
    ("src/runtime", "runtime"),
    ("include/gpsm", "runtime"),  # the runtime's public headers (gpsm/error.hpp is common's)
    ("src/scope", "scope"),
    ("src/proact", "proact"),
    ("src/publish", "publish"),
    ("src/apps", "apps"),
    ("src/sim", "sim"),
    ("tools", "cli"),
    ("examples", "examples"),
]

# Which layer a header belongs to, by the path it is included as.
INTERNAL_PREFIX = re.compile(r"^(common|runtime|scope|proact|publish|apps|sim)/")
PUBLIC_OWNER = {
    "gpsm/error.hpp": "common",
    "gpsm/build_info.hpp": "common",
    "gpsm/machine_model.hpp": "scope",
    "gpsm/remote_study.hpp": "scope",
    "gpsm/topology.hpp": "scope",
}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def owner_of_header(path):
    m = INTERNAL_PREFIX.match(path)
    if m:
        return m.group(1)
    if path in PUBLIC_OWNER:
        return PUBLIC_OWNER[path]
    if path.startswith("gpsm/"):
        return "runtime"
    return None  # a system or third-party header, or one relative to the including file


def layer_of_file(rel):
    for home, layer in HOMES:
        if rel == home or rel.startswith(home + "/"):
            return layer
    return None


def includes(root):
    for home, _ in HOMES:
        top = os.path.join(root, home)
        for d, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith((".hpp", ".cpp", ".cu", ".cuh", ".h")):
                    continue
                full = os.path.join(d, f)
                rel = os.path.relpath(full, root)
                with open(full, encoding="utf-8", errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = INCLUDE.match(line)
                        if m:
                            yield rel, n, m.group(1)


def check(root, planted=None):
    broken = []
    found = list(includes(root))
    if planted:
        found.append(planted)
    for rel, line, header in found:
        src = layer_of_file(rel)
        dst = owner_of_header(header)
        if src == "examples" and not header.startswith("gpsm/") and dst is not None:
            broken.append(f"{rel}:{line}: includes \"{header}\": examples use only the installed "
                          f"public headers (gpsm/...), as a user's program would")
            continue
        if src is None or dst is None or src == dst:
            continue
        if dst not in ALLOWED[src]:
            may = ", ".join(sorted(ALLOWED[src])) or "nothing but itself"
            broken.append(f"{rel}:{line}: includes \"{header}\": the {src} layer may not depend on "
                          f"{dst} (it may use {may})")
    # A folder under src/ that no layer owns would escape the check: name it.
    src = os.path.join(root, "src")
    for d in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        if os.path.isdir(os.path.join(src, d)) and layer_of_file(f"src/{d}") is None:
            broken.append(f"src/{d}/: a folder no layer owns (add it to HOMES and ALLOWED in {os.path.basename(__file__)})")
    return broken


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--plant", help="LAYER:HEADER, a synthetic include the check must reject")
    a = ap.parse_args()
    planted = None
    if a.plant:
        layer, _, header = a.plant.partition(":")
        home = dict((l, h) for h, l in reversed(HOMES)).get(layer)
        if home is None or not header:
            sys.exit(f"check_layers: --plant wants LAYER:HEADER with LAYER one of {', '.join(ALLOWED)}")
        planted = (f"{home}/planted.cpp", 1, header)
    broken = check(os.path.normpath(a.root), planted)
    for b in broken:
        print(b)
    if broken:
        print(f"check_layers: {len(broken)} include(s) go against the layers", file=sys.stderr)
        return 1
    print("check_layers: every include goes downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
