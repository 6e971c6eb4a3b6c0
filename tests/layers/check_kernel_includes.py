#!/usr/bin/env python3
"""The apps' kernel files do not reach the runtime's host headers through their includes.

A file under src/apps/ named *.cu holds device code and its launches; the host side of a run (the
context, its settings, allocations) lives in *_cuda.cpp files. If a kernel file's includes reach
gpsm/gps/context.hpp (and with it settings.hpp, subscription.hpp, distributed_array.hpp), every
change to those headers recompiles it, and the kernel files are the slow ones: on a 2-core
machine cg_gps.cu alone takes ~150 s (2026-11-29), and a change to settings.hpp rebuilt 36 CUDA
files, the CG kernels among them, until iter_sync.hpp and cg_sync.hpp left their host classes to
iter_sync_states.hpp and cg_sync_states.hpp. Headers are followed by their quoted includes,
resolved against src/ and include/ (and the including file's folder); system headers are not.

  check_kernel_includes.py [--root DIR] [--plant HEADER]

--plant makes HEADER (a path under src/ or include/, as it is included) also include
gpsm/gps/context.hpp, to prove the check can fail: the test suite runs it once on the real tree
(must pass) and once with a plant (must fail and name the chain).
"""
import argparse
import os
import sys

from check_layers import INCLUDE  # the layering check's reading of an #include line (same folder)

FORBIDDEN = "gpsm/gps/context.hpp"


def resolve(root, including_dir, header):
    for base in (os.path.join(root, "src"), os.path.join(root, "include"), including_dir):
        p = os.path.normpath(os.path.join(base, header))
        if os.path.isfile(p):
            return p
    return None  # generated (build/generated) or third-party: not followed


def direct_includes(path, planted):
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            m = INCLUDE.match(line)
            if m:
                out.append(m.group(1))
    if planted and path == planted:
        out.append(FORBIDDEN)
    return out


def chain_to_forbidden(root, start, planted):
    """The include chain from start to FORBIDDEN (names as included), or None."""
    seen = set()
    stack = [(start, [])]
    while stack:
        path, chain = stack.pop()
        if path in seen:
            continue
        seen.add(path)
        for h in direct_includes(path, planted):
            if h == FORBIDDEN or h == "gpsm/gps.hpp":
                return chain + [h]
            p = resolve(root, os.path.dirname(path), h)
            if p is not None:
                stack.append((p, chain + [h]))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--plant", help="a header (as included, e.g. apps/cg/cg_math.hpp) made to include the context")
    a = ap.parse_args()
    root = os.path.normpath(a.root)
    planted = None
    if a.plant:
        planted = resolve(root, root, a.plant)
        if planted is None:
            sys.exit(f"check_kernel_includes: --plant {a.plant}: no such header under src/ or include/")
    kernels = []
    for d, _, files in os.walk(os.path.join(root, "src", "apps")):
        kernels += [os.path.join(d, f) for f in sorted(files) if f.endswith(".cu")]
    if not kernels:
        sys.exit("check_kernel_includes: no kernel files under src/apps (wrong --root?)")
    broken = 0
    for k in sorted(kernels):
        chain = chain_to_forbidden(root, k, planted)
        if chain:
            broken += 1
            print(f"{os.path.relpath(k, root)}: reaches the context's header: {' -> '.join(chain)}")
    if broken:
        print(f"check_kernel_includes: {broken} kernel file(s) depend on {FORBIDDEN}; move the host "
              f"class that needs it into a header of its own", file=sys.stderr)
        return 1
    print(f"check_kernel_includes: none of {len(kernels)} kernel files reaches {FORBIDDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
