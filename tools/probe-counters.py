#!/usr/bin/env python3
"""tools/probe-counters.py — the allocator's path counters per launch, from a probe build's log.

A layer whose allocator was built with -DCLDM_PROBE_COUNTERS=1 (device/cl/cldm_probe.clh) and run
with CLDM_PROBE_COUNTERS=1 and CLDM_OOM=report (README, "Knobs") prints after each watched launch

    cl_ext_device_malloc: probe KERNEL flushes=N pool_reads=N ...

with counts cumulative since the heap's creation or reset, and after a launch whose allocations
returned NULL the CLDM_OOM line "kernel KERNEL: N allocations returned NULL". This prints one row
per launch whose counts moved: the launch's number in the log, its kernel, the counts it added
(a count below the one before starts a new heap: the counts are then the launch's own) and its
NULLs.

    tools/probe-counters.py RUN.LOG [--kernel k_malloc]
"""
import argparse
import re

PROBE = re.compile(r"cl_ext_device_malloc: probe (\S+)((?: \w+=\d+)+)")
OOM = re.compile(r"cl_ext_device_malloc: kernel (\S+): (\d+) allocations returned NULL")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--kernel", default=None, help="only this kernel's launches")
    args = ap.parse_args()
    rows, names, prev, launch = [], None, None, 0
    with open(args.log, errors="replace") as f:
        for line in f:
            m = PROBE.search(line)
            if m:
                launch += 1
                pairs = [p.split("=") for p in m.group(2).split()]
                names = [k for k, _ in pairs]
                vals = [int(v) for _, v in pairs]
                if prev is None or any(v < p for v, p in zip(vals, prev)):
                    delta = vals  # a new heap (or a reset): the launch's own counts
                else:
                    delta = [v - p for v, p in zip(vals, prev)]
                prev = vals
                if any(delta) and (args.kernel is None or args.kernel == m.group(1)):
                    rows.append([launch, m.group(1), delta, ""])
                continue
            m = OOM.search(line)
            if m and rows and rows[-1][0] == launch and rows[-1][1] == m.group(1):
                rows[-1][3] = m.group(2)
    if not names:
        print("no probe lines (a probe build, CLDM_PROBE_COUNTERS=1 and CLDM_OOM=report?)")
        return
    print(" ".join(["launch", "kernel"] + names + ["nulls"]))
    for launch, kernel, delta, nulls in rows:
        print(" ".join([str(launch), kernel] + [str(d) for d in delta] + [nulls or "0"]))


if __name__ == "__main__":
    main()
