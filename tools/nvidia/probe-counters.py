#!/usr/bin/env python3
"""tools/nvidia/probe-counters.py — the allocator's path counters per launch, from a probe build's log.

A layer whose allocator was built with -DCLDM_PROBE_COUNTERS=1 (device/cl/cldm_probe.clh) and run
with CLDM_PROBE_COUNTERS=1 and CLDM_OOM=report (README, "Settings") prints after each watched launch
that moved a counter the counts that launch added

    cl_ext_device_malloc: probe KERNEL flushes=N pool_reads=N ...

and after a launch whose allocations returned NULL the CLDM_OOM line "kernel KERNEL: N
allocations returned NULL". This prints them as a table, a row per probe line: its number in the
log, the kernel, the counts and the launch's NULLs.

    tools/nvidia/probe-counters.py RUN.LOG [--kernel k_malloc] [--times [--ghz 1.98]]

--times reads the log of a time probe build (CLDM_PROBE_TIMES, device/cl/cldm_probe.clh), whose
words are cycles and counts of cldm_slab_alloc under the path counters' names, and prints per
launch: calls, NULLs, the mean time of a call and of a call that returned NULL (microseconds at
--ghz, the SM clock), the share of all calls' time spent in pauses of hops, refills, the last
resort and borrows, and hops, refills and last-resort calls per call.
"""
import argparse
import re

PROBE = re.compile(r"cl_ext_device_malloc: probe (\S+)((?: \w+=\d+)+)")
OOM = re.compile(r"cl_ext_device_malloc: kernel (\S+): (\d+) allocations returned NULL")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--kernel", default=None, help="only this kernel's launches")
    ap.add_argument("--times", action="store_true", help="a time probe build's log")
    ap.add_argument("--ghz", type=float, default=1.98, help="SM clock for --times (GHz)")
    args = ap.parse_args()
    rows, names, line_no = [], None, 0
    with open(args.log, errors="replace") as f:
        for line in f:
            m = PROBE.search(line)
            if m:
                line_no += 1
                pairs = [p.split("=") for p in m.group(2).split()]
                names = [k for k, _ in pairs]
                if args.kernel is None or args.kernel == m.group(1):
                    rows.append([line_no, m.group(1), [v for _, v in pairs], ""])
                continue
            m = OOM.search(line)
            if m and rows and rows[-1][0] == line_no and rows[-1][1] == m.group(1):
                rows[-1][3] = m.group(2)
    if not names:
        print("no probe lines (a probe build, CLDM_PROBE_COUNTERS=1 and CLDM_OOM=report?)")
        return
    if args.times:
        print_times(rows, args.ghz)
        return
    print(" ".join(["line", "kernel"] + names + ["nulls"]))
    for no, kernel, counts, nulls in rows:
        print(" ".join([str(no), kernel] + counts + [nulls or "0"]))


# the time probe's words in the layer's order (cldm_probe.clh: CLDM_TIME_*), times in units of
# 2^CLDM_TIME_UNIT_LOG2 cycles
TIMES = ["all", "null", "pause", "refill", "final", "borrow",
         "calls", "nulls", "hops", "refills", "finals"]
TIME_UNIT = 4096


def print_times(rows, ghz):
    print("line kernel calls nulls us/call us/null pause% refill% final% borrow% "
          "hops/call refills/call finals")
    for no, kernel, counts, _ in rows:
        v = dict(zip(TIMES, (int(c) for c in counts)))
        if not v.get("calls"):
            continue
        us = lambda units: units * TIME_UNIT / (ghz * 1e3)
        share = lambda k: 100.0 * v[k] / v["all"] if v["all"] else 0.0
        print("%d %s %d %d %.2f %.2f %.1f %.1f %.1f %.1f %.2f %.2f %d" % (
            no, kernel, v["calls"], v["nulls"], us(v["all"]) / v["calls"],
            us(v["null"]) / v["nulls"] if v["nulls"] else 0.0, share("pause"), share("refill"),
            share("final"), share("borrow"), v["hops"] / v["calls"], v["refills"] / v["calls"],
            v["finals"]))


if __name__ == "__main__":
    main()
