"""The plain-script harness of tests/python (no pytest): check() prints a line per check,
finish() prints "N passed, N failed" (the line CI reads) and gives the exit status."""

passed = 0
failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("PASS  %s" % what)
    else:
        failed += 1
        print("FAIL  %s%s" % (what, ("\n      " + detail.replace("\n", "\n      ")) if detail else ""))
    return cond


def finish():
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
