#!/usr/bin/env python3
"""gpu-tests.py — the end-to-end tests of a build directory as a list that tools/gpu-run.sh runs
on a machine without CMake (an NVIDIA machine, from the pack tools/gpu-pack.sh writes).

It reads `ctest --show-only=json-v1` and keeps every end-to-end test (label e2e) that runs real
kernels through the layer on the default driver (not the stub ICD, not pocl-specific checks),
plus the device allocator's tests of the variant the PTX route uses (cl12; they set the heap
argument by hand and reach NVIDIA's driver through the layer, which translates any SPIR-V).
One line per test, fields separated by "|" (a field may be empty):

    name  loader  executable  data-dir  env  args...

data-dir and arguments are relative to the build directory where they were inside it
(prefixed "@/"); env is a comma-separated list of the test's own KEY=VALUE settings (knobs
such as CLDM_HEAP_MEMORY), without those the runner sets itself.

usage: gpu-tests.py BUILD_DIR > tests.list
       gpu-tests.py --executables BUILD_DIR   (the executables those tests run, one path a line)
"""
import json
import os
import subprocess
import sys

RUNNER_SETS = {"OCL_ICD_VENDORS", "POCL_CACHE_DIR", "CLDM_TEST_DATA_DIR", "OPENCL_LAYERS",
               "CLDM_TEST_LOADER", "LD_LIBRARY_PATH", "LSAN_OPTIONS", "ASAN_OPTIONS",
               "UBSAN_OPTIONS", "CLDM_DUMP_DIR"}
# pocl-specific (test_e2e_source compares the layer's answers with pocl's own for plain programs
# and reads sources from the source tree), or no layer by design
SKIP_EXECUTABLES = {"test_layer_pocl", "spirv_e2e", "test_e2e_source"}
DEVICE_VARIANT = "cldm_alloc.cl12.spir64"  # the allocator variant of the PTX route


def rel(path, build):
    path = os.path.realpath(path)
    return "@/" + os.path.relpath(path, build) if path.startswith(build + os.sep) else path


def main():
    args = sys.argv[1:]
    executables = args[:1] == ["--executables"]
    args = args[1:] if executables else args
    if len(args) != 1:
        sys.exit(__doc__)
    build = os.path.realpath(args[0])
    seen = set()
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    vendors = next((l.split("=", 1)[1] for l in cache.splitlines()
                    if l.startswith("CLDM_VENDORS_DIR:")), "")
    data = json.loads(subprocess.check_output(["ctest", "--show-only=json-v1"], cwd=build))
    for t in data["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        env = dict(e.split("=", 1) for e in props.get("ENVIRONMENT", []))
        cmd = t.get("command") or []
        if "e2e" not in labels or not cmd or "slow" in labels:
            continue
        exe = os.path.basename(cmd[0])
        if exe in SKIP_EXECUTABLES or env.get("OCL_ICD_VENDORS") != vendors:
            continue
        device_test = exe.startswith("device_alloc_")
        if "OPENCL_LAYERS" not in env and not (device_test and DEVICE_VARIANT in cmd[1:]):
            continue
        loader = env.get("CLDM_TEST_LOADER", "ocl-icd")
        datadir = rel(env.get("CLDM_TEST_DATA_DIR", build), build)
        own = ",".join(f"{k}={v}" for k, v in env.items() if k not in RUNNER_SETS)
        if executables:
            if cmd[0] not in seen:
                seen.add(cmd[0])
                print(cmd[0])
            continue
        targs = [rel(a, build) if os.path.isabs(a) else a for a in cmd[1:]]
        fields = [t["name"], loader, exe, datadir, own] + targs
        if any("|" in f for f in fields):
            sys.exit(f"gpu-tests.py: test {t['name']}: '|' in a field")
        print("|".join(fields))


if __name__ == "__main__":
    main()
