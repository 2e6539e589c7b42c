#!/usr/bin/env python3
"""tools/probe-counters.py — the allocator's path counters per launch, from a probe build's log.

A layer whose allocator was built with -DCLDM_PROBE_COUNTERS=1 (device/cl/cldm_probe.clh) and run
with CLDM_PROBE_COUNTERS=1 and CLDM_OOM=report (README, "Knobs") prints after each watched launch
that moved a counter the counts that launch added

    cl_ext_device_malloc: probe KERNEL flushes=N pool_reads=N ...

and after a launch whose allocations returned NULL the CLDM_OOM line "kernel KERNEL: N
allocations returned NULL". This prints them as a table, a row per probe line: its number in the
log, the kernel, the counts and the launch's NULLs.

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
    print(" ".join(["line", "kernel"] + names + ["nulls"]))
    for no, kernel, counts, nulls in rows:
        print(" ".join([str(no), kernel] + counts + [nulls or "0"]))


if __name__ == "__main__":
    main()
