#!/usr/bin/env python3
"""Checks that docs/architecture.md names only files and tests that exist.

  check_architecture_doc.py [--root DIR] [--doc docs/architecture.md]

Every `code span` that looks like a repository path (it has a '/' and no spaces, or it is a
file name with an extension) must exist, relative to the repository root; every markdown link
to a local file must resolve from the doc's folder; every `Suite.Name` must be a GoogleTest
TEST/TEST_F/TEST_P in tests/cpu or tests/gpu; every ctest name (cli.*, py.*, layers.*,
example.*, package.*) must be registered in tests/CMakeLists.txt. Prints what is missing and
exits 1, or says how many names it checked. Registered with ctest as layers.architecture_doc.
"""
import argparse
import os
import re
import sys

CODE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
GTEST = re.compile(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)")
SUITE_NAME = re.compile(r"^[A-Z]\w*\.[A-Z]\w*$")
CTEST_NAME = re.compile(r"^(cli|py|layers|example|package)\.[\w]+$")
PATH_LIKE = re.compile(r"^[\w.\-/]+$")
EXTENSIONS = (".md", ".py", ".sh", ".cmake", ".in", ".txt", ".hpp", ".cuh", ".cpp", ".cu", ".h", ".json")


def gtests(root):
    found = set()
    for sub in ("tests/cpu", "tests/gpu"):
        for d, _, files in os.walk(os.path.join(root, sub)):
            for f in files:
                if f.endswith((".cpp", ".cu")):
                    with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                        found.update(f"{s}.{n}" for s, n in GTEST.findall(fh.read()))
    return found


def ctests(root):
    with open(os.path.join(root, "tests", "CMakeLists.txt"), encoding="utf-8") as fh:
        text = fh.read()
    names = set(re.findall(r"add_test\(\s*NAME\s+([\w.]+)", text))
    # foreach(ex a b c) ... add_test(NAME example.${ex} ...): expand the loop's list
    for var, items, body in re.findall(r"foreach\((\w+)\s+([^)]*)\)(.*?)endforeach\(\)", text, re.S):
        for prefix in re.findall(r"add_test\(\s*NAME\s+([\w.]*)\$\{" + var + r"\}", body):
            names.update(prefix + item for item in items.split())
    return names


def check(root, doc):
    with open(os.path.join(root, doc), encoding="utf-8") as fh:
        text = re.sub(r"^```.*?^```", "", fh.read(), flags=re.S | re.M)  # diagrams are not names
    tests, registered = gtests(root), ctests(root)
    missing, checked = [], 0
    for span in CODE.findall(text):
        span = span.strip()
        if SUITE_NAME.match(span) and not span.endswith(EXTENSIONS):
            checked += 1
            if span not in tests:
                missing.append(f"test {span}: no TEST(...) of that suite and name in tests/cpu or tests/gpu")
        elif CTEST_NAME.match(span) and "*" not in span:
            checked += 1
            if span not in registered:
                missing.append(f"ctest {span}: not registered in tests/CMakeLists.txt")
        elif PATH_LIKE.match(span) and ("/" in span or span.endswith(EXTENSIONS)) and not span.startswith("gpsm/"):
            checked += 1
            if not os.path.exists(os.path.join(root, span)):
                missing.append(f"path {span}: does not exist")
    base = os.path.dirname(os.path.join(root, doc))
    for target in LINK.findall(text):
        if "://" in target:
            continue
        checked += 1
        if not os.path.exists(os.path.normpath(os.path.join(base, target))):
            missing.append(f"link {target}: does not resolve from {os.path.dirname(doc) or '.'}/")
    return missing, checked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--doc", default="docs/architecture.md")
    a = ap.parse_args()
    missing, checked = check(os.path.normpath(a.root), a.doc)
    for m in missing:
        print(f"{a.doc}: {m}")
    if missing:
        print(f"check_architecture_doc: {len(missing)} of {checked} names do not exist", file=sys.stderr)
        return 1
    print(f"check_architecture_doc: all {checked} paths, links and tests exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
