"""bench/report_doc.py — the Markdown section that docs/performance.md holds for one device,
made from one result folder of bench/run.sh (bench/report.py --doc calls it).

The section names the device, driver, revision, date and the command that reproduces the run,
then tables of case 1 (one malloc per work-item, one block size per launch), warm and cold,
with the baselines measured in the same run: the bump-pointer kernel of each API, CUDA's
device malloc where cuda.csv exists, and other allocators where the folder has peers/*.csv
(an external harness's output, one row per size:
allocator,commit,size,threads,cold_ms,warm_ms,free_ms,bump_cold_ms,bump_warm_ms,nulls,overlaps).
Ratios are to the bump kernel of the same API and process, which timers do not change. Then
free, mixed sizes (case 2), the mixed-size fill (case 5) and several devices in one context
(case 9) where the run has them, and PNG plots of case 1 written into a folder of the caller's
choice. A folder of case 9 alone gives the header and that table.
"""
import csv
import glob
import os
import sys

from report import (fmt, multi_alone_together, multi_concurrency, multi_devices_text, multi_shapes,
                    size_str, table)

DEFAULT_SIZES = (16, 64, 256, 1024, 4096)


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


class Peers:
    """peers/*.csv: {allocator: {size: row}} in file order, each row a dict of the columns."""

    def __init__(self, folder):
        self.rows, self.order = {}, []
        for path in sorted(glob.glob(os.path.join(folder, "peers", "*.csv"))):
            with open(path, newline="") as f:
                for r in csv.DictReader(f):
                    name, size = r.get("allocator"), number(r.get("size"))
                    if not name or size is None:
                        continue
                    if name not in self.rows:
                        self.rows[name] = {}
                        self.order.append(name)
                    self.rows[name][int(size)] = r

    def cell(self, name, size, column):
        """(number or None, text as written) of one value."""
        r = self.rows.get(name, {}).get(size)
        if r is None:
            return None, None
        text = (r.get(column) or "").strip()
        return number(text), text or None


def show(value, text=None):
    """A value for a table cell: the number formatted, else the text as written, else –."""
    if value is not None:
        return fmt(value)
    return text if text else "–"


def pair(a, b):
    return "%s / %s" % (a, b)


def quotient(a, b):
    if a is None or b is None or b <= 0:
        return "–"
    r = a / b
    return "%.0f" % r if r >= 100 else "%.1f" % r if r >= 10 else "%.2f" % r


def read_text(folder, name):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().strip() or None


def cuda_version(v):
    return "%d.%d" % (v // 1000, v % 1000 // 10) if isinstance(v, int) and v > 0 else "?"


def throughput_shapes(d, sizes):
    """[(size, n)] of case 1's warm malloc rows, sizes limited to `sizes` (None: all)."""
    out = []
    for s, n, p in d.keys("opencl", "throughput", "time", "malloc"):
        if (sizes is None or s in sizes) and (s, n) not in out:
            out.append((s, n))
    return sorted(out)


def first_null(d):
    """Case 5's mixed fill: (round, requested, in use) at the first round with NULLs, or None."""
    rounds = {}
    for s, n, p in d.keys("opencl", "fragmentation", "nulls", "fill"):
        nulls = d.get("opencl", "fragmentation", "fill", s, n, p, "nulls")
        if nulls:
            rounds[int(p)] = (s, n, p)
    if not rounds:
        return None
    r = min(rounds)
    s, n, p = rounds[r]
    g = lambda metric: d.get("opencl", "fragmentation", "fill", s, n, p, metric)
    return r, g("peak_fill") or g("fill"), g("peak_in_use")


def header(d, command, revision):
    m, cm = d.meta, d.cuda_meta or {}
    out = ["## %s — %s\n" % (m.get("platform", "?"), m.get("device", "?"))]
    text = ("Measured on %s at revision `%s`: %s through %s (%s, driver %s), %s compute units, "
            "on host `%s`." % ((m.get("date") or "?")[:10], revision or "unknown",
                               m.get("device", "?"), m.get("platform", "?"),
                               m.get("device_version", "?"), m.get("driver_version", "?"),
                               m.get("compute_units", "?"), m.get("host", "?")))
    if cm:
        text += (" CUDA's device malloc: the same GPU in the same run, CUDA runtime %s, "
                 "driver API %s." % (cuda_version(cm.get("cuda_runtime")),
                                     cuda_version(cm.get("cuda_driver"))))
    out.append(text + "\n")
    if command:
        out.append("Reproduce:\n\n```sh\n%s\n```\n" % command)
    return out


def sec_malloc(d, peers, shapes):
    m = d.meta
    cuda = d.has_cuda
    head = ["S", "N", "ours"] + (["CUDA malloc"] if cuda else []) + peers.order + \
        ["bump (OpenCL)"] + (["bump (CUDA)"] if cuda else [])
    rows, ratios, frees = [], [], []
    g = lambda impl, kern, s, n, metric="time": d.get(impl, "throughput", kern, s, n, "", metric)
    for s, n in shapes:
        ours = (g("opencl", "malloc", s, n), g("opencl", "malloc", s, n, "cold"))
        bump = (g("opencl", "bump", s, n), g("opencl", "bump", s, n, "cold"))
        cu = (g("cuda", "malloc", s, n), g("cuda", "malloc", s, n, "cold"))
        cbump = (g("cuda", "bump", s, n), g("cuda", "bump", s, n, "cold"))
        row = [size_str(s), str(n), pair(show(ours[0]), show(ours[1]))]
        rrow = [size_str(s), pair(quotient(ours[0], bump[0]), quotient(ours[1], bump[1]))]
        frow = [size_str(s), show(g("opencl", "free", s, n)),
                quotient(g("opencl", "free", s, n), bump[0])]
        if cuda:
            row.append(pair(show(cu[0]), show(cu[1])))
            rrow.append(pair(quotient(cu[0], cbump[0]), quotient(cu[1], cbump[1])))
            frow += [show(g("cuda", "free", s, n)), quotient(g("cuda", "free", s, n), cbump[0])]
        for name in peers.order:
            w, c = peers.cell(name, s, "warm_ms"), peers.cell(name, s, "cold_ms")
            bw, bc = peers.cell(name, s, "bump_warm_ms"), peers.cell(name, s, "bump_cold_ms")
            fr = peers.cell(name, s, "free_ms")
            row.append(pair(show(*w), show(*c)))
            rrow.append(pair(quotient(w[0], bw[0]), quotient(c[0], bc[0])))
            frow += [show(*fr), quotient(fr[0], bw[0])]
        row.append(pair(show(bump[0]), show(bump[1])))
        if cuda:
            row.append(pair(show(cbump[0]), show(cbump[1])))
        rows.append(row)
        ratios.append(rrow)
        frees.append(frow)
    out = ["### malloc, one block size per launch\n",
           "N work-items each call `malloc(S)` once, in one launch, on a heap of %s. Kernel time "
           "in ms, **warm / cold**: warm is the best of %s launches after a warm-up, cold the "
           "first launch on a fresh heap (ours: right after `clEnqueueResetDeviceHeapEXT`; "
           "CUDA: a new context; peers: a new allocator instance). The bump-pointer kernel (one "
           "atomic add per block, no reuse: the ceiling) ran with the same launch shape%s.\n"
           % (size_str(m.get("heap_usable") or m.get("heap", 0)), m.get("reps", "?"),
              "; CUDA's and the peers' times come from CUDA events, ours from OpenCL event "
              "profiling" if cuda or peers.order else ""),
           table(head, rows),
           "\nThe same, divided by the bump kernel of the same API in the same process "
           "(warm ÷ warm / cold ÷ cold; 1.00 is the ceiling):\n",
           table(["S", "ours"] + (["CUDA malloc"] if cuda else []) + peers.order, ratios)]
    fhead = ["S", "ours ms", "÷ bump"] + (["CUDA ms", "÷ CUDA bump"] if cuda else [])
    for name in peers.order:
        fhead += [name + " ms", "÷ bump"]
    out += ["\n**free** of those blocks, in a second launch (warm, ms; ÷ the warm bump kernel "
            "of the same API):\n", table(fhead, frees)]
    if peers.order:
        out.append("\nPeers (their own CUDA code, in a process of their own on the same GPU in "
                   "the same session): %s.\n" % "; ".join(
                       "%s at commit %s" % (name, next(iter(peers.rows[name].values()))
                                            .get("commit") or "?") for name in peers.order))
    return out


def sec_mixed(d):
    keys = d.keys("opencl", "mixed", "time", "malloc")
    if not keys:
        return []
    largest = {}
    for s, n, p in keys:
        if n > largest.get(s, (0, ""))[0]:
            largest[s] = (n, p)
    head = ["sizes", "N", "ours ms", "÷ bump"] + (["CUDA ms", "÷ CUDA bump"] if d.has_cuda else [])
    rows = []
    for s in sorted(largest):
        n, p = largest[s]
        g = lambda impl, kern: d.get(impl, "mixed", kern, s, n, p, "time")
        row = ["16 B - %s" % size_str(s), str(n), show(g("opencl", "malloc")),
               quotient(g("opencl", "malloc"), g("opencl", "bump"))]
        if d.has_cuda:
            row += [show(g("cuda", "malloc")), quotient(g("cuda", "malloc"), g("cuda", "bump"))]
        rows.append(row)
    return ["\n### malloc, mixed sizes\n",
            "Each work-item asks for a random size, uniform in the range (warm, ms):\n",
            table(head, rows)]


def sec_fill(d):
    got = first_null(d)
    if not got:
        return []
    r, requested, in_use = got
    heap = d.meta.get("fill_heap_usable") or d.meta.get("fill_heap") or 0
    text = ("\n**Mixed sizes, filled until NULL** (case 5: rounds of random sizes 16 B - 1 KiB "
            "on a %s heap, half of each round kept): the first NULL came in round %d, with "
            "%.1f %% of the heap requested" % (size_str(heap), r, 100 * (requested or 0)))
    if in_use:
        text += " and %.1f %% in use by the allocator's own count" % (100 * in_use)
    return [text + ".\n"]


def sec_multi(d):
    """Case 9: each device alone and all of them at once, where the run has it."""
    shapes = multi_shapes(d)
    if not shapes:
        return []
    head = ["S", "N per device", "device", "malloc: alone / together", "÷",
            "cold: alone / together", "÷", "free: alone / together", "÷", "bump: alone / together",
            "÷"]
    rows = []
    for s, n, devs in shapes:
        for i in devs:
            row = [size_str(s), str(n), str(i)]
            for a, t in multi_alone_together(d, s, n, i):
                row += [pair(show(a), show(t)), quotient(t, a)]
            rows.append(row)
    conc = []
    for s, n, devs in shapes:
        total, together, r = multi_concurrency(d, "malloc", s, n, devs)
        conc.append("%s %s" % (size_str(s), r))
    return ["\n### Several devices in one context\n",
            "One context of %d devices (%s), one heap each, one program built for all. Case 1's "
            "launches (N work-items per device, one `malloc(S)` each, then `free` in a second "
            "launch) on each device alone while the others idle, then on all at once from one "
            "host thread per device, released together. Kernel ms, warm (best of %s) and cold "
            "(first launch after `clEnqueueResetDeviceHeapEXT`); ÷ is together ÷ alone for the "
            "same device (1.00: no interference). The bump-pointer kernel allocates nothing: its "
            "ratio is the cost of sharing the hardware, not the heaps.\n"
            % (len(shapes[0][2]), multi_devices_text(d) or "?", d.meta.get("reps", "?")),
            table(head, rows),
            "\nConcurrency of the malloc launches on the host clock (the launches alone summed ÷ "
            "all together, from the first enqueue to the last completion; the number of devices "
            "when they ran side by side, 1 when one after another): %s.\n" % ", ".join(conc)]


def plots(d, peers, shapes, folder, link):
    """PNG plots of case 1 into folder; returns the Markdown image lines."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator
    except ImportError:
        print("report_doc: matplotlib is not installed (Debian: python3-matplotlib): no plots",
              file=sys.stderr)
        return []
    os.makedirs(folder, exist_ok=True)
    tag = d.meta.get("device_tag") or "device"
    title = "%s, %s" % (d.meta.get("device", "?"), (d.meta.get("date") or "")[:10])
    g = lambda impl, kern, s, n, metric: d.get(impl, "throughput", kern, s, n, "", metric)
    series = [("ours", "C0", lambda s, n, m: g("opencl", "malloc", s, n, m),
               lambda s, n, m: g("opencl", "bump", s, n, m))]
    if d.has_cuda:
        series.append(("CUDA malloc", "C3", lambda s, n, m: g("cuda", "malloc", s, n, m),
                       lambda s, n, m: g("cuda", "bump", s, n, m)))
    for i, name in enumerate(peers.order):
        col = {"time": "warm_ms", "cold": "cold_ms"}
        bcol = {"time": "bump_warm_ms", "cold": "bump_cold_ms"}
        series.append((name, "C%d" % (4 + i),
                       lambda s, n, m, name=name: peers.cell(name, s, col[m])[0],
                       lambda s, n, m, name=name: peers.cell(name, s, bcol[m])[0]))
    made = []

    def save(fig, name, alt):
        fig.tight_layout()
        fig.savefig(os.path.join(folder, name), dpi=110)
        plt.close(fig)
        made.append("![%s](%s%s)" % (alt, link, name))

    xs = [s for s, n in shapes]

    def axes(ax, ylabel, what):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [size_str(x) for x in xs], fontsize=8)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("block size S (one malloc per work-item)")
        ax.set_ylabel(ylabel)
        ax.set_title("%s — %s" % (what, title), fontsize=9)
        ax.grid(True, which="both", alpha=.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    for kind in ("malloc", "ratio"):
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for label, color, value, bump in series:
            for metric, style in (("time", "-"), ("cold", "--")):
                pts = [(s, value(s, n, metric), bump(s, n, metric)) for s, n in shapes]
                if kind == "ratio":
                    pts = [(s, v / b if v is not None and b else None, b) for s, v, b in pts]
                pts = [(s, v) for s, v, b in pts if v is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color,
                            marker="o", ms=3,
                            label="%s, %s" % (label, "warm" if metric == "time" else "cold"))
        if kind == "malloc":
            for metric, style in (("time", ":"), ("cold", "-.")):
                pts = [(s, g("opencl", "bump", s, n, metric)) for s, n in shapes]
                pts = [p for p in pts if p[1] is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color="C7",
                            label="bump pointer (OpenCL), %s"
                            % ("warm" if metric == "time" else "cold"))
            axes(ax, "malloc kernel ms", "malloc")
        else:
            ax.axhline(1.0, color="C7", linestyle=":", label="bump pointer (the ceiling)")
            axes(ax, "÷ the bump kernel of the same API", "malloc ÷ bump")
        save(fig, "%s-%s.png" % (tag, kind), "%s: malloc%s" % (tag, "" if kind == "malloc"
                                                                 else " ÷ bump"))
    # free, warm: ours, CUDA's, the peers'
    fig, ax = plt.subplots(figsize=(9, 4.5))
    frees = [("ours", "C0", lambda s, n: g("opencl", "free", s, n, "time"))]
    if d.has_cuda:
        frees.append(("CUDA free", "C3", lambda s, n: g("cuda", "free", s, n, "time")))
    for i, name in enumerate(peers.order):
        frees.append((name, "C%d" % (4 + i),
                      lambda s, n, name=name: peers.cell(name, s, "free_ms")[0]))
    frees.append(("bump pointer malloc (OpenCL)", "C7",
                  lambda s, n: g("opencl", "bump", s, n, "time")))
    for label, color, value in frees:
        pts = [(s, value(s, n)) for s, n in shapes]
        pts = [p for p in pts if p[1] is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ":" if color == "C7" else "-",
                    color=color, marker="o", ms=3, label=label)
    axes(ax, "free kernel ms (warm)", "free")
    save(fig, "%s-free.png" % tag, "%s: free" % tag)
    return made


def write(d, out_path, plots_dir=None, plots_link=None, command=None, sizes=DEFAULT_SIZES):
    """Writes the section of result folder d (a report.Data) to out_path ('-': stdout)."""
    peers = Peers(d.dir)
    shapes = throughput_shapes(d, None if sizes is None else set(sizes))
    multi = sec_multi(d)
    if not shapes and not multi:
        print("report_doc: no case 1 rows (malloc) nor case 9 rows in %s" % d.dir,
              file=sys.stderr)
        return 1
    command = command or read_text(d.dir, "command.txt")
    out = header(d, command, read_text(d.dir, "revision.txt"))
    if shapes:
        out += sec_malloc(d, peers, shapes)
    out += sec_mixed(d)
    out += sec_fill(d)
    out += multi
    if plots_dir and shapes:
        link = plots_link if plots_link is not None else os.path.basename(
            os.path.normpath(plots_dir)) + "/"
        images = plots(d, peers, shapes, plots_dir, link)
        if images:
            out.append("\n" + "\n".join(images) + "\n")
    text = "\n".join(part.strip("\n") + "\n" for part in out)
    if out_path == "-":
        sys.stdout.write(text)
    else:
        with open(out_path, "w") as f:
            f.write(text)
        print("report_doc: wrote %s" % out_path, file=sys.stderr)
    return 0
