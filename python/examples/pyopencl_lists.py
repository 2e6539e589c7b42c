#!/usr/bin/env python3
"""pyopencl_lists.py — the README demo in PyOpenCL: malloc in kernels, from Python.

Runs the kernels of examples/kernels/lists.cl (compiled to SPIR-V: build/examples/spv/lists.spv
in a build tree): every work-item mallocs a linked list of its own length, a later kernel sums
and frees every list, the host checks every sum and prints the heap statistics. Heap size and
statistics come from cldm_device_malloc; everything else is plain PyOpenCL (the program is an
IL program, the heap argument is hidden from Kernel.num_args and set_args).

    cldm-run python3 pyopencl_lists.py lists.spv           # or OPENCL_LAYERS=.../libcldm-layer.so

Exit status 0 only if every check passed.
"""

import sys

import numpy as np
import pyopencl as cl

import cldm_device_malloc as cldm

ITEMS = 4096
MAX_LEN = 24


def find_device():
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if cldm.supports(device):
                return device
    sys.exit("no device reports cl_ext_device_malloc: is the layer enabled (OPENCL_LAYERS)?")


def main(spv_path):
    device = find_device()
    print("device: %s (%s)" % (device.name, device.platform.name))
    cldm.set_heap_size(device, 32 << 20)  # before the device's first allocating kernel
    ctx = cl.Context([device])
    queue = cl.CommandQueue(ctx, device)
    with open(spv_path, "rb") as f:
        program = cl.Program(ctx, f.read()).build()  # bytes holding SPIR-V: an IL program
    build, consume = program.build_lists, program.consume_lists
    print("build_lists takes %d arguments (the heap argument is hidden)" % build.num_args)

    mf = cl.mem_flags
    heads = cl.Buffer(ctx, mf.READ_WRITE, ITEMS * 8)
    sums = cl.Buffer(ctx, mf.READ_WRITE, ITEMS * 8)
    lengths = cl.Buffer(ctx, mf.READ_WRITE, ITEMS * 4)
    failed = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=np.zeros(1, np.uint32))

    build(queue, (ITEMS,), None, heads, np.uint32(MAX_LEN), failed)
    queue.finish()
    print("after build_lists:   %s" % cldm.heap_info(queue))
    consume(queue, (ITEMS,), None, heads, sums, lengths)
    queue.finish()
    print("after consume_lists: %s" % cldm.heap_info(queue))

    s = np.empty(ITEMS, np.uint64)
    n = np.empty(ITEMS, np.uint32)
    nfailed = np.empty(1, np.uint32)
    cl.enqueue_copy(queue, s, sums)
    cl.enqueue_copy(queue, n, lengths)
    cl.enqueue_copy(queue, nfailed, failed)
    i = np.arange(ITEMS, dtype=np.uint64)
    want_len = 1 + i % MAX_LEN
    want_sum = want_len * i + want_len * (want_len - 1) // 2
    ok = nfailed[0] == 0 and np.array_equal(n, want_len) and np.array_equal(s, want_sum)
    print(
        "%d work-items built %d list nodes with malloc, a later kernel summed and freed them: %s"
        % (ITEMS, int(n.sum()), "all sums and lengths verified" if ok else "MISMATCH")
    )

    # lists left alive are freed at once by a heap reset
    build(queue, (ITEMS,), None, heads, np.uint32(MAX_LEN), failed)
    queue.finish()
    live = cldm.heap_info(queue, "live_allocations")
    cldm.reset_heap(queue).wait()
    after = cldm.heap_info(queue, "live_allocations")
    print("heap reset: %d live allocations before, %d after" % (live, after))
    ok = ok and live == int(want_len.sum()) and after == 0
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: pyopencl_lists.py LISTS.spv")
    sys.exit(main(sys.argv[1]))
