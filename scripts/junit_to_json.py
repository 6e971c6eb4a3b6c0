#!/usr/bin/env python3
"""Turns ctest's results into the GPU-test results JSON (schema gpsm.test_run v1, docs/results-schema.md).

Input: ctest's JUnit XML (--output-junit), or with --log ctest's text output (`ctest --output-on-failure`).
The log is what is left when ctest is killed (a step limit) before it writes the XML: every test it
finished is read from its result line, and a test it had started and not finished is "unfinished".
--gpus TEXT records the GPUs when converting off the GPU machine (default: nvidia-smi here).
"""
import argparse, datetime, json, re, subprocess, sys
import xml.etree.ElementTree as ET

# "  7/455 Test   #7: cpu.Name ......   Passed    0.01 sec"; else "***Failed", "***Skipped", "***Timeout",
# "***Not Run (Disabled)", "***Exception: SegFault", ... A failed PASS_REGULAR_EXPRESSION puts the
# regex after "***Failed" and the time on the next line: the time is then 0.
RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#(\d+): (\S+) \.*\s*(?:\*\*\*)?(\S.*?)(?:\s+([0-9.]+) sec)?\s*$")
START = re.compile(r"^\s*Start\s+(\d+): (\S+)\s*$")


def from_xml(path):
    root = ET.parse(path).getroot()
    tests = []
    for tc in root.iter("testcase"):
        status = tc.get("status", "run")
        if tc.find("failure") is not None:
            status = "failed"
        elif tc.find("skipped") is not None or status in ("notrun", "disabled"):
            status = "skipped"
        else:
            status = "passed"
        tests.append({"name": tc.get("name"), "status": status, "time_s": float(tc.get("time", 0) or 0)})
    return tests


def from_log(text):
    started, done = {}, {}
    for line in text.splitlines():
        m = START.match(line)
        if m:
            started[int(m.group(1))] = m.group(2)
            continue
        m = RESULT.match(line)
        if m:
            num, name, word = int(m.group(1)), m.group(2), m.group(3).lower()
            if word == "passed":
                status = "passed"
            elif word.startswith(("skipped", "not run", "disabled")):
                status = "skipped"
            else:  # failed, timeout, exception, subprocess aborted, ...
                status = "failed"
            done[num] = {"name": name, "status": status, "time_s": float(m.group(4) or 0)}
    tests = list(done.values())
    tests += [{"name": started[n], "status": "unfinished", "time_s": 0.0} for n in sorted(started) if n not in done]
    return tests


def gpus():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,pci.bus_id", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()
    except Exception as e:  # no driver: say so in the file
        return [f"unavailable: {e}"]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="ctest's JUnit XML, or its text output with --log")
    ap.add_argument("--log", action="store_true", help="the input is ctest's text output")
    ap.add_argument("--kind", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--gpus", action="append", help="a GPU's description (repeat per GPU); default: nvidia-smi")
    a = ap.parse_args(argv)
    try:
        if a.log:
            with open(a.input, encoding="utf-8", errors="replace") as f:
                tests = from_log(f.read())
        else:
            tests = from_xml(a.input)
    except (OSError, ET.ParseError) as e:
        print(f"junit_to_json: {a.input}: {e}", file=sys.stderr)
        return 2
    if not tests:
        print(f"junit_to_json: {a.input}: no test results in it", file=sys.stderr)
        return 2
    count = {s: sum(t["status"] == s for t in tests) for s in ("passed", "failed", "skipped", "unfinished")}
    json.dump({"schema": "gpsm.test_run", "schema_version": 1,
               "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "device_kind": a.kind, "commit": a.commit, "command": a.command, "gpus": a.gpus or gpus(),
               "counts": count, "tests": tests}, sys.stdout, indent=1)
    print()
    return 1 if count["failed"] or count["unfinished"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
