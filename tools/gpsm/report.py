#!/usr/bin/env python3
"""Render gpsm results files (schema "gpsm.results") as PNG plots and an index.md.

Run by `gpsm report FILE... [--out DIR]`, or directly:

    python3 report.py RESULTS.json [MORE.json ...] [--out DIR] [-t REGEX] [--list]

Only the Python standard library and matplotlib >= 3.3 (Agg backend) are used.
The file format is documented in docs/results-schema.md.
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile
import textwrap

SCHEMA = "gpsm.results"
CACHE_SCHEMA = "gpsm.proact_cache"
SUPPORTED_VERSIONS = (1,)

# x kinds whose values are byte counts: log2 axis, tick labels 4B, 1KiB, 1MiB, ...
BYTE_X = ("bytes", "bytes_per_line", "vector_bytes", "chunk_bytes", "structure_bytes")
# x kinds whose values are counts: linear axis when the range is small, log2 otherwise
COUNT_X = ("blocks",)
X_LABELS = {
    "bytes": "transfer size",
    "chunk_bytes": "chunk size",
    "bytes_per_line": "bytes written per line",
    "blocks": "thread blocks",
    "vector_bytes": "vector width (bytes per access)",
    "gpus": "GPUs",
    "remote_percent": "% of reads and writes to another GPU's memory",
    "bytes_done_percent": "% of the bytes moved (blocks counted when they end)",
    "structure_bytes": "size of the remotely read structure",
}
# a count axis stays linear while max/min is at most this
LINEAR_COUNT_RATIO = 16
# set when every file read is a gpsm sim file: each plot's title then says so
SIMULATED_TITLES = False

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NO_MATPLOTLIB = 3


class BadFile(Exception):
    """A results file that cannot be read; the message says what is wrong."""


def die(path, what):
    print("gpsm: report: %s: %s" % (path, what), file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


# The file(s) being read or drawn, named in the one-line message should anything unforeseen go
# wrong (see guarded_main): a user gets the file and the reason, never a traceback.
CURRENT = []


# ----------------------------------------------------------------------------------------------
# Loading and validation
# ----------------------------------------------------------------------------------------------

def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v):
    """A number that can be drawn (not null, NaN or infinite)."""
    return _is_num(v) and math.isfinite(v)


def _need(obj, key, kind, where):
    if not isinstance(obj, dict) or key not in obj:
        raise BadFile("%s: missing '%s'" % (where, key))
    v = obj[key]
    if kind == "str" and not isinstance(v, str):
        raise BadFile("%s.%s: expected a string, got %s" % (where, key, type(v).__name__))
    if kind == "list" and not isinstance(v, list):
        raise BadFile("%s.%s: expected an array, got %s" % (where, key, type(v).__name__))
    if kind == "dict" and not isinstance(v, dict):
        raise BadFile("%s.%s: expected an object, got %s" % (where, key, type(v).__name__))
    if kind == "num?" and not (v is None or _is_num(v)):
        raise BadFile("%s.%s: expected a number, got %s" % (where, key, type(v).__name__))
    return v


def validate(doc):
    """Checks what the report needs; raises BadFile. Unknown extra keys are allowed."""
    if not isinstance(doc, dict):
        raise BadFile("not a gpsm results file (top level is not a JSON object)")
    schema = doc.get("schema")
    if schema == CACHE_SCHEMA:  # rendered by the gpsm binary (one renderer: proact/cache_table.cpp)
        raise BadFile("a PROACT choice cache, not a results file: `gpsm report FILE` or "
                      "`gpsm proact --show-cache FILE` prints it as a table")
    if schema != SCHEMA:
        raise BadFile("not a gpsm results file (schema is %s, expected '%s')"
                      % ("missing" if schema is None else repr(schema), SCHEMA))
    ver = doc.get("schema_version")
    if not isinstance(ver, int) or isinstance(ver, bool):
        raise BadFile("schema_version is %s, expected an integer"
                      % ("missing" if ver is None else repr(ver)))
    if ver not in SUPPORTED_VERSIONS:
        raise BadFile("unsupported schema_version %d (this report.py reads version %s)"
                      % (ver, ", ".join(str(v) for v in SUPPORTED_VERSIONS)))
    tests = _need(doc, "tests", "list", "results")
    for i, t in enumerate(tests):
        where = "tests[%d]" % i
        if not isinstance(t, dict):
            raise BadFile("%s: expected an object" % where)
        name = _need(t, "name", "str", where)
        where = "tests[%d] (%s)" % (i, name)
        _need(t, "unit", "str", where)
        status = _need(t, "status", "str", where)
        if status not in ("ok", "waived", "failed"):
            raise BadFile("%s.status: unknown status %r (expected ok, waived or failed)" % (where, status))
        if "x" in t and not isinstance(t["x"], str):
            raise BadFile("%s.x: expected a string" % where)
        for key in ("description", "group", "reason"):
            if key in t and not isinstance(t[key], str):
                raise BadFile("%s.%s: expected a string" % (where, key))
        series = t.get("series", [])
        if not isinstance(series, list):
            raise BadFile("%s.series: expected an array" % where)
        if status == "ok" and "series" not in t:
            raise BadFile("%s: missing 'series'" % where)
        for j, s in enumerate(series):
            sw = "%s.series[%d]" % (where, j)
            _need(s, "label", "str", sw)
            params = s.get("params", {})
            if not isinstance(params, dict):
                raise BadFile("%s.params: expected an object" % sw)
            for pts_i, p in enumerate(_need(s, "points", "list", sw)):
                pw = "%s.points[%d]" % (sw, pts_i)
                if not isinstance(p, dict):
                    raise BadFile("%s: expected an object" % pw)
                for key in ("x", "median"):
                    _need(p, key, "num?", pw)
                for key in ("min", "max", "bytes"):
                    if key in p:
                        _need(p, key, "num?", pw)


def load(path):
    """Returns the parsed, validated results document; raises BadFile."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise BadFile("no such file")
    except IsADirectoryError:
        raise BadFile("is a directory, not a results file")
    except OSError as e:
        raise BadFile("cannot read (%s)" % (e.strerror or e))
    if not raw.strip():
        raise BadFile("empty file, not JSON")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadFile("not JSON (not UTF-8 text)")
    except RecursionError:
        raise BadFile("not a gpsm results file (JSON nested too deeply)")
    except ValueError as e:
        raise BadFile("not JSON (%s)" % e)
    validate(doc)
    return doc


# ----------------------------------------------------------------------------------------------
# Run bookkeeping
# ----------------------------------------------------------------------------------------------

class Run:
    """One results file."""

    def __init__(self, path, doc):
        self.path = path
        self.doc = doc
        self.stem = os.path.splitext(os.path.basename(path))[0]
        # gpsm sim files say "simulated": true (tool "sim"); they are drawn as bench files, every
        # label and note marked, so a simulated curve is never read as a measured one
        self.simulated = doc.get("simulated") is True or doc.get("tool") == "sim"
        kind = doc.get("device_kind")
        self.kind = kind if isinstance(kind, str) else ""
        if self.simulated:
            sysname = (doc.get("system") or {}).get("name") if isinstance(doc.get("system"), dict) else None
            self.kind = "simulated %s" % (self.kind or (sysname if isinstance(sysname, str) else "") or "run")
        self.prefix = self.kind or self.stem  # made unique across runs by assign_prefixes
        self.tests = [t for t in doc["tests"]]

    def gpu_names(self):
        system = self.doc.get("system")
        if not isinstance(system, dict):
            return ""
        gpus = system.get("gpus") or []
        if _is_num(gpus):  # gpsm sim: a GPU count and one simulated GPU model under "gpu"
            gpu = system.get("gpu")
            name = gpu.get("name") if isinstance(gpu, dict) else None
            return ("%d x %s" % (gpus, name)) if isinstance(name, str) and name else "%d GPUs" % gpus
        if not isinstance(gpus, list):
            return ""
        names = []
        for g in gpus:
            n = g.get("name") if isinstance(g, dict) else None
            if isinstance(n, str) and n:
                names.append(n)
        if not names:
            return ""
        uniq = sorted(set(names))
        if len(uniq) == 1:
            return "%d x %s" % (len(names), uniq[0])
        return ", ".join(names)

    def commit(self):
        g = self.doc.get("gpsm")
        g = g if isinstance(g, dict) else {}
        v, c = g.get("version"), g.get("commit")
        v = v if isinstance(v, str) else None
        c = c if isinstance(c, str) else None
        if v and c:
            return "gpsm %s (%s)" % (v, c)
        return "gpsm %s" % (v or c) if (v or c) else ""

    def date(self):
        return str(self.doc.get("created") or "")

    def note(self):
        """One-line description of the run for figure notes."""
        parts = [self.prefix or self.kind or self.stem, self.gpu_names(), self.commit(), self.date()]
        if self.simulated:
            parts.insert(0, "SIMULATED (gpsm sim, not measured)")
        return " | ".join(p for p in parts if p)


def assign_prefixes(runs):
    """Series-label prefixes that tell runs apart: device_kind or file stem, made unique."""
    if len(runs) < 2:
        for r in runs:
            r.prefix = ""
        return
    base = [r.kind or r.stem for r in runs]
    for r, b in zip(runs, base):
        r.prefix = b if base.count(b) == 1 else ("%s/%s" % (r.kind, r.stem) if r.kind else r.stem)
    names = [r.prefix for r in runs]
    seen = {}
    for r, name in zip(runs, names):
        if names.count(name) > 1:  # same kind and stem (files in different directories)
            seen[name] = seen.get(name, 0) + 1
            r.prefix = "%s#%d" % (name, seen[name])


def plot_kind(test):
    """How an ok test is drawn: 'matrix', 'latency', 'bars' or 'line'."""
    x = test.get("x", "none") or "none"
    series = test.get("series", [])
    if (series and x != "none"
            and all(len(s["points"]) == 1 for s in series)
            and all("src" in s.get("params", {}) and "dst" in s.get("params", {}) for s in series)):
        keys = [tuple(sorted((k, str(v)) for k, v in s["params"].items())) for s in series]
        if len(set(keys)) == len(keys):  # each cell once
            return "matrix"
    if x == "none":
        return "latency" if test["unit"] == "us" else "bars"
    return "line"


# ----------------------------------------------------------------------------------------------
# Formatting helpers
# ----------------------------------------------------------------------------------------------

def fmt_bytes(v):
    """4B, 1KiB, 1.5MiB, 1GiB."""
    if v is None or not math.isfinite(v):
        return str(v)
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    u = 0
    v = float(v)
    while abs(v) >= 1024 and u < len(units) - 1:
        v /= 1024.0
        u += 1
    if abs(v - round(v)) < 1e-9:
        return "%d%s" % (int(round(v)), units[u])
    return "%s%s" % (("%.3g" % v), units[u])


def fmt_x(xkind, v):
    if xkind in BYTE_X:
        return fmt_bytes(v)
    if v is None or not math.isfinite(v):
        return str(v)
    if float(v) == int(v):
        return "%d" % int(v)
    return "%.3g" % v


def fmt_val(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def safe_name(name):
    s = re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("._")
    return s or "test"


def series_label(run, s):
    return ("%s: %s" % (run.prefix, s["label"])) if run.prefix else s["label"]


def natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def title_of(name, description, width=95):
    t = name + (" \u2014 " + description if description else "")
    if SIMULATED_TITLES:
        t = "[simulated] " + t
    return "\n".join(textwrap.wrap(t, width)) or name


def headline(test, s):
    """(text, value) of a series' headline: peak median for GB/s, lowest median for us."""
    pts = [p for p in s["points"] if _finite(p.get("median"))]
    if not pts:
        return "-", None
    unit = test["unit"]
    xkind = test.get("x", "none") or "none"
    if unit == "us":
        best = min(pts, key=lambda p: p["median"])
        what = "min"
    else:
        best = max(pts, key=lambda p: p["median"])
        what = "peak"
    v = best["median"]
    text = "%s %s" % ("%.1f" % v if abs(v) >= 100 else "%.2f" % v if abs(v) >= 1 else "%.3g" % v, unit)
    if xkind != "none":
        at = fmt_x(xkind, best.get("x"))
        if xkind not in BYTE_X:
            at += " " + xkind.replace("_", " ")
        text += " (%s @ %s)" % (what, at)
    return text, best["median"]


# ----------------------------------------------------------------------------------------------
# Plotting
# ----------------------------------------------------------------------------------------------

def import_matplotlib():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError as e:
        print("gpsm: report: matplotlib is required to draw plots (%s); "
              "install it, e.g. `python3 -m pip install matplotlib`" % e, file=sys.stderr)
        sys.exit(EXIT_NO_MATPLOTLIB)
    return plt, ticker


LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def write_atomic(path, write):
    """Writes `path` whole or not at all: `write(f)` fills a temporary file (binary) in the same
    folder, which is flushed, fsync'ed and renamed over `path` (os.replace, atomic on POSIX). On
    any failure the temporary is removed and an earlier file at `path` is left as it was, so a
    full disk or an interrupted run never leaves a truncated plot or index."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777  # a replaced file keeps its mode
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp's 0600 would differ from a plain open()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def finish(plt, fig, ax, runs, out_path):
    """Adds the run note (device kind, GPUs, commit, date; one line per run) under the
    x-axis label of `ax`, saves the figure as PNG and closes it."""
    lines = [r.note() for r in runs]
    ax.annotate("\n".join(lines), xy=(0, 0), xycoords=("axes fraction", ax.xaxis.label),
                xytext=(0, -8), textcoords="offset points", ha="left", va="top",
                fontsize=7, color="0.35", annotation_clip=False)
    try:
        write_atomic(out_path, lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight",
                                                     pad_inches=0.15))
    finally:
        plt.close(fig)


def get_cmap(name):
    import matplotlib
    try:
        return matplotlib.colormaps[name].copy()
    except AttributeError:  # matplotlib < 3.5
        import copy
        import matplotlib.cm
        return copy.copy(matplotlib.cm.get_cmap(name))


def colors_for(n):
    cmap = get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def setup_x_axis(ax, ticker, xkind, xs):
    xs = [x for x in xs if _finite(x) and x > 0]
    ax.set_xlabel(X_LABELS.get(xkind, xkind.replace("_", " ")))
    if not xs:
        return
    lo, hi = min(xs), max(xs)
    use_log = xkind in BYTE_X or (hi / lo > LINEAR_COUNT_RATIO)
    if use_log:
        ax.set_xscale("log", base=2)
        e_lo, e_hi = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
        span = max(1, e_hi - e_lo)
        step = 1
        while span / step > 12:
            step += 1
        ticks = [2.0 ** e for e in range(e_lo, e_hi + 1, step)]
        distinct = sorted(set(xs))
        if xkind not in BYTE_X and len(distinct) <= 12:
            # counts: label the measured values (e.g. 66, 132 blocks), skipping crowded ones
            ticks = []
            for v in distinct:
                if not ticks or v / ticks[-1] >= 1.3:
                    ticks.append(v)
                elif v == distinct[-1]:
                    ticks[-1] = v
        ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_x(xkind, v)))
        pad = 2 ** 0.25
        ax.set_xlim(lo / pad, hi * pad)
    else:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=all(float(x).is_integer() for x in xs)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_x(xkind, v)))
    if xkind in BYTE_X and hi / lo > 2 ** 14:
        for lbl in ax.get_xticklabels():
            lbl.set_rotation(30)
            lbl.set_ha("right")


def draw_line(plt, ticker, name, entries, runs, out_path):
    """entries: [(run, test)] with the same name, one per run that has it."""
    test0 = entries[0][1]
    xkind = test0.get("x", "none")
    units = sorted(set(t["unit"] for _r, t in entries))
    unit = units[0] if len(units) == 1 else " / ".join(units)
    # colours per series label, line styles per run
    labels = []
    for _r, t in entries:
        for s in t["series"]:
            if s["label"] not in labels:
                labels.append(s["label"])
    colors = dict(zip(labels, colors_for(len(labels))))
    multi = len(entries) > 1
    # legend: one entry per line for a single run; for several runs, series (colour) and
    # runs (line style, marker) separately, so that the legend stays short
    n_entries = (len(labels) + len(entries) + 1) if multi else len(labels)
    legend_cols = max(1, int(math.ceil(n_entries / 30.0)))
    per_col = int(math.ceil(n_entries / float(legend_cols)))
    fig, ax = plt.subplots(figsize=(9.5, max(5.2, 0.17 * per_col + 1.2)))
    all_x, all_y = [], []
    any_unverified = False
    for ri, (run, t) in enumerate(entries):
        style = LINESTYLES[ri % len(LINESTYLES)]
        for s in t["series"]:
            pts = sorted((p for p in s["points"] if _finite(p.get("x"))), key=lambda p: p["x"])
            if not any(_finite(p.get("median")) for p in pts):
                continue
            nan = float("nan")
            xs = [p["x"] for p in pts]
            # a point without a value (null median) leaves a gap in the line
            med = [p["median"] if _finite(p.get("median")) else nan for p in pts]
            lo = [p["min"] if _finite(p.get("min")) and _finite(p.get("median")) else m for p, m in zip(pts, med)]
            hi = [p["max"] if _finite(p.get("max")) and _finite(p.get("median")) else m for p, m in zip(pts, med)]
            c = colors[s["label"]]
            ax.fill_between(xs, lo, hi, color=c, alpha=0.18, linewidth=0)
            ax.plot(xs, med, linestyle=style, marker=MARKERS[ri % len(MARKERS)], markersize=4,
                    color=c, label=series_label(run, s))
            bad = [p for p in pts if p.get("verified") is False and _finite(p.get("median"))]
            if bad:
                any_unverified = True
                ax.plot([p["x"] for p in bad], [p["median"] for p in bad], linestyle="none",
                        marker="x", markersize=9, color="red", zorder=5)
            all_x += xs
            all_y += [y for y in lo + hi + med if not math.isnan(y)]
    setup_x_axis(ax, ticker, xkind, all_x)
    pos = [y for y in all_y if y > 0]
    if unit == "us" and pos and max(pos) / min(pos) > 1000:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0, top=(max(all_y) * 1.05) if all_y and max(all_y) > 0 else None)
    ax.set_ylabel(unit)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title_of(name, test0.get("description", "")), fontsize=11)
    if multi:
        from matplotlib.lines import Line2D
        handles = [Line2D([], [], color=colors[l], marker="o", markersize=4, label=l) for l in labels]
        handles.append(Line2D([], [], linestyle="none", label=" "))
        for ri, (run, _t) in enumerate(entries):
            handles.append(Line2D([], [], color="0.3", linestyle=LINESTYLES[ri % len(LINESTYLES)],
                                  marker=MARKERS[ri % len(MARKERS)], markersize=4, label=run.prefix))
    else:
        handles, _ = ax.get_legend_handles_labels()
    if any_unverified:
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], linestyle="none", marker="x", color="red", label="not verified"))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8,
                  frameon=False, ncol=legend_cols, title="median, band = min\u2013max", title_fontsize=8)
    finish(plt, fig, ax, runs, out_path)


def draw_matrix(plt, name, entries, runs, out_path):
    """Heatmap(s): src rows, dst columns, median annotated. One panel per run and per
    combination of the other params (e.g. direction)."""
    def rest_of(s):
        return tuple(sorted((k, str(v)) for k, v in s.get("params", {}).items() if k not in ("src", "dst")))

    # panels are split on the params (other than src/dst) that vary, over all runs
    all_rest = [dict(rest_of(s)) for _r, t in entries for s in t["series"]]
    varying = set(k for k in set().union(*[set(d) for d in all_rest])
                  if len(set(d.get(k) for d in all_rest)) > 1)
    panels = []  # (title, {(src, dst): point})
    for run, t in entries:
        groups = {}
        for s in t["series"]:
            key = tuple((k, v) for k, v in rest_of(s) if k in varying)
            groups.setdefault(key, []).append(s)
        for rest, ss in sorted(groups.items()):
            cells = {}
            for s in ss:
                p = s["params"]
                cells[(str(p["src"]), str(p["dst"]))] = s["points"][0]
            sub = ", ".join("%s=%s" % (k, v) for k, v in rest)
            ptitle = " ".join(x for x in [run.prefix, sub] if x)
            panels.append((ptitle, cells))
    nodes_src = sorted({k[0] for _t, c in panels for k in c}, key=natural_key)
    nodes_dst = sorted({k[1] for _t, c in panels for k in c}, key=natural_key)
    vals = [p["median"] for _t, c in panels for p in c.values() if _finite(p.get("median"))]
    # colour scale from 0 so that small differences look small
    vmin, vmax = (min(0.0, min(vals)), max(vals)) if vals else (0.0, 1.0)
    if vmin == vmax:
        vmax = vmin + 1.0
    unit = entries[0][1]["unit"]
    xkind = entries[0][1].get("x", "none")
    sizes = sorted({p.get("x") for _t, c in panels for p in c.values() if _finite(p.get("x"))})
    n = len(panels)
    cols = min(n, 3)
    rows = int(math.ceil(n / float(cols)))
    cell = max(0.55, min(1.0, 7.0 / max(len(nodes_dst), 1)))
    w = max(3.2, cell * len(nodes_dst) + 1.4)
    h = max(2.8, cell * len(nodes_src) + 1.0)
    at = ""
    if len(sizes) == 1:
        at = " (median at %s)" % fmt_x(xkind, sizes[0])
    elif sizes:
        at = " (median at %s\u2013%s)" % (fmt_x(xkind, sizes[0]), fmt_x(xkind, sizes[-1]))
    title = title_of(name, entries[0][1].get("description", "") + at, int(max(50, 12 * (w + 1.0) * cols)))
    fig_w, fig_h = (w + 1.0) * cols, h * rows + 0.9
    fig, axes = plt.subplots(rows, cols, figsize=(fig_w, fig_h), squeeze=False)
    top_margin = 0.3 * (title.count("\n") + 1) + (0.35 if any(t for t, _c in panels) else 0.1)
    fig.subplots_adjust(top=1.0 - top_margin / fig_h, wspace=0.6, hspace=0.5)
    cmap = get_cmap("viridis")
    cmap.set_bad("0.88")
    for i, (ptitle, cells) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        data = []
        for sname in nodes_src:
            row = []
            for dname in nodes_dst:
                p = cells.get((sname, dname))
                row.append(p["median"] if p is not None and _finite(p.get("median")) else float("nan"))
            data.append(row)
        im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, aspect="equal")
        fs = 9 if len(nodes_dst) <= 8 else 7
        for r, sname in enumerate(nodes_src):
            for c, dname in enumerate(nodes_dst):
                v = data[r][c]
                if math.isnan(v):
                    ax.text(c, r, "\u2013", ha="center", va="center", fontsize=fs, color="0.4")
                    continue
                rgba = cmap((v - vmin) / (vmax - vmin))
                lum = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2]
                ax.text(c, r, fmt_val(v), ha="center", va="center", fontsize=fs,
                        color="black" if lum > 0.5 else "white")
        ax.set_xticks(range(len(nodes_dst)))
        ax.set_xticklabels(nodes_dst, fontsize=8)
        ax.set_yticks(range(len(nodes_src)))
        ax.set_yticklabels(nodes_src, fontsize=8)
        ax.set_xlabel("destination")
        ax.set_ylabel("source")
        if ptitle:
            ax.set_title(ptitle, fontsize=9)
        # colour bar right of each panel (the panels share one scale)
        cax = ax.inset_axes([1.04, 0.0, 0.05, 1.0])
        cb = fig.colorbar(im, cax=cax)
        cb.set_label("%s (median)" % unit, fontsize=8)
        cb.ax.tick_params(labelsize=7)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(title, fontsize=11)
    finish(plt, fig, axes[rows - 1][0], runs, out_path)


def draw_bars(plt, title, rows, unit, groups, runs, out_path):
    """Horizontal bars, median with min/max whiskers, first row on top.
    rows: [(label, point, group)]; bars are coloured by group, and groups get a legend
    when there are several (runs when comparing files, else tests)."""
    n = len(rows)
    fig, ax = plt.subplots(figsize=(9.5, max(2.6, 0.34 * n + 1.6)))
    cols = dict(zip(groups, colors_for(max(len(groups), 1))))
    ys = list(range(n))[::-1]
    med = [p["median"] for _l, p, _g in rows]
    lo = [max(0.0, p["median"] - (p["min"] if _finite(p.get("min")) else p["median"])) for _l, p, _g in rows]
    hi = [max(0.0, (p["max"] if _finite(p.get("max")) else p["median"]) - p["median"]) for _l, p, _g in rows]
    ax.barh(ys, med, xerr=[lo, hi], color=[cols[g] for _l, _p, g in rows], alpha=0.85, height=0.7,
            capsize=3, error_kw={"elinewidth": 1, "ecolor": "0.2"})
    top = max((m + h for m, h in zip(med, hi)), default=1.0) or 1.0
    for y, m, h in zip(ys, med, hi):
        ax.text(m + h + top * 0.01, y, fmt_val(m), va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([l for l, _p, _g in rows], fontsize=8)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, top * 1.12)
    ax.set_xlabel("%s (bar: median; whiskers: min\u2013max)" % unit)
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=11)
    if len(groups) > 1:
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=cols[g], label=g) for g in groups],
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    finish(plt, fig, ax, runs, out_path)


def draw_bars_per_paradigm(plt, name, entries, runs, out_path, key, ylabel, title, every_label, bar_inches):
    """A group of bars per paradigm, one bar per GPU count (per run when comparing files), of the
    points' `key`, a line at 1. every_label: a group for every series, else only for series with a
    finite `key` somewhere."""
    counts, labels = [], []
    for _run, t in entries:
        for sr in t["series"]:
            if every_label and sr["label"] not in labels:
                labels.append(sr["label"])
            for pt in sr["points"]:
                if _finite(pt.get(key)):
                    if sr["label"] not in labels:
                        labels.append(sr["label"])
                    if pt["x"] not in counts:
                        counts.append(pt["x"])
    counts.sort()
    keys = [(run, g) for run, _t in entries for g in counts]
    fig, ax = plt.subplots(figsize=(max(7.5, bar_inches * len(labels) * max(1, len(keys)) + 3), 4.6))
    cols = colors_for(max(len(keys), 1))
    width = 0.8 / max(len(keys), 1)
    top = 1.0
    for k, (run, g) in enumerate(keys):
        t = next(t for r, t in entries if r is run)
        xs, ys = [], []
        for i, lbl in enumerate(labels):
            sr = next((x for x in t["series"] if x["label"] == lbl), None)
            pt = next((p for p in (sr["points"] if sr else []) if p["x"] == g and _finite(p.get(key))), None)
            if pt is None:
                continue
            xs.append(i - 0.4 + width * (k + 0.5))
            ys.append(pt[key])
            top = max(top, pt[key])
        tag = "%g GPU%s" % (g, "" if g == 1 else "s")
        if len(entries) > 1 and run.prefix:
            tag = "%s: %s" % (run.prefix, tag)
        ax.bar(xs, ys, width=width * 0.95, color=cols[k], label=tag)
        for x, y in zip(xs, ys):
            ax.text(x, y + top * 0.01, "%.2f" % y, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="0.3", lw=0.8, ls="--")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=9)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel(ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title_of(name + " " + title, entries[0][1].get("description", "")), fontsize=11)
    finish(plt, fig, ax, runs, out_path)


def draw_speedup(plt, name, entries, runs, out_path):
    """`gpsm bench`: speedup over the best single-GPU run (GPS paper Fig 8 style)."""
    draw_bars_per_paradigm(plt, name, entries, runs, out_path, "speedup", "speedup over the best 1-GPU run",
                           "speedup", True, 0.315)


# ----------------------------------------------------------------------------------------------
# CG across matrices (`gpsm bench --app cg`, e.g. --size table3.1): the CPU-free thesis' Fig 3.3
# (CPU-free over CPU-controlled speedup per matrix, with the geometric mean its Table 3.1 quotes)
# and Fig 3.4 (strong scaling: each paradigm's speedup over its own 1-GPU time). A matrix is one
# bench test; these figures span tests, so they are drawn once per report from every cg test.
# ----------------------------------------------------------------------------------------------

CG_PAIRS = (("std", "Standard", 1.54), ("pipe", "Pipelined", 1.63))  # the thesis' 8xA100 means


def _geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cg_points(cg_entries, field):
    """(matrix, paradigm, point) for every verified point of every cg test of every run whose
    `field` and GPU count are finite and positive, in file order."""
    for _run, t in cg_entries:
        problem = t.get("problem") if isinstance(t.get("problem"), dict) else {}
        mat = problem.get("label", t["name"])
        for sr in t.get("series", []):
            for pt in sr.get("points", []):
                if (pt.get("verified", True) is not False and _finite(pt.get(field)) and pt[field] > 0
                        and _finite(pt.get("x")) and pt["x"] > 0):
                    yield mat, sr["label"], pt


def cg_medians(cg_entries):
    """{matrix: {paradigm: {gpus: median}}} over every cg test of every run, verified points
    only (a later run's point replaces an earlier one's)."""
    out = {}
    for mat, par, pt in cg_points(cg_entries, "median"):
        out.setdefault(mat, {}).setdefault(par, {})[pt["x"]] = pt["median"]
    return out


def cg_free_over_ctrl(med):
    """{gpus: {variant: [(matrix, cpu_ctrl / cpu_free)]}} for every matrix and GPU count (> 1)
    where both paradigms of a pair ran."""
    out = {}
    for mat, by in med.items():
        for v, _name, _paper in CG_PAIRS:
            ctrl, free = by.get("cpu_ctrl_" + v, {}), by.get("cpu_free_" + v, {})
            for g in sorted(set(ctrl) & set(free)):
                if g > 1:
                    out.setdefault(g, {}).setdefault(v, []).append((mat, ctrl[g] / free[g]))
    return out


def draw_cg_free_over_ctrl(plt, g, ratios, runs, out_path):
    """Fig 3.3: per matrix, CPU-free over CPU-controlled for Standard and Pipelined at g GPUs, the
    geometric means last, the thesis' means as dashed lines."""
    mats = []
    for v, _n, _p in CG_PAIRS:
        for mat, _r in ratios.get(v, []):
            if mat not in mats:
                mats.append(mat)
    labels = mats + ["geometric mean"]
    fig, ax = plt.subplots(figsize=(max(7.5, 0.62 * len(labels) + 3), 4.8))
    cols = colors_for(2)
    top = 1.0
    for k, (v, name, paper) in enumerate(CG_PAIRS):
        vals = dict(ratios.get(v, []))
        if not vals:
            continue
        xs = [i - 0.2 + 0.4 * k for i, m in enumerate(mats) if m in vals] + [len(mats) - 0.2 + 0.4 * k]
        gm = _geomean(list(vals.values()))
        ys = [vals[m] for m in mats if m in vals] + [gm]
        top = max([top] + ys)
        ax.bar(xs, ys, width=0.38, color=cols[k], label="%s (geomean %.2fx over %d)" % (name, gm, len(vals)))
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.01 * top, "%.2f" % y, ha="center", va="bottom", fontsize=6.5)
        ax.axhline(paper, color=cols[k], lw=0.9, ls="--", label="thesis %s: %.2fx (8 A100)" % (name, paper))
    ax.axhline(1.0, color="0.3", lw=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=8, rotation=35, ha="right")
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel("CPU-controlled time / CPU-free time")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title("cg: CPU-free over CPU-controlled per matrix at %g GPU%s (CPU-free thesis Fig 3.3)"
                 % (g, "" if g == 1 else "s"), fontsize=11)
    finish(plt, fig, ax, runs, out_path)


def cg_scaling(med):
    """{paradigm: {gpus: [(matrix, time at 1 GPU / time at gpus)]}} for matrices with a 1-GPU point."""
    out = {}
    for mat, by in med.items():
        for lbl, pts in by.items():
            if 1 in pts and len(pts) > 1:
                for g, t in pts.items():
                    out.setdefault(lbl, {}).setdefault(g, []).append((mat, pts[1] / t))
    return out


def draw_cg_scaling(plt, ticker, scaling, runs, out_path):
    """Fig 3.4: each paradigm's geometric-mean speedup over its own 1-GPU time, per GPU count
    (thin lines: the matrices), with the ideal line."""
    fig, ax = plt.subplots(figsize=(8.5, 5.0))
    labels = sorted(scaling)
    cols = colors_for(max(len(labels), 1))
    counts = sorted(set(g for lbl in labels for g in scaling[lbl]))
    for k, lbl in enumerate(labels):
        by_g = scaling[lbl]
        per_mat = {}
        for g in sorted(by_g):
            for mat, x in by_g[g]:
                per_mat.setdefault(mat, []).append((g, x))
        for pts in per_mat.values():
            ax.plot([g for g, _x in pts], [x for _g, x in pts], color=cols[k], lw=0.6, alpha=0.35)
        gs = sorted(by_g)
        gm = [_geomean([x for _m, x in by_g[g]]) for g in gs]
        ax.plot(gs, gm, color=cols[k], lw=2, marker="o", label="%s (geomean of %d)" % (lbl, len(per_mat)))
    ax.plot(counts, counts, color="0.4", lw=0.9, ls="--", label="ideal")
    setup_x_axis(ax, ticker, "gpus", counts)
    ax.set_ylabel("speedup over the same paradigm on 1 GPU")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title("cg: strong scaling per paradigm (CPU-free thesis Fig 3.4)", fontsize=11)
    finish(plt, fig, ax, runs, out_path)


def hbm_peak(runs):
    """The HBM rate `gpsm scope` measured, GB/s, from any sm_stream_local test in the inputs: per
    GPU series the median at its largest footprint (beyond the L2), the largest of those; None
    when no input has one."""
    best = None
    for run in runs:
        for t in run.tests:
            if t.get("name") != "sm_stream_local" or t.get("status") != "ok":
                continue
            for sr in t.get("series", []):
                pts = [pt for pt in sr.get("points", []) if _finite(pt.get("x")) and _finite(pt.get("median"))]
                if pts:
                    top = max(pts, key=lambda pt: pt["x"])["median"]
                    best = top if best is None else max(best, top)
    return best


def cg_bandwidth(cg_entries):
    """{gpus: {matrix: {paradigm: achieved GB/s per GPU}}} from the verified points' mem_GBps
    (the app's compulsory bytes over the median time, all GPUs together)."""
    out = {}
    for mat, par, pt in cg_points(cg_entries, "mem_GBps"):
        out.setdefault(pt["x"], {}).setdefault(mat, {})[par] = pt["mem_GBps"] / pt["x"]
    return out


def draw_cg_bandwidth(plt, g, by_matrix, peak, runs, out_path):
    """Achieved memory bandwidth per GPU, per matrix and paradigm, against the HBM rate."""
    mats = list(by_matrix)
    pars = sorted({p for m in mats for p in by_matrix[m]})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 + 0.35 * len(mats) * len(pars)), 4.2))
    width = 0.8 / max(1, len(pars))
    top = max([v for m in mats for v in by_matrix[m].values()] + [peak or 0])
    for k, par in enumerate(pars):
        xs = [i + (k - (len(pars) - 1) / 2) * width for i, m in enumerate(mats) if par in by_matrix[m]]
        ys = [by_matrix[m][par] for m in mats if par in by_matrix[m]]
        ax.bar(xs, ys, width=width * 0.95, label=par)
        if peak:
            for x, y in zip(xs, ys):
                ax.text(x, y + top * 0.01, "%.0f%%" % (100.0 * y / peak), ha="center", va="bottom", fontsize=6)
    if peak:
        ax.axhline(peak, color="0.3", lw=0.9, ls="--")
        ax.text(len(mats) - 0.5, peak, " HBM (gpsm scope) %.0f GB/s" % peak, va="bottom", ha="right", fontsize=8)
    ax.set_xticks(range(len(mats)))
    ax.set_xticklabels(mats, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, top * 1.15)
    ax.set_ylabel("achieved GB/s per GPU (compulsory bytes / time)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title("CG memory bandwidth at %g GPU%s%s" % (g, "" if g == 1 else "s",
                 "" if peak else " (no gpsm scope sm_stream_local among the inputs: no HBM line)"), fontsize=10)
    finish(plt, fig, ax, runs, out_path)


def draw_cg(plt, ticker, cg_entries, out_file, out, peak=None):
    """The cross-matrix cg figures: [(png, description)], and prints each GPU count's means and
    the bandwidth each run achieved against the HBM rate (`peak`, GB/s, when known)."""
    runs = []
    for r, _t in cg_entries:
        if r not in runs:
            runs.append(r)
    med = cg_medians(cg_entries)
    produced = []
    for g, ratios in sorted(cg_free_over_ctrl(med).items()):
        cells = ["%s %.2fx over %d" % (name, _geomean([x for _m, x in ratios[v]]), len(ratios[v]))
                 for v, name, _p in CG_PAIRS if ratios.get(v)]
        print("cg: CPU-free over CPU-controlled at %g GPUs (geometric mean): %s" % (g, ", ".join(cells)))
        fname = out_file("cg_free_over_ctrl_%dgpu" % int(g))
        draw_cg_free_over_ctrl(plt, g, ratios, runs, os.path.join(out, fname))
        produced.append((fname, "CPU-free over CPU-controlled per matrix at %g GPUs (thesis Fig 3.3)" % g))
    scaling = cg_scaling(med)
    if scaling:
        fname = out_file("cg_strong_scaling")
        draw_cg_scaling(plt, ticker, scaling, runs, os.path.join(out, fname))
        produced.append((fname, "strong scaling per paradigm over its 1-GPU time (thesis Fig 3.4)"))
    for g, by_matrix in sorted(cg_bandwidth(cg_entries).items()):
        best_m, best_p = max(((m, p) for m in by_matrix for p in by_matrix[m]), key=lambda mp: by_matrix[mp[0]][mp[1]])
        bw = by_matrix[best_m][best_p]
        print("cg: memory bandwidth per GPU at %g GPUs: best %.0f GB/s (%s, %s)%s"
              % (g, bw, best_p, best_m, " = %.0f%% of the %.0f GB/s gpsm scope measured" % (100.0 * bw / peak, peak)
                 if peak else "; pass a gpsm scope results file with sm_stream_local for the HBM rate"))
        fname = out_file("cg_bandwidth_%dgpu" % int(g))
        draw_cg_bandwidth(plt, g, by_matrix, peak, runs, os.path.join(out, fname))
        produced.append((fname, "memory bandwidth per GPU against the HBM rate at %g GPUs (the roofline CG is bound by)" % g))
    return produced


def has_field(entries, key):
    return any(key in pt for _r, t in entries for sr in t["series"] for pt in sr["points"])


def draw_link_bytes(plt, name, entries, runs, out_path):
    """Graph apps: link bytes per iteration normalized to memcpy's at the same GPU count (GPS
    Fig 10)."""
    draw_bars_per_paradigm(plt, name, entries, runs, out_path, "link_bytes_vs_memcpy",
                           "link bytes per iteration / memcpy's", "link bytes vs memcpy", False, 0.3)


def draw_subscribers(plt, name, entries, runs, out_path):
    """Graph apps, GPS paradigms: the fraction of pages with 1, 2, ... subscribers (GPS paper Fig 9),
    one stacked bar per (run, paradigm, GPU count)."""
    bars = []  # (label, fractions)
    for run, t in entries:
        for sr in t["series"]:
            for pt in sr["points"]:
                h = pt.get("subscriber_pages")
                if not isinstance(h, list) or not h or not all(_is_num(v) for v in h) or sum(h) <= 0:
                    continue
                lbl = "%s %g GPU%s" % (sr["label"], pt["x"], "" if pt["x"] == 1 else "s")
                if len(entries) > 1 and run.prefix:
                    lbl = "%s: %s" % (run.prefix, lbl)
                bars.append((lbl, [v / float(sum(h)) for v in h]))
    most = max(len(f) for _l, f in bars)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.7 * len(bars) + 3), 4.6))
    cols = colors_for(most)
    bottom = [0.0] * len(bars)
    for k in range(most):
        ys = [f[k] if k < len(f) else 0.0 for _l, f in bars]
        ax.bar(range(len(bars)), ys, bottom=bottom, color=cols[k], width=0.7,
               label="%d subscriber%s" % (k + 1, "" if k == 0 else "s"))
        bottom = [b + y for b, y in zip(bottom, ys)]
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([l for l, _f in bars], fontsize=8, rotation=30, ha="right")
    ax.set_ylim(0, 1.0)
    ax.set_ylabel("fraction of pages")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title_of(name + " subscribers per page", entries[0][1].get("description", "")), fontsize=11)
    finish(plt, fig, ax, runs, out_path)


# ----------------------------------------------------------------------------------------------
# gpsm proact: PROACT dissertation Fig 2.6 (speedup over memcpy vs chunk size), Fig 2.8 (compute slowdown
# from tracking), Fig 2.9 (fraction of the transfer time overlapped)
# ----------------------------------------------------------------------------------------------

def _proact_points(t, key):
    """{series label: [(chunk bytes, value)]} of a proact_sweep / proact_tracking test."""
    out = {}
    for sr in t.get("series", []):
        pts = sorted((p["x"], p[key]) for p in sr["points"] if _finite(p.get(key)) and _finite(p.get("x")))
        if pts:
            out[sr["label"]] = pts
    return out


def _flat_value(run_tests, label, key):
    """A value of the one-point series `label` of proact_baselines (e.g. inline's speedup)."""
    for t in run_tests:
        if t["name"] != "proact_baselines":
            continue
        for sr in t.get("series", []):
            if sr["label"] == label and sr["points"] and _finite(sr["points"][0].get(key)):
                return sr["points"][0][key]
    return None


def proact_regions(points, plateau=0.9):
    """Fig 2.6's regions from one curve [(chunk, speedup)]: the chunks within `plateau` of the
    peak are bandwidth-bound; smaller ones initiation-bound, larger ones tail-bound. Returns
    (lo, hi) chunk bounds of the bandwidth-bound region, or None for fewer than 2 points."""
    if len(points) < 2:
        return None
    peak = max(v for _x, v in points)
    near = [x for x, v in points if v >= plateau * peak]
    return (min(near), max(near))


def draw_proact_curves(plt, ticker, title, ylabel, per_run, runs, out_path, hline=None, flat=None,
                       regions=False, percent=False):
    """One line per (run, series) over chunk size (log2 axis). flat: {label: value} drawn as
    horizontal dashed lines (agents without chunks)."""
    fig, ax = plt.subplots(figsize=(8.5, 4.8))
    labels = [(run, lbl) for run, pts in per_run for lbl in pts]
    cols = colors_for(max(len(labels) + len(flat or {}), 1))
    xs_all = []
    best = None
    for k, (run, lbl) in enumerate(labels):
        pts = next(p for r, p in per_run if r is run)[lbl]
        xs = [x for x, _v in pts]
        ys = [v * (100 if percent else 1) for _x, v in pts]
        xs_all += xs
        name = ("%s: %s" % (run.prefix, lbl)) if run.prefix else lbl
        ax.plot(xs, ys, marker="o", ms=3.5, lw=1.4, color=cols[k], label=name)
        if best is None or max(ys) > best[0]:
            best = (max(ys), pts, name)
    for j, (lbl, v) in enumerate((flat or {}).items()):
        ax.axhline(v * (100 if percent else 1), color=cols[len(labels) + j], lw=1.0, ls=":", label=lbl)
    if hline is not None:
        ax.axhline(hline, color="0.3", lw=0.8, ls="--", label="memcpy" if regions else None)
    if regions and best is not None:
        reg = proact_regions(best[1])
        if reg is not None and xs_all:
            lo, hi = reg
            xmin, xmax = min(xs_all), max(xs_all)
            ax.axvspan(lo / 1.4, hi * 1.4, color="0.85", alpha=0.5, lw=0)
            ymax = ax.get_ylim()[1]
            if lo > xmin:
                ax.text((xmin * lo / 1.4) ** 0.5, ymax * 0.97, "initiation-\nbound", ha="center", va="top", fontsize=8)
            ax.text((lo * hi) ** 0.5, ymax * 0.97, "bandwidth-\nbound", ha="center", va="top", fontsize=8)
            if hi < xmax:
                ax.text((hi * 1.4 * xmax) ** 0.5, ymax * 0.97, "tail-\nbound", ha="center", va="top", fontsize=8)
            ax.annotate("shaded: within 90%% of the peak of %s" % best[2], xy=(1.0, 0.0), xycoords="axes fraction",
                        xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom", fontsize=7, color="0.35")
    if xs_all:
        setup_x_axis(ax, ticker, "chunk_bytes", sorted(set(xs_all)))
    ax.set_xlabel("chunk size")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title(title, fontsize=11)
    finish(plt, fig, ax, runs, out_path)


def draw_proact(plt, ticker, name, entries, out_file, out):
    """The proact figures of one test; returns [(png name, description)]."""
    made = []
    runs = [r for r, _t in entries]
    if name == "proact_sweep":
        for key, fig, ylabel, hline, extra in (
                ("speedup_vs_memcpy", "fig2.6_speedup",
                 "speedup over memcpy (same run)", 1.0, "Fig 2.6: speedup over memcpy vs chunk size per agent"),
                ("overlap_fraction", "fig2.9_overlap",
                 "transfer time overlapped (%)", None,
                 "Fig 2.9: fraction of the transfer time overlapped, 1 - (total - compute) / copies alone")):
            per_run = [(run, _proact_points(t, key)) for run, t in entries]
            if not any(p for _r, p in per_run):
                continue
            flat = {}
            for run, _t in entries:
                v = _flat_value(run.tests, "inline", key)
                if v is not None:
                    flat[("%s: inline" % run.prefix) if run.prefix else "inline"] = v
            fname = out_file(name + "_" + fig)
            draw_proact_curves(plt, ticker, extra, ylabel, per_run, runs, os.path.join(out, fname), hline=hline,
                               flat=flat, regions=(key == "speedup_vs_memcpy"), percent=(key == "overlap_fraction"))
            made.append((fname, extra))
    if name == "proact_tracking":
        per_run = [(run, _proact_points(t, "slowdown")) for run, t in entries]
        if any(p for _r, p in per_run):
            extra = "Fig 2.8: compute slowdown from readiness tracking (counters, no transfers) vs chunk size"
            fname = out_file(name + "_fig2.8_slowdown")
            draw_proact_curves(plt, ticker, extra, "slowdown over the untracked producer (%)", per_run, runs,
                               os.path.join(out, fname), hline=0.0, percent=True)
            made.append((fname, extra))
    return made



# ----------------------------------------------------------------------------------------------
# The remote-access study (group "remote", GPU-SM's H1-H5): the figures the paper draws from it
# ----------------------------------------------------------------------------------------------

REMOTE_TOLERANCE = 0.10  # GPU-SM counts a remote share as hidden below 10 % slowdown


def remote_slowdowns(series, simulated=False):
    """[(x, median / median at x == 0)] of one series, or [] without a verified 0 % point (a
    simulated run's points are unverified: nothing ran, its 0 % point is the model's)."""
    pts = [p for p in series["points"] if _finite(p.get("median")) and _finite(p.get("x"))]
    base = [p["median"] for p in pts if p["x"] == 0 and (p.get("verified") or simulated)]
    if not base or not base[0] > 0:
        return []
    return sorted((p["x"], p["median"] / base[0]) for p in pts)


def draw_remote_slowdown(plt, title, entries, runs, out_path):
    """Figs 7-8: slowdown vs % remote, one panel per distribution (batch, spread)."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, dist in zip(axes, ("batch", "spread")):
        lines = [(run, sr) for run, t in entries for sr in t["series"]
                 if sr.get("params", {}).get("distribution") == dist]
        cols = colors_for(max(len(lines), 1))
        for k, (run, sr) in enumerate(lines):
            pts = remote_slowdowns(sr, run.simulated)
            if not pts:
                continue
            label = sr["label"].split(", ", 1)[-1]
            ax.plot([x for x, _y in pts], [y for _x, y in pts], marker="o", ms=3.5, lw=1.4, color=cols[k],
                    label=("%s: %s" % (run.prefix, label)) if run.prefix else label)
        ax.axhline(1 + REMOTE_TOLERANCE, color="0.3", lw=0.8, ls="--", label="+10 % (GPU-SM's bound)")
        ax.set_title("%s (%s)" % (dist, "remote rows: first blocks" if dist == "batch" else "remote columns"),
                     fontsize=10)
        ax.set_xlabel(X_LABELS["remote_percent"])
        ax.grid(True, alpha=0.3)
        ax.set_axisbelow(True)
        ax.legend(fontsize=7, frameon=False)
    axes[0].set_ylabel("slowdown (time / all-local time)")
    fig.suptitle(title, fontsize=11)
    finish(plt, fig, axes[0], runs, out_path)


def draw_remote_rate(plt, title, entries, runs, out_path):
    """Fig 6: the rate at which the kernel moved its remote bytes against time since its start."""
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    lines = [(run, sr) for run, t in entries for sr in t["series"] if sr.get("params", {}).get("traffic") == "remote"]
    cols = colors_for(max(len(lines), 1))
    for k, (run, sr) in enumerate(lines):
        pts = sorted((p["median"], p["bytes"]) for p in sr["points"] if _finite(p.get("median")))
        xs, ys, t0, b0 = [], [], 0.0, 0.0
        for t, b in pts:
            if t > t0:
                xs += [t0, t]
                ys += [(b - b0) / (t - t0) * 1e-3] * 2  # bytes per us -> GB/s
            t0, b0 = max(t0, t), b
        label = sr["label"].split(":")[0]
        ax.plot(xs, ys, lw=1.6, color=cols[k], label=("%s: %s" % (run.prefix, label)) if run.prefix else label)
    ax.set_xlabel("time since the kernel's first block started (us)")
    ax.set_ylabel("remote bytes moved (GB/s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(title, fontsize=11)
    finish(plt, fig, ax, runs, out_path)


def draw_remote(plt, name, entries, out_file, out):
    """The study's own figures of one test; returns [(png name, description)]."""
    runs = [r for r, _t in entries]
    made = []
    if name in ("remote.h3_intensity", "remote.h4_occupancy"):
        fig = "fig7" if name == "remote.h3_intensity" else "fig8"
        desc = ("GPU-SM Fig %s: slowdown from remote accesses, batched vs spread, per %s"
                % (fig[3:], "FLOPs per datum" if fig == "fig7" else "occupancy"))
        fname = out_file(name + "_" + fig + "_slowdown")
        draw_remote_slowdown(plt, desc, entries, runs, os.path.join(out, fname))
        made.append((fname, desc))
    if name == "remote.h2_timeline":
        desc = "GPU-SM Fig 6: remote bandwidth the kernel asks for over its run, remote rows vs remote columns"
        fname = out_file(name + "_fig6_rate")
        draw_remote_rate(plt, desc, entries, runs, os.path.join(out, fname))
        made.append((fname, desc))
    return made


def has_speedups(entries):
    return any(_finite(pt.get("speedup")) for _r, t in entries for sr in t["series"] for pt in sr["points"])


def bar_rows(run, test, with_test_name, group, only_label=None):
    """Rows for draw_bars: one per point with a value, of every series (or of the series
    labelled only_label)."""
    rows = []
    for s in test["series"]:
        if only_label is not None and s["label"] != only_label:
            continue
        pts = [p for p in s["points"] if _finite(p.get("median"))]
        for k, p in enumerate(pts):
            parts = [run.prefix] if run.prefix else []
            if with_test_name:
                parts.append(test["name"])
            parts.append(s["label"])
            lbl = ": ".join(parts)
            if len(pts) > 1:
                lbl += " #%d" % (k + 1)
            rows.append((lbl, p, group))
    return rows


# ----------------------------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="report.py",
        description=textwrap.fill(
            "Render gpsm results files (from `gpsm scope --json FILE`) as PNG plots, with an "
            "index.md listing every plot, the headline numbers and the waived/failed tests. "
            "Given several files, same-named tests are overlaid so runs can be compared "
            "(labels prefixed by device_kind or file name).", 78),
        epilog=textwrap.dedent("""\
            plots:
              sweeps (x = bytes, bytes_per_line, vector_bytes, blocks, ...)
                      one line per series: median, shaded min-max band; <test>.png
              matrix  every series has one point and src/dst params: heatmap,
                      source rows x destination columns, median annotated; <test>.png
              x=none  latency series (unit us) of all tests in one bar chart: latencies.png;
                      other x=none tests: one bar chart each, <test>.png

            exit status: 0 success, 2 bad arguments or unreadable/invalid results file,
                         3 matplotlib missing.
            format: docs/results-schema.md (schema "gpsm.results", version 1)"""),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", metavar="RESULTS.json", help="results file(s) from gpsm scope --json")
    p.add_argument("--out", "-o", default="gpsm-report", metavar="DIR",
                   help="output directory, created if needed (default: ./gpsm-report)")
    p.add_argument("-t", "--test", metavar="REGEX", action="append", default=[],
                   help="only tests whose name matches REGEX (Python re.search); "
                        "may be repeated (a test matching any is kept)")
    p.add_argument("--list", action="store_true",
                   help="list the tests in the files (status, unit, x, series, plot) and exit")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    patterns = []
    for rx in args.test:
        try:
            patterns.append(re.compile(rx))
        except re.error as e:
            print("gpsm: report: -t %s: bad regular expression (%s)" % (rx, e), file=sys.stderr)
            return EXIT_BAD_INPUT

    runs, ct_files = [], []
    for path in args.files:
        CURRENT[:] = [path]
        if is_ct_slices(path):
            ct_files.append(path)
            continue
        try:
            runs.append(Run(path, load(path)))
        except BadFile as e:
            die(path, str(e))
    CURRENT[:] = list(args.files)
    assign_prefixes(runs)
    global SIMULATED_TITLES
    SIMULATED_TITLES = bool(runs) and all(r.simulated for r in runs)

    def selected(t):
        return not patterns or any(p.search(t["name"]) for p in patterns)

    if args.list:
        for run in runs:
            print("%s: %s" % (run.path, run.note()))
            for t in run.tests:
                if not selected(t):
                    continue
                kind = plot_kind(t) if t["status"] == "ok" else "-"
                extra = ("  (%s)" % t["reason"]) if t["status"] != "ok" and t.get("reason") else ""
                print("  %-28s %-7s %-5s x=%-15s %3d series  plot=%s%s"
                      % (t["name"], t["status"], t["unit"], t.get("x", "none"), len(t.get("series", [])),
                         kind, extra))
        return EXIT_OK

    plt, ticker = import_matplotlib()
    out = args.out
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        print("gpsm: report: %s: cannot create output directory (%s)" % (out, e.strerror or e), file=sys.stderr)
        return EXIT_BAD_INPUT

    # Group same-named tests across runs, in first-seen order.
    order, by_name, not_ok = [], {}, []
    for run in runs:
        for t in run.tests:
            if not selected(t):
                continue
            # bench tests are drawn even when a run failed (the failed runs have no points and
            # are listed in the index); other failed tests have no figures at all
            drawable = t["status"] == "ok" or (t.get("group") in ("bench", "proact") and t.get("series"))
            if t["status"] != "ok":
                not_ok.append((run, t))
            if not drawable:
                continue
            if t["name"] not in by_name:
                order.append(t["name"])
                by_name[t["name"]] = []
            by_name[t["name"]].append((run, t))

    produced = []  # (png file name, tests, description)
    used = set(["latencies"])

    def out_file(base):
        stem = safe_name(base)
        cand, k = stem, 2
        while cand in used:
            cand = "%s_%d" % (stem, k)
            k += 1
        used.add(cand)
        return cand + ".png"

    latency_rows, latency_tests, latency_runs = [], [], []
    for name in order:
        entries = by_name[name]
        CURRENT[:] = sorted(set(r.path for r, _t in entries))
        kinds = set(plot_kind(t) for _r, t in entries)
        # a test drawn differently in different runs (e.g. a one-point quick run) falls back to lines
        kind = kinds.pop() if len(kinds) == 1 else ("latency" if kinds <= {"latency", "bars"} else "line")
        if kind == "latency":
            # rows by series, the runs of one series next to each other
            labels = []
            for _run, t in entries:
                for s in t["series"]:
                    if s["label"] not in labels:
                        labels.append(s["label"])
            for label in labels:
                for run, t in entries:
                    group = run.prefix if len(runs) > 1 else name
                    latency_rows += bar_rows(run, t, True, group, only_label=label)
            for run, _t in entries:
                if run not in latency_runs:
                    latency_runs.append(run)
            latency_tests.append(name)
            continue
        fname = out_file(name)
        path = os.path.join(out, fname)
        used_runs = [r for r, _t in entries]
        if kind == "matrix":
            draw_matrix(plt, name, entries, used_runs, path)
        elif kind == "bars":
            rows = []
            for run, t in entries:
                rows += bar_rows(run, t, False, run.prefix)
            draw_bars(plt, title_of(name, entries[0][1].get("description", "")), rows,
                      entries[0][1]["unit"], [r.prefix for r in used_runs], used_runs, path)
        else:
            draw_line(plt, ticker, name, entries, used_runs, path)
        produced.append((fname, [name], entries[0][1].get("description", ""), kind))
        print(path)
        if entries[0][1].get("group") == "bench" and has_speedups(entries):
            sname = out_file(name + "_speedup")
            spath = os.path.join(out, sname)
            draw_speedup(plt, name, entries, used_runs, spath)
            produced.append((sname, [name], "speedup over the best single-GPU run", "bars"))
            print(spath)
        if entries[0][1].get("group") == "bench" and has_field(entries, "link_bytes_vs_memcpy"):
            bname = out_file(name + "_link_bytes")
            bpath = os.path.join(out, bname)
            draw_link_bytes(plt, name, entries, used_runs, bpath)
            produced.append((bname, [name], "link bytes per iteration normalized to memcpy (GPS paper Fig 10)", "bars"))
            print(bpath)
        if entries[0][1].get("group") == "bench" and has_field(entries, "subscriber_pages"):
            pname = out_file(name + "_subscribers")
            ppath = os.path.join(out, pname)
            draw_subscribers(plt, name, entries, used_runs, ppath)
            produced.append((pname, [name], "pages by subscriber count (GPS paper Fig 9)", "bars"))
            print(ppath)
        if entries[0][1].get("group") == "remote":
            for pname, pdesc in draw_remote(plt, name, entries, out_file, out):
                produced.append((pname, [name], pdesc, "line"))
                print(os.path.join(out, pname))
        if entries[0][1].get("group") == "proact":
            for pname, pdesc in draw_proact(plt, ticker, name, entries, out_file, out):
                produced.append((pname, [name], pdesc, "line"))
                print(os.path.join(out, pname))

    cg_entries = [(r, t) for name in order for r, t in by_name[name]
                  if t.get("group") == "bench" and t.get("app") == "cg"]
    if cg_entries:
        CURRENT[:] = sorted(set(r.path for r, _t in cg_entries))
        for fname, desc in draw_cg(plt, ticker, cg_entries, out_file, out, hbm_peak(runs)):
            produced.append((fname, sorted(set(t["name"] for _r, t in cg_entries)), desc, "bars"))
            print(os.path.join(out, fname))

    for path in ct_files:
        CURRENT[:] = [path]
        try:
            for fname, desc in draw_ct(plt, path, out, out_file):
                produced.append((fname, [os.path.basename(path)], desc, "image"))
                print(os.path.join(out, fname))
        except BadFile as e:
            die(path, str(e))

    CURRENT[:] = list(args.files)
    if latency_rows:
        fname = "latencies.png"
        path = os.path.join(out, fname)
        groups = []
        for _l, _p, g in latency_rows:
            if g not in groups:
                groups.append(g)
        draw_bars(plt, "latencies (x = none)", latency_rows, "us", groups, latency_runs, path)
        produced.append((fname, latency_tests, "all latency series", "latency"))
        print(path)

    index = os.path.join(out, "index.md")
    text = render_index(runs, produced, by_name, order, not_ok, args.test)
    write_atomic(index, lambda f: f.write(text.encode("utf-8")))
    print(index)
    if not produced and not not_ok:
        print("gpsm: report: no tests matched%s" % "".join(" -t " + rx for rx in args.test), file=sys.stderr)
    return EXIT_OK


# ----------------------------------------------------------------------------------------------
# CT pictures (`gpsm bench --app ct --pictures DIR`: ct-<size>.json, schema gpsm.ct_slices, and
# its raw float32 slices; src/apps/ct/ct_slices.hpp). People look at CT, they don't read it.
# ----------------------------------------------------------------------------------------------

CT_SCHEMA = "gpsm.ct_slices"
CT_IMAGES = ("phantom", "first iterate", "final image")
CT_PLANES = ("axial", "coronal", "sagittal")
CT_WINDOW_HU = (-100.0, 150.0)  # brain window: the phantom's 40 HU brain and its +/-10-30 HU lesions


def is_ct_slices(path):
    """Whether the file is a CT slices index (anything unreadable is left to load(), which says why)."""
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(doc, dict) and doc.get("schema") == CT_SCHEMA


def load_ct_slices(path):
    """The index and {(image, plane): rows x cols list of rows} from its raw file; raises BadFile."""
    import struct
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"))
    for key, kind in (("size", str), ("raw", str), ("slices", list), ("cost", list)):
        if not isinstance(doc.get(key), kind):
            raise BadFile("a CT slices file without '%s' (%s)" % (key, kind.__name__))
    raw_path = os.path.join(os.path.dirname(path), doc["raw"])
    try:
        with open(raw_path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise BadFile("its raw slices %s cannot be read (%s); keep the .f32 file beside the .json"
                      % (raw_path, e.strerror or e))
    out = {}
    for s in doc["slices"]:
        rows, cols, off = s.get("rows"), s.get("cols"), s.get("offset")
        if not all(isinstance(v, int) and v >= 0 for v in (rows, cols, off)) or off + 4 * rows * cols > len(raw):
            raise BadFile("slice %s/%s lies outside %s (%d bytes)" % (s.get("image"), s.get("plane"), raw_path, len(raw)))
        vals = struct.unpack_from("<%df" % (rows * cols), raw, off)
        out[(s.get("image"), s.get("plane"))] = [vals[r * cols:(r + 1) * cols] for r in range(rows)]
    for image in CT_IMAGES:
        for plane in CT_PLANES:
            if (image, plane) not in out:
                raise BadFile("no %s slice of the %s" % (plane, image))
    return doc, out


def draw_ct(plt, path, out, out_file):
    """The slices (one figure: images by rows, planes by columns, brain window) and the cost and
    RMSE curves of one CT slices file; returns [(png name, description)]."""
    doc, sl = load_ct_slices(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    produced = []
    # voxel aspect: axial is dx by dx, coronal and sagittal dz (rows) by dx (columns)
    vox = doc.get("voxel_mm") if isinstance(doc.get("voxel_mm"), list) and len(doc["voxel_mm"]) == 3 else [1, 1, 1]
    aspect = {"axial": 1.0, "coronal": vox[2] / vox[0], "sagittal": vox[2] / vox[1]}
    fig, axes = plt.subplots(3, 3, figsize=(10.5, 10.5))
    lo, hi = CT_WINDOW_HU
    for i, image in enumerate(CT_IMAGES):
        for j, plane in enumerate(CT_PLANES):
            ax = axes[i][j]
            im = ax.imshow(sl[(image, plane)], cmap="gray", vmin=lo, vmax=hi, origin="lower",
                           aspect=aspect[plane], interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(plane)
            if j == 0:
                ax.set_ylabel(image)
    fig.colorbar(im, ax=axes, shrink=0.6, label="HU (window %g to %g)" % (lo, hi))
    geo = doc.get("geometry")
    size = doc["size"] if not geo or geo == doc["size"] else "%s (%s)" % (doc["size"], geo)
    fig.suptitle("ct %s, %s subsets: central slices" % (size, doc.get("subsets", "?")))
    name = out_file(stem + "_slices")
    write_atomic(os.path.join(out, name), lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight"))
    plt.close(fig)
    produced.append((name, "central axial, coronal and sagittal slices of the phantom, first iterate and final image"))

    cost = [c for c in doc["cost"] if _is_num(c)]
    rmse = [r for r in (doc.get("rmse_hu") or []) if _is_num(r)]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(range(len(cost)), cost, "o-", color="C0", label="PWLS cost")
    ax.set_xlabel("iteration (0: the starting image)")
    ax.set_ylabel("cost")
    ax.set_yscale("log")
    if rmse:
        ax2 = ax.twinx()
        ax2.plot(range(len(rmse)), rmse, "s--", color="C1", label="RMSE vs phantom")
        ax2.set_ylabel("RMSE vs the phantom (HU)")
        ax2.set_yscale("log")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper right")
    ax.set_title("ct %s: cost and RMSE per iteration" % doc["size"])
    name = out_file(stem + "_cost")
    write_atomic(os.path.join(out, name), lambda f: fig.savefig(f, format="png", dpi=110, bbox_inches="tight"))
    plt.close(fig)
    produced.append((name, "PWLS cost (log) and RMSE against the phantom per iteration"))
    return produced


def md_escape(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def render_index(runs, produced, by_name, order, not_ok, filters):
    L = ["# gpsm report", ""]
    L.append("| file | device kind | GPUs | gpsm | created | command |")
    L.append("|---|---|---|---|---|---|")
    for r in runs:
        L.append("| %s | %s | %s | %s | %s | `%s` |" % tuple(md_escape(v) for v in (
            os.path.basename(r.path), r.kind or "-", r.gpu_names() or "-", r.commit() or "-",
            r.date() or "-", r.doc.get("command", "-"))))
    if filters:
        L += ["", "Tests filtered by %s." % ", ".join("`-t %s`" % md_escape(rx) for rx in filters)]
    L += ["", "## Plots", ""]
    if produced:
        L.append("| plot | test(s) | kind | description |")
        L.append("|---|---|---|---|")
        for fname, names, desc, kind in produced:
            L.append("| [%s](%s) | %s | %s | %s |" % (fname, fname, ", ".join(names), kind, md_escape(desc)))
        L.append("")
        for fname, _names, _d, _k in produced:
            L.append("![%s](%s)" % (fname, fname))
            L.append("")
    else:
        L += ["No plots (no ok tests selected).", ""]
    L += ["## Headline numbers", "",
          "Per series: peak median for bandwidths (GB/s), lowest median for latencies (us).", ""]
    multi = len(runs) > 1
    if multi:
        L.append("| test | run | series | headline |")
        L.append("|---|---|---|---|")
    else:
        L.append("| test | series | headline |")
        L.append("|---|---|---|")
    for name in order:
        for run, t in by_name[name]:
            for s in t["series"]:
                text, _v = headline(t, s)
                if multi:
                    L.append("| %s | %s | %s | %s |" % (md_escape(name), md_escape(run.prefix),
                                                      md_escape(s["label"]), text))
                else:
                    L.append("| %s | %s | %s |" % (md_escape(name), md_escape(s["label"]), text))
    L += ["", "## Waived and failed tests", ""]
    if not_ok:
        L.append("| test | %sstatus | reason |" % ("run | " if multi else ""))
        L.append("|---|%s---|---|" % ("---|" if multi else ""))
        for run, t in not_ok:
            cells = [md_escape(t["name"])] + ([md_escape(run.prefix)] if multi else []) + \
                    [t["status"], md_escape(t.get("reason") or "-")]
            L.append("| " + " | ".join(cells) + " |")
    else:
        L.append("None.")
    L.append("")
    return "\n".join(L)


def guarded_main(argv=None):
    """main(), with anything unforeseen (a field of a type no check expected, a file that vanished,
    a full disk) turned into one `gpsm: report: FILE: why` line and exit 2 instead of a traceback."""
    try:
        return main(argv)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print("gpsm: report: interrupted", file=sys.stderr)
        return 130
    except BadFile as e:
        die(", ".join(CURRENT) or "-", str(e))
    except RecursionError:
        die(", ".join(CURRENT) or "-", "cannot be drawn (nested too deeply)")
    except OSError as e:
        where = getattr(e, "filename", None)
        die(", ".join(CURRENT) or "-", "cannot be drawn (%s%s)"
            % (e.strerror or e, (": %s" % where) if where else ""))
    except Exception as e:  # noqa: BLE001 -- the whole point: no traceback reaches the user
        die(", ".join(CURRENT) or "-", "cannot be drawn: a field has an unexpected value (%s: %s)"
            % (type(e).__name__, str(e).splitlines()[0] if str(e) else "no detail"))


if __name__ == "__main__":
    sys.exit(guarded_main())
