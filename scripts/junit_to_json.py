#!/usr/bin/env python3
"""Turns ctest's JUnit XML into the documented GPU-test results JSON (schema gpsm.test_run v1)."""
import argparse, datetime, json, subprocess, sys
import xml.etree.ElementTree as ET

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("xml")
ap.add_argument("--kind", required=True)
ap.add_argument("--commit", required=True)
ap.add_argument("--command", required=True)
a = ap.parse_args()
root = ET.parse(a.xml).getroot()
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
def gpus():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,pci.bus_id", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()
    except Exception as e:  # no driver: say so in the file
        return [f"unavailable: {e}"]
count = {s: sum(t["status"] == s for t in tests) for s in ("passed", "failed", "skipped")}
json.dump({"schema": "gpsm.test_run", "schema_version": 1,
           "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "device_kind": a.kind, "commit": a.commit, "command": a.command, "gpus": gpus(),
           "counts": count, "tests": tests}, sys.stdout, indent=1)
print()
sys.exit(1 if count["failed"] else 0)
