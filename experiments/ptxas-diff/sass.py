#!/usr/bin/env python3
"""SASS (sm_90) of the kernels of one .cu file of a tree, with the build's flags, and a summary of
each kernel: instructions, local-memory spills (STL/LDL) and, for each loop (a backward branch,
at most 200 instructions, two or more global loads), its global loads and how many loads whose
address derives from an earlier load of the loop (gathers, and the row's column and weight loads)
it issues before the first floating-point instruction that reads one of them: a rough count of
the loads a warp keeps in flight. Why: on 2026-11-29 two builds of sssp's held row kernel with the same
registers and no spill differed by 18 % because ptxas scheduled the gather loop with one gather in
flight in one of them (docs/graphs.md); ptxas -v does not show that.

The toolkit here has no cuobjdump or nvdisasm; the PyPI wheel nvidia-cuda-nvdisasm has nvdisasm
(fetched once into /tmp/nvdisasm-wheel, not a project dependency). Needs a configured build/.

  sass.py TREE FILE_REL_TO_src [KERNEL_SUBSTRING] [--dump OUT.sass]
"""
import argparse, glob, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHEEL = "/tmp/nvdisasm-wheel"


def nvdisasm():
    found = glob.glob(f"{WHEEL}/x/nvidia/*/bin/nvdisasm")
    if not found:
        os.makedirs(WHEEL, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", WHEEL, "nvidia-cuda-nvdisasm"], check=True)
        whl = glob.glob(f"{WHEEL}/nvidia_cuda_nvdisasm-*.whl")[0]
        subprocess.run([sys.executable, "-m", "zipfile", "-e", whl, f"{WHEEL}/x"], check=True)
        found = glob.glob(f"{WHEEL}/x/nvidia/*/bin/nvdisasm")
    os.chmod(found[0], 0o755)
    return found[0]


def cubin(tree, src, out):
    fl = open(f"{ROOT}/build/src/CMakeFiles/gpsm_apps.dir/flags.make").read()
    g = lambda k: re.search(k + r" = (.*)", fl).group(1)
    flags = re.sub(r"--generate-code=\S+|-gencode\S*|-arch\S*", "", g("CUDA_FLAGS"))
    cmd = (f"/usr/local/cuda/bin/nvcc {g('CUDA_DEFINES')} -I{tree}/src -I{tree}/include -I{ROOT}/build/generated "
           f"-I{tree}/src/scope/include -isystem={ROOT}/.deps/fmt/include -isystem={ROOT}/.deps/json/include "
           f"-isystem={ROOT}/.deps/cli11/include {flags} -arch=sm_90 -cubin {tree}/src/{src} -o {out}")
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=f"{ROOT}/build/src")
    if r.returncode != 0:
        sys.exit(r.stderr[-3000:])


INS = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def summary(name, body):
    ins = []  # (address, text)
    labels = {}
    for l in body:
        m = INS.search(l)
        if m:
            ins.append((int(m.group(1), 16), m.group(2)))
        elif l.strip().startswith(".L_x_") and l.strip().endswith(":"):
            labels[l.strip()[:-1]] = len(ins)
    stl = sum("STL" in t for _, t in ins)
    ldl = sum("LDL" in t for _, t in ins)
    print(f"{name}: {len(ins)} instructions, {stl} STL / {ldl} LDL")
    for i, (_, t) in enumerate(ins):
        m = re.search(r"\bBRA\s+`\((\.L_x_\d+)\)", t)  # a plain backward branch closes a loop
        if not m or "BRA.DIV" in t or m.group(1) not in labels or labels[m.group(1)] > i:
            continue
        loop = ins[labels[m.group(1)]:i + 1]
        loads = sum(bool(re.search(r"\bLDG\b", u)) for _, u in loop)
        if loads < 2 or len(loop) > 200:  # longer "loops" are backward jumps in the rare paths
            continue
        print(f"  loop at {loop[0][0]:#06x}, {len(loop)} instructions, {loads} global loads; "
              f"dependent loads before the first use: {gathers_in_flight(loop)}")
    print()


def regs(text):
    return re.findall(r"\bR(\d+)\b", text)


def gathers_in_flight(loop):
    """Loads whose address derives from a loaded value, issued before the first floating-point
    instruction that reads one of their results, in the loop body's order."""
    loaded, derived, gathered, n = set(), set(), set(), 0
    for _, u in loop:
        op = u.split()[0].lstrip("@!P0123456789T").strip() if u.split() else ""
        if u.startswith("@"):
            op = u.split()[1]
        r = regs(u)
        dst, srcs = (r[0], r[1:]) if r else (None, [])
        if re.match(r"LDG", op):
            addr = srcs[0] if srcs else None
            if addr in derived or addr in loaded:
                n += 1
                gathered.add(dst)
            else:
                loaded.add(dst)
            continue
        if re.match(r"F(ADD|MNMX|FMA|MUL)", op) and any(x in gathered for x in srcs):
            return n
        if dst and any(x in loaded or x in derived for x in srcs):
            derived.add(dst)
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree"); ap.add_argument("src"); ap.add_argument("kernel", nargs="?", default="")
    ap.add_argument("--dump")
    a = ap.parse_args()
    out = "/tmp/sass_py.cubin"
    cubin(os.path.abspath(a.tree), a.src, out)
    text = subprocess.run([nvdisasm(), "-c", out], capture_output=True, text=True, check=True).stdout
    lines = text.split("\n")
    starts = [i for i, l in enumerate(lines) if l.startswith(".text.")] + [len(lines)]
    dump = []
    for s, e in zip(starts, starts[1:]):
        name = lines[s][len(".text."):].rstrip(":")
        if a.kernel in name:
            summary(re.sub(r"_GLOBAL__N__\w+?_cu_[0-9a-f]+", "", name), lines[s:e])
            dump += lines[s:e]
    if a.dump:
        open(a.dump, "w").write("\n".join(dump) + "\n")


if __name__ == "__main__":
    main()
