#!/usr/bin/env python3
"""Tests of scripts/junit_to_json.py: ctest's JUnit XML and its text log (a killed run) to gpsm.test_run v1.

Plain script, no pytest:  python3 tests/python/test_junit_to_json.py scripts/junit_to_json.py
Prints one line per check, then "N passed, N failed"; exits nonzero on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, finish


# ctest's text output as a step limit leaves it: test 5 started and never finished
LOG = """Test project /root/build
      Start  1: cpu.A.Passes
 1/5 Test  #1: cpu.A.Passes ..............................   Passed    0.01 sec
      Start  2: gpu.B.NeedsFourGpus
 2/5 Test  #2: gpu.B.NeedsFourGpus .......................***Skipped   0.31 sec
      Start  3: gpu.C.Breaks
 3/5 Test  #3: gpu.C.Breaks ..............................***Failed    1.50 sec
Some output of the failing test
      Start  4: gpu.D.Hangs
 4/5 Test  #4: gpu.D.Hangs ...............................***Timeout 600.02 sec
      Start  6: cli.E.PrintsIt
 5/6 Test  #6: cli.E.PrintsIt ............................***Failed  Required regular expression not found. Regex=[hello
]  0.01 sec
      Start  5: package.consumer
"""

XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="3" failures="1" disabled="0" skipped="1">
 <testcase name="cpu.A.Passes" classname="cpu.A.Passes" time="0.01" status="run"/>
 <testcase name="gpu.B.NeedsFourGpus" classname="gpu.B.NeedsFourGpus" time="0.31" status="run"><skipped message="x"/></testcase>
 <testcase name="gpu.C.Breaks" classname="gpu.C.Breaks" time="1.5" status="fail"><failure message="x"/></testcase>
</testsuite>
"""


def run(script, path, *extra):
    p = subprocess.run([sys.executable, script, path, "--kind", "fixture", "--commit", "abc", "--command", "ctest",
                        "--gpus", "fixture GPU", *extra], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "tests.log")
        xml = os.path.join(d, "ctest.xml")
        empty = os.path.join(d, "empty.log")
        open(log, "w").write(LOG)
        open(xml, "w").write(XML)
        open(empty, "w").write("Test project /root/build\n")

        rc, doc, _ = run(script, log, "--log")
        check(doc is not None and doc["schema"] == "gpsm.test_run" and doc["schema_version"] == 1, "log: schema v1")
        st = {t["name"]: t["status"] for t in (doc or {}).get("tests", [])}
        check(st == {"cpu.A.Passes": "passed", "gpu.B.NeedsFourGpus": "skipped", "gpu.C.Breaks": "failed",
                     "gpu.D.Hangs": "failed", "cli.E.PrintsIt": "failed", "package.consumer": "unfinished"},
              "log: every test's status (a failed regex's time on the next line too)", str(st))
        check(doc is not None and doc["counts"] == {"passed": 1, "failed": 3, "skipped": 1, "unfinished": 1},
              "log: counts", str(doc and doc["counts"]))
        check(doc is not None and doc["gpus"] == ["fixture GPU"], "log: --gpus recorded")
        check(rc == 1, "log: a failure exits 1", str(rc))

        # only the unfinished test left: still not a pass
        open(log, "w").write("\n".join(LOG.splitlines()[:3]) + "\n      Start  5: package.consumer\n")
        rc, doc, _ = run(script, log, "--log")
        check(doc is not None and doc["counts"]["unfinished"] == 1 and rc == 1, "log: unfinished alone exits 1", str(rc))

        rc, doc, _ = run(script, xml)
        st = {t["name"]: t["status"] for t in (doc or {}).get("tests", [])}
        check(st == {"cpu.A.Passes": "passed", "gpu.B.NeedsFourGpus": "skipped", "gpu.C.Breaks": "failed"},
              "xml: every test's status", str(st))
        check(rc == 1, "xml: a failure exits 1", str(rc))

        rc, doc, err = run(script, empty, "--log")
        check(rc == 2 and "no test results" in err, "log without results: exit 2 naming the file", err)
        rc, doc, err = run(script, os.path.join(d, "missing.xml"))
        check(rc == 2 and "missing.xml" in err, "missing file: exit 2 naming it", err)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
