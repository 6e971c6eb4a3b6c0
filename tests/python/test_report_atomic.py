#!/usr/bin/env python3
"""report.py writes each plot and index through write_atomic (temporary file + fsync + rename): a
write that fails part way leaves the previous file whole and no temporary behind.

Plain script, no pytest:  python3 tests/python/test_report_atomic.py tools/gpsm/report.py
"""

import importlib.util
import os
import stat
import sys
import tempfile

from checks import check, finish


def load(report):
    spec = importlib.util.spec_from_file_location("gpsm_report", report)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    rep = load(sys.argv[1])
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "index.md")
        rep.write_atomic(p, lambda f: f.write(b"first\n"))
        check(open(p, "rb").read() == b"first\n", "a new file is written")
        os.chmod(p, 0o640)
        rep.write_atomic(p, lambda f: f.write(b"second\n"))
        check(open(p, "rb").read() == b"second\n", "a replaced file has the new content")
        check(stat.S_IMODE(os.stat(p).st_mode) == 0o640, "a replaced file keeps its mode")

        def fails_part_way(f):
            f.write(b"x" * (1 << 20))  # part of the new content reaches the temporary file
            raise OSError(28, "No space left on device")

        try:
            rep.write_atomic(p, fails_part_way)
            check(False, "a failed write raises")
        except OSError as e:
            check(e.errno == 28, "a failed write raises the writer's error")
        check(open(p, "rb").read() == b"second\n", "the old file survives a failed write")
        check(sorted(os.listdir(d)) == ["index.md"], "no temporary is left behind")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
