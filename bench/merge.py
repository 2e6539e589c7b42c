#!/usr/bin/env python3
"""bench/merge.py IMPL OUT_DIR PART_DIR... [--stopped LIST]

Merges the result folders of one program run once per case (bench/run.sh --case-timeout:
each case in its own process, so that a case that does not finish loses only itself) into
OUT_DIR/IMPL.csv and OUT_DIR/IMPL.meta.json, IMPL being `opencl` (cldm-bench-suite) or `cuda`
(cldm-bench-cuda). The CSV gets the header once and every part's rows in the order given; the
meta data is the first part's, with `cases` the cases the parts ran, `seconds` their sum,
`failures` all parts' failed checks, the usable heap sizes (and case 9's devices) from the
parts that measured them, and `stopped` the cases of LIST (stopped by the time limit; their
rows, if any, are kept).
A part without a meta file (a process stopped before it wrote one) adds only its rows.
"""
import json
import os
import sys


def main(argv):
    args, stopped = [], ""
    i = 0
    while i < len(argv):
        if argv[i] == "--stopped" and i + 1 < len(argv):
            stopped = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) < 3 or args[0] not in ("opencl", "cuda"):
        sys.stderr.write(__doc__)
        return 2
    impl, out, parts = args[0], args[1], args[2:]
    header, rows, meta, cases, failures, seconds = None, [], None, [], [], 0.0
    for part in parts:
        csv_path = os.path.join(part, impl + ".csv")
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                lines = f.read().splitlines()
            if lines:
                header = header or lines[0]
                rows.extend(line for line in lines[1:] if line)
        meta_path = os.path.join(part, impl + ".meta.json")
        if not os.path.exists(meta_path):
            continue
        try:
            with open(meta_path) as f:
                m = json.load(f)
        except ValueError:  # written while the process was stopped
            continue
        if meta is None:
            meta = dict(m)
        for key in ("heap_usable", "fill_heap_usable", "multi_devices", "multi_heap_usable"):
            if m.get(key):
                meta[key] = m[key]
        cases.extend(c for c in str(m.get("cases", "")).split(",") if c and c not in cases)
        if m.get("failures"):
            failures.append(m["failures"])
        if isinstance(m.get("seconds"), (int, float)) and m["seconds"] > 0:
            seconds += m["seconds"]
    if header is None and meta is None:
        sys.stderr.write("bench/merge.py: no %s results in %s\n" % (impl, " ".join(parts)))
        return 1
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, impl + ".csv"), "w") as f:
        f.write((header or "") + "\n")
        for line in rows:
            f.write(line + "\n")
    if meta is not None:
        meta["cases"] = ",".join(sorted(cases, key=int))
        meta["seconds"] = round(seconds, 1)
        meta["failures"] = "\n".join(failures)
        meta["stopped"] = stopped
        with open(os.path.join(out, impl + ".meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
