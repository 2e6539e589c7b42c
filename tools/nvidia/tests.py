#!/usr/bin/env python3
"""tools/nvidia/tests.py — the end-to-end tests of a build directory as a list that the pack's
run-tests.sh (tools/nvidia/run-tests.sh) runs on a machine without CMake (an NVIDIA machine,
from the pack tools/nvidia/pack.sh writes).

It reads `ctest --show-only=json-v1` and keeps every end-to-end test (label e2e) that runs real
kernels through the layer on the default driver (not the stub ICD, not pocl-specific checks),
plus the device allocator's tests (tests/device) of the two variants the PTX route uses:
cl12 (GPUs before compute capability 8.0) and nv (the NVPTX allocator; its tests are the cl12
ones run on alloc_test.cldm_alloc.nv.spir64.spv, which pocl cannot run, so ctest has none of
its own). They set the heap argument by hand and reach NVIDIA's driver through the layer,
which translates any SPIR-V.
One line per test, fields separated by "|" (a field may be empty):

    name  loader  executable  data-dir  env  args...

data-dir and arguments are relative to the build directory where they were inside it
(prefixed "@/"); env is a comma-separated list of the test's own KEY=VALUE settings (knobs
such as CLDM_HEAP_MEMORY), without those the runner sets itself.

usage: tests.py BUILD_DIR > tests.list
       tests.py --executables BUILD_DIR   (the executables those tests run, one path a line)
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
DEVICE_VARIANT = "cldm_alloc.cl12.spir64"  # registered with ctest (pocl runs it)
DEVICE_VARIANTS_GPU = {"cl12": "cldm_alloc.cl12.spir64", "nv": "cldm_alloc.nv.spir64"}


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
        if "e2e" not in labels or not cmd:
            continue
        exe = os.path.basename(cmd[0])
        if exe in SKIP_EXECUTABLES or env.get("OCL_ICD_VENDORS") != vendors:
            continue
        # installed-tree and Python tests need what only the build machine has
        if "install" in labels or not os.path.realpath(cmd[0]).startswith(build + os.sep):
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
        variants = [("", targs)]
        if device_test:
            variants = [(v, [m if a == DEVICE_VARIANT else a for a in targs])
                        for v, m in DEVICE_VARIANTS_GPU.items()]
        for v, vargs in variants:
            name = t["name"].replace("_cl12_", f"_{v}_").replace("stress_cl12", f"stress_{v}")
            fields = [name, loader, exe, datadir, own] + vargs
            if any("|" in f for f in fields):
                sys.exit(f"tests.py: test {t['name']}: '|' in a field")
            print("|".join(fields))


if __name__ == "__main__":
    main()
