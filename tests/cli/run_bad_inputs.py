#!/usr/bin/env python3
"""The bad-input table: runs the gpsm binary over each case of bad_inputs.tsv and checks its exit
code (README.md, "Exit codes": 1 a run failed, 2 bad usage or input, 3 no GPU) and a message regex.
Every case also checks that no bare exception text reaches the user (std::bad_alloc, a lone
"stoull", "terminate called", a Python traceback).

The files the cases read are generated into --work at test time (fixtures/ below): malformed,
truncated, empty, binary, huge-declared and wrong-schema inputs, mutated from the small valid
fixtures under tests/fixtures.

  run_bad_inputs.py --gpsm BIN --table TSV --fixtures DIR --work DIR [--case NAME] [--list]
Table columns (tab-separated, '#' comments): name, exit code, message regex (Python re.search
over stderr+stdout), arguments (shlex-split; {F} is the generated fixture folder), optional
environment (NAME=VALUE, space-separated).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

# What must never reach a user, whatever the case.
FORBIDDEN = [
    (re.compile(r"std::bad_alloc|^bad_alloc$", re.M), "bare std::bad_alloc"),
    (re.compile(r"^(stoi|stol|stoll|stoul|stoull|stof|stod)$", re.M), "bare std::sto* text"),
    (re.compile(r"terminate called"), "uncaught exception (terminate)"),
    (re.compile(r"Traceback \(most recent call last\)"), "Python traceback"),
    (re.compile(r"Segmentation fault|core dumped"), "crash"),
]


def read_table(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < 4 or len(cols) > 5:
                sys.exit(f"{path}:{n}: expected 4 or 5 tab-separated columns, found {len(cols)}")
            name, code, regex, args = cols[:4]
            env = cols[4] if len(cols) == 5 else ""
            try:
                re.compile(regex)
            except re.error as e:
                sys.exit(f"{path}:{n}: bad regex: {e}")
            cases.append({"name": name, "code": int(code), "regex": regex, "args": args, "env": env, "line": n})
    names = [c["name"] for c in cases]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        sys.exit(f"{path}: duplicate case names: {sorted(dup)}")
    return cases


def write(path, data):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def good_png():
    """A 9 x 7 8-bit gray PNG, written with zlib."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes((17 * x + 29 * y) % 256 for x in range(9)) for y in range(7))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 9, 7, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def make_fixtures(src, out):
    """The inputs the table names as {F}/<file>, made fresh for every run."""
    os.makedirs(out, exist_ok=True)
    mtx_head = "%%MatrixMarket matrix coordinate real general\n"
    good_mtx = mtx_head + "4 4 4\n1 2 1.0\n2 3 1.0\n3 4 1.0\n4 1 1.0\n"
    write(f"{out}/empty.mtx", "")
    # PNGs for `gpsm filter`: a valid 8-bit gray one (so the GPU lookup is reached), the same cut
    # after its header, text named .png, an empty file and a folder.
    png = good_png()
    write(f"{out}/good.png", png)
    write(f"{out}/truncated.png", png[:40])
    write(f"{out}/text.png", "not an image\n")
    write(f"{out}/empty.png", b"")
    os.makedirs(f"{out}/dir.png", exist_ok=True)
    write(f"{out}/truncated.mtx", mtx_head + "4 4 4\n1 2 1.0\n2 3 1.0\n")
    write(f"{out}/binary.mtx", bytes(range(256)) * 4)
    write(f"{out}/no_header.mtx", "4 4 1\n1 2 1.0\n")
    write(f"{out}/bad_value.mtx", mtx_head + "4 4 1\n1 2 x\n")
    write(f"{out}/out_of_range.mtx", mtx_head + "4 4 1\n9 2 1.0\n")
    write(f"{out}/huge_header.mtx", mtx_head + "300000000 300000000 1\n1 1 1.0\n")
    write(f"{out}/overflow_header.mtx", mtx_head + "99999999999999999999 4 1\n1 1 1.0\n")
    write(f"{out}/good.mtx", good_mtx)
    os.makedirs(f"{out}/dir.mtx", exist_ok=True)
    os.makedirs(f"{out}/dir.json", exist_ok=True)

    with open(os.path.join(src, "machine_models", "h200x4_full_machine_model.json"), encoding="utf-8") as f:
        model = json.load(f)
    write(f"{out}/model.json", json.dumps(model))
    m = json.loads(json.dumps(model))
    m["latencies"][0]["min_us"] = -5.0
    m["latencies"][0]["median_us"] = -1.0
    write(f"{out}/model_negative_latency.json", json.dumps(m))
    m = json.loads(json.dumps(model))
    m["paths"][0]["peak_GBps"] = -2.5
    write(f"{out}/model_negative_rate.json", json.dumps(m))
    m = json.loads(json.dumps(model))
    m["paths"][0]["segments"][0]["bw_GBps"] = -3.0
    write(f"{out}/model_negative_bw.json", json.dumps(m))
    m = json.loads(json.dumps(model))
    del m["paths"]
    write(f"{out}/model_no_paths.json", json.dumps(m))
    write(f"{out}/model_truncated.json", json.dumps(model)[:500])
    write(f"{out}/empty.json", "")
    write(f"{out}/binary.json", bytes(range(256)) * 4)
    write(f"{out}/wrong_schema.json", json.dumps({"schema": "something.else", "schema_version": 1}))
    write(f"{out}/array.json", "[1, 2, 3]\n")
    write(f"{out}/number.json", "42\n")

    with open(os.path.join(src, "results", "proact_cache_sample.json"), encoding="utf-8") as f:
        cache = f.read()
    write(f"{out}/cache_truncated.json", cache[: len(cache) // 2])
    with open(os.path.join(src, "results", "scope_sample.json"), encoding="utf-8") as f:
        results = f.read()
    write(f"{out}/results_truncated.json", results[: len(results) // 2])


def run_case(c, gpsm, fixtures):
    args = [a.replace("{F}", fixtures) for a in shlex.split(c["args"])]
    env = dict(os.environ)
    env.pop("GPSM_MEMORY_LIMIT", None)
    for kv in c["env"].split():
        k, _, v = kv.partition("=")
        env[k] = v.replace("{F}", fixtures)
    try:
        p = subprocess.run([gpsm] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=120,
                           cwd=fixtures)
    except subprocess.TimeoutExpired:
        return False, "timed out after 120 s (an impossible request not refused up front?)", ""
    out = p.stdout.decode("utf-8", "replace")
    problems = []
    if p.returncode != c["code"]:
        problems.append(f"exit code {p.returncode}, expected {c['code']}")
    if not re.search(c["regex"], out, re.M):
        problems.append(f"output does not match /{c['regex']}/")
    for rx, what in FORBIDDEN:
        if rx.search(out):
            problems.append(f"output has {what}")
    return not problems, "; ".join(problems), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpsm", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--fixtures", required=True, help="tests/fixtures (the valid files the bad ones are made from)")
    ap.add_argument("--work", required=True, help="folder for the generated inputs")
    ap.add_argument("--case", help="run only this case (ctest runs one per case)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    a = ap.parse_args()
    cases = read_table(a.table)
    if a.list:
        print("\n".join(c["name"] for c in cases))
        return 0
    if a.case:
        cases = [c for c in cases if c["name"] == a.case]
        if not cases:
            sys.exit(f"no case '{a.case}' in {a.table}")
    work = os.path.join(a.work, a.case or "all")
    fixtures = os.path.join(work, "fixtures")
    make_fixtures(a.fixtures, fixtures)
    failed = 0
    for c in cases:
        ok, why, out = run_case(c, os.path.abspath(a.gpsm), fixtures)
        status = "ok  " if ok else "FAIL"
        print(f"{status} {c['name']:<40} exit {c['code']}  gpsm {c['args']}")
        if not ok:
            failed += 1
            print(f"     {a.table}:{c['line']}: {why}")
            print("     output: " + "\n             ".join(out.strip().splitlines()[-8:]))
    print(f"{len(cases) - failed} of {len(cases)} bad-input case(s) passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
