#!/usr/bin/env python3
"""test_pyopencl.py — PyOpenCL through the layer, with the cldm_device_malloc module.

End-to-end on pocl 6.0 (tests/python/CMakeLists.txt registers it under both loaders, with the
module from the source tree and from an installed tree): an IL program built from one of the
project's SPIR-V kernels (tests/e2e/kernels/alloc_basic.cl), Kernel.num_args and set_args
without the hidden heap argument, allocating kernels run and checked, heap size set and read,
heap statistics (as a dict and by name), a heap reset, errors raised as CldmError; and
enable(), which turns the layer on from Python before the first OpenCL call.

usage: test_pyopencl.py ALLOC_BASIC.spv [unittest options]
Environment: CLDM_TEST_LOADER (which loader must be loaded, as tests/common/cldm_test_util.h
checks), CLDM_TEST_LAYER (the layer, for the enable() cases, run in child processes with
OPENCL_LAYERS unset).
"""

import os
import subprocess
import sys
import unittest

import numpy as np
import pyopencl as cl

import cldm_device_malloc as cldm

SPV = None
ITEMS = 512
WORDS = 24
HEAP = 16 << 20


def pattern(item, k):
    return (item * 7919 + k * 31 + 1) & 0xFFFFFFFF


def loaded_loader():
    with open("/proc/self/maps") as maps:
        for line in maps:
            i = line.find("/")
            if i >= 0 and "libOpenCL.so" in line[i:]:
                return line[i:].strip()
    return None


def find_device():
    for platform in cl.get_platforms():
        for device in platform.get_devices():
            if cldm.supports(device):
                return device
    return None


class PyOpenCLThroughTheLayer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.device = find_device()
        if cls.device is None:
            raise AssertionError("no device reports cl_ext_device_malloc (layer not enabled?)")
        # before the device's first allocating kernel (spec 1.2)
        cldm.set_heap_size(cls.device, HEAP)
        cls.ctx = cl.Context([cls.device])
        cls.queue = cl.CommandQueue(cls.ctx, cls.device)
        with open(SPV, "rb") as f:
            cls.il = f.read()
        cls.prog = cl.Program(cls.ctx, cls.il).build()

    def run_kernel(self, kernel, items, *args):
        kernel(self.queue, (items,), None, *args)
        self.queue.finish()

    def test_00_loader(self):
        want = os.environ.get("CLDM_TEST_LOADER")
        path = loaded_loader()
        self.assertIsNotNone(path, "no libOpenCL mapped")
        if want:
            llp = os.environ.get("LD_LIBRARY_PATH", "")
            first = llp.split(":")[0] if llp else ""
            from_llp = bool(first) and path.startswith(first + "/")
            self.assertEqual(from_llp, want == "khronos", "want %s, loaded %s" % (want, path))

    def test_il_program(self):
        # a program made from IL (clCreateProgramWithIL), built, with the module's kernels
        self.assertEqual(
            self.prog.get_build_info(self.device, cl.program_build_info.STATUS),
            0,  # CL_BUILD_SUCCESS
        )
        names = set(self.prog.get_info(cl.program_info.KERNEL_NAMES).split(";"))
        want = {"fill", "fill_again", "check", "release", "variants", "plain", "many_args"}
        self.assertTrue(want <= names, names)

    def test_hidden_argument(self):
        k = self.prog.many_args
        self.assertEqual(k.num_args, 9)
        self.assertEqual(k.get_info(cl.kernel_info.NUM_ARGS), 9)
        self.assertEqual(self.prog.fill.num_args, 2)
        self.assertEqual(self.prog.plain.num_args, 1)
        ptrs = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, ITEMS * 8)
        # a tenth argument (where the heap is) is refused as for any kernel of nine arguments
        with self.assertRaises(cl.Error):
            k.set_arg(9, ptrs)
        # PyOpenCL generates set_args from num_args: exactly the user's two arguments
        with self.assertRaises(TypeError):
            self.prog.fill.set_args(ptrs, np.uint32(WORDS), ptrs)
        self.prog.fill.set_args(ptrs, np.uint32(WORDS))

    def test_heap_size(self):
        self.assertEqual(cldm.heap_size(self.device), HEAP)
        # the usable size: the setting rounded down to the allocator's page (spec 1.2)
        size = cldm.heap_info(self.queue, "size")
        self.assertLessEqual(size, HEAP)
        self.assertGreater(size, HEAP - (64 << 10))

    def test_allocate_check_free(self):
        live0 = cldm.heap_info(self.queue, "live_allocations")
        ptrs = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, ITEMS * 8)
        bad = cl.Buffer(
            self.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.zeros(1, np.uint32)
        )
        self.run_kernel(self.prog.fill, ITEMS, ptrs, np.uint32(WORDS))
        info = cldm.heap_info(self.queue)
        self.assertEqual(set(info), set(cldm.HEAP_INFO))
        self.assertEqual(info["live_allocations"], live0 + ITEMS)
        requested = sum((i % 13 + 1) * WORDS * 4 for i in range(ITEMS))
        self.assertGreaterEqual(info["bytes_in_use"], requested)
        self.assertGreaterEqual(info["bytes_held"], info["bytes_in_use"])
        self.assertGreaterEqual(info["peak_bytes_held"], info["bytes_held"])
        self.assertEqual(info["failed_allocations"], 0)
        # the pointers are device addresses; a kernel that does not allocate reads the data
        self.run_kernel(self.prog.check, ITEMS, ptrs, np.uint32(WORDS), np.uint32(1), bad)
        nbad = np.empty(1, np.uint32)
        cl.enqueue_copy(self.queue, nbad, bad)
        self.assertEqual(nbad[0], 0)
        self.run_kernel(self.prog.release, ITEMS, ptrs)
        self.assertEqual(cldm.heap_info(self.queue, "live_allocations"), live0)
        self.assertEqual(cldm.heap_info(self.queue, "CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT"), 0)

    def test_calloc_realloc_aligned(self):
        results = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, ITEMS * 4)
        self.run_kernel(self.prog.variants, ITEMS, results)
        r = np.empty(ITEMS, np.uint32)
        cl.enqueue_copy(self.queue, r, results)
        self.assertEqual(np.count_nonzero(r), 0, "failure bits %s" % r[r != 0][:8])

    def test_reset(self):
        ptrs = cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, ITEMS * 8)
        self.run_kernel(self.prog.fill_again, ITEMS, ptrs, np.uint32(WORDS))
        self.assertGreaterEqual(cldm.heap_info(self.queue, "live_allocations"), ITEMS)
        # after an event of the queue: the wait list reaches the layer
        marker = cl.enqueue_marker(self.queue)
        event = cldm.reset_heap(self.queue, wait_for=[marker])
        self.assertIsInstance(event, cl.Event)
        event.wait()
        self.assertEqual(event.command_execution_status, cl.command_execution_status.COMPLETE)
        self.assertEqual(cldm.heap_info(self.queue, "live_allocations"), 0)
        self.assertEqual(cldm.heap_info(self.queue, "bytes_in_use"), 0)
        # the heap works after a reset
        self.run_kernel(self.prog.fill_again, ITEMS, ptrs, np.uint32(WORDS))
        self.assertEqual(cldm.heap_info(self.queue, cldm.HEAP_INFO["live_allocations"]), ITEMS)
        cldm.reset_heap(self.queue).wait()
        self.assertEqual(cldm.heap_info(self.queue, "live_allocations"), 0)

    def test_errors(self):
        with self.assertRaises(cldm.CldmError) as cm:
            cldm.set_heap_size(self.device, 1000)  # below CL_DEVICE_HEAP_SIZE_MIN_EXT
        self.assertEqual(cm.exception.code, -30)  # CL_INVALID_VALUE
        with self.assertRaises(ValueError):
            cldm.heap_info(self.queue, "no_such_statistic")


def child(code, env_extra, unset=("OPENCL_LAYERS",)):
    env = dict(os.environ)
    for k in unset:
        env.pop(k, None)
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


FIND = """
import pyopencl as cl, cldm_device_malloc as cldm
print(sum(cldm.supports(d) for p in cl.get_platforms() for d in p.get_devices()))
"""


class Enable(unittest.TestCase):
    def setUp(self):
        self.layer = os.environ.get("CLDM_TEST_LAYER")
        if not self.layer:
            self.skipTest("CLDM_TEST_LAYER not set")

    def test_without_the_layer_no_device_has_it(self):
        r = child(FIND, {}, unset=("OPENCL_LAYERS", "CLDM_LAYER"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "0")

    def test_enable_before_first_call(self):
        code = "import cldm_device_malloc as cldm, os\ncldm.enable(%r)\n" % self.layer + FIND
        code += "print(os.environ['OPENCL_LAYERS'])\n"
        r = child(code, {"OPENCL_LAYERS": "%s:/nonexistent/other-layer.so" % self.layer})
        self.assertEqual(r.returncode, 0, r.stderr)
        count, layers = r.stdout.split()
        self.assertGreaterEqual(int(count), 1)
        # ours first, not twice, the others kept
        self.assertEqual(layers, os.path.realpath(self.layer) + ":/nonexistent/other-layer.so")

    def test_enable_from_cldm_layer(self):
        code = "import cldm_device_malloc as cldm\ncldm.enable()\n" + FIND
        r = child(code, {"CLDM_LAYER": self.layer})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreaterEqual(int(r.stdout.strip()), 1)

    def test_installed_layout(self):
        # an installed module names the installed layer (python/CMakeLists.txt, _layout.py)
        if not os.environ.get("CLDM_TEST_INSTALLED"):
            self.skipTest("the module is not an installed one")
        code = "import cldm_device_malloc as cldm\nprint(cldm.layer_path())\n"
        r = child(code, {}, unset=("OPENCL_LAYERS", "CLDM_LAYER"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.path.realpath(r.stdout.strip()), os.path.realpath(self.layer))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    SPV = sys.argv.pop(1)
    unittest.main(verbosity=2)
