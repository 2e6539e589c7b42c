"""cl_ext_device_malloc for PyOpenCL: the extension's host entry points for PyOpenCL objects.

The extension is implemented by an OpenCL ICD layer (libcldm-layer.so), enabled through the ICD
loader (OPENCL_LAYERS, a loader manifest, or the cldm-run launcher; or enable() below, before
the first OpenCL call of the process). With the layer enabled PyOpenCL needs nothing else to
build IL programs whose kernels call malloc/free, run them, and see the heap argument hidden
(Kernel.num_args does not count it). What PyOpenCL cannot reach are the extension's own entry
points; this module calls them through ctypes, on the libOpenCL the process has loaded, with
the objects' int_ptr handles (spec/cl_ext_device_malloc.asciidoc, "New API Functions"):

    import pyopencl as cl
    import cldm_device_malloc as cldm

    cldm.set_heap_size(device, 64 << 20)     # clSetDeviceHeapSizeEXT, before the first kernel
    cldm.heap_info(queue)                    # {'size': ..., 'live_allocations': ..., ...}
    cldm.heap_info(queue, "live_allocations")
    cldm.reset_heap(queue).wait()            # clEnqueueResetDeviceHeapEXT

Pure Python (ctypes); no compiled part.
"""

import ctypes
import os

__all__ = [
    "EXTENSION_NAME",
    "HEAP_INFO",
    "CldmError",
    "enable",
    "layer_path",
    "supports",
    "set_heap_size",
    "heap_size",
    "heap_info",
    "reset_heap",
]

EXTENSION_NAME = "cl_ext_device_malloc"

# include/CL/cl_ext_device_malloc.h (provisional values, experimental range)
CL_DEVICE_HEAP_SIZE_EXT = 0x10DA0
HEAP_INFO = {
    "size": 0x10DA1,  # CL_DEVICE_HEAP_INFO_SIZE_EXT
    "bytes_in_use": 0x10DA2,  # CL_DEVICE_HEAP_INFO_BYTES_IN_USE_EXT
    "peak_bytes_held": 0x10DA3,  # CL_DEVICE_HEAP_INFO_PEAK_BYTES_HELD_EXT
    "live_allocations": 0x10DA4,  # CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT
    "failed_allocations": 0x10DA5,  # CL_DEVICE_HEAP_INFO_FAILED_ALLOCATIONS_EXT
    "invalid_frees": 0x10DA6,  # CL_DEVICE_HEAP_INFO_INVALID_FREES_EXT
    "bytes_held": 0x10DAF,  # CL_DEVICE_HEAP_INFO_BYTES_HELD_EXT
}

CL_SUCCESS = 0
_CL_ERRORS = {
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -30: "CL_INVALID_VALUE",
    -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT",
    -36: "CL_INVALID_COMMAND_QUEUE",
    -57: "CL_INVALID_EVENT_WAIT_LIST",
    -59: "CL_INVALID_OPERATION",
}

_c_cl_int = ctypes.c_int32
_c_handle = ctypes.c_void_p
_SetHeapSize = ctypes.CFUNCTYPE(_c_cl_int, _c_handle, ctypes.c_size_t)
_GetHeapInfo = ctypes.CFUNCTYPE(
    _c_cl_int,
    _c_handle,
    ctypes.c_uint32,
    ctypes.c_size_t,
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_size_t),
)
_ResetHeap = ctypes.CFUNCTYPE(
    _c_cl_int, _c_handle, ctypes.c_uint32, ctypes.POINTER(_c_handle), ctypes.POINTER(_c_handle)
)
_FUNCTIONS = {
    "clSetDeviceHeapSizeEXT": _SetHeapSize,
    "clGetDeviceHeapInfoEXT": _GetHeapInfo,
    "clEnqueueResetDeviceHeapEXT": _ResetHeap,
}


class CldmError(RuntimeError):
    """An entry point of the extension failed, or is not available."""

    def __init__(self, what, code=None):
        self.code = code
        if code is not None:
            what = "%s failed: %s (%d)" % (what, _CL_ERRORS.get(code, "OpenCL error"), code)
        super().__init__(what)


def layer_path():
    """Path of the layer library: $CLDM_LAYER, else the installed one (None if unknown)."""
    env = os.environ.get("CLDM_LAYER")
    if env:
        return env
    try:
        from . import _layout  # written by `cmake --install` (python/CMakeLists.txt)
    except ImportError:
        return None
    path = os.path.normpath(os.path.join(os.path.dirname(__file__), _layout.LAYER))
    return path if os.path.exists(path) else None


def enable(layer=None):
    """Enables the layer for this process by adding it to OPENCL_LAYERS (first, not twice).

    Effective only before the process's first OpenCL call (the ICD loaders read OPENCL_LAYERS
    once, when they initialise): call it before pyopencl.get_platforms() and friends. Returns
    the layer's path.
    """
    layer = layer or layer_path()
    if not layer:
        raise CldmError("enable(): no layer given and none installed (set CLDM_LAYER)")
    layer = os.path.realpath(layer)
    if not os.path.exists(layer):
        raise CldmError("enable(): %s does not exist" % layer)
    others = [e for e in os.environ.get("OPENCL_LAYERS", "").split(":") if e]
    others = [e for e in others if os.path.realpath(e) != layer]
    os.environ["OPENCL_LAYERS"] = ":".join([layer] + others)
    return layer


def _loaded_opencl():
    """The libOpenCL the process has loaded (PyOpenCL's), found in /proc/self/maps."""
    path = "libOpenCL.so.1"
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                i = line.find("/")
                if i >= 0 and "libOpenCL.so" in line[i:]:
                    path = line[i:].strip()
                    break
    except OSError:
        pass
    lib = ctypes.CDLL(path)
    lib.clGetExtensionFunctionAddressForPlatform.restype = ctypes.c_void_p
    lib.clGetExtensionFunctionAddressForPlatform.argtypes = [_c_handle, ctypes.c_char_p]
    lib.clGetDeviceInfo.restype = _c_cl_int
    lib.clGetDeviceInfo.argtypes = [
        _c_handle,
        ctypes.c_uint32,
        ctypes.c_size_t,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    return lib


_lib = None
_entry_points = {}


def _opencl():
    global _lib
    if _lib is None:
        _lib = _loaded_opencl()
    return _lib


def _entry_point(platform, name):
    """The extension function `name` of `platform` (a pyopencl.Platform), as a ctypes function."""
    key = (platform.int_ptr, name)
    fn = _entry_points.get(key)
    if fn is None:
        address = _opencl().clGetExtensionFunctionAddressForPlatform(
            platform.int_ptr, name.encode()
        )
        if not address:
            raise CldmError(
                "%s: not available on platform %r (is the cl_ext_device_malloc layer enabled?)"
                % (name, platform.name)
            )
        fn = _FUNCTIONS[name](address)
        _entry_points[key] = fn
    return fn


def supports(device):
    """True if `device` (a pyopencl.Device) reports cl_ext_device_malloc."""
    return EXTENSION_NAME in device.extensions.split()


def set_heap_size(device, nbytes):
    """clSetDeviceHeapSizeEXT: the size of the heaps made for `device` from now on (bytes)."""
    err = _entry_point(device.platform, "clSetDeviceHeapSizeEXT")(device.int_ptr, int(nbytes))
    if err != CL_SUCCESS:
        raise CldmError("clSetDeviceHeapSizeEXT(%d)" % int(nbytes), err)


def heap_size(device):
    """CL_DEVICE_HEAP_SIZE_EXT: the current heap-size setting of `device` (bytes)."""
    value = ctypes.c_size_t(0)
    err = _opencl().clGetDeviceInfo(
        device.int_ptr, CL_DEVICE_HEAP_SIZE_EXT, ctypes.sizeof(value), ctypes.byref(value), None
    )
    if err != CL_SUCCESS:
        raise CldmError("clGetDeviceInfo(CL_DEVICE_HEAP_SIZE_EXT)", err)
    return value.value


def _info_name(name):
    if isinstance(name, int):
        return name
    key = name.lower()
    for prefix in ("cl_device_heap_info_",):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    if key.endswith("_ext"):
        key = key[: -len("_ext")]
    if key not in HEAP_INFO:
        raise ValueError("unknown heap statistic %r (one of %s)" % (name, ", ".join(HEAP_INFO)))
    return HEAP_INFO[key]


def heap_info(queue, name=None):
    """clGetDeviceHeapInfoEXT on the heap of `queue`'s context and device.

    With `name` ('live_allocations', 'CL_DEVICE_HEAP_INFO_LIVE_ALLOCATIONS_EXT' or the enum
    value) returns that statistic as an int; without, a dict of every statistic (HEAP_INFO's
    keys). The statistics are exact once the commands that allocate have completed.
    """
    fn = _entry_point(queue.device.platform, "clGetDeviceHeapInfoEXT")
    names = [name] if name is not None else list(HEAP_INFO)
    result = {}
    for n in names:
        param = _info_name(n)
        value = ctypes.c_uint64(0)
        err = fn(queue.int_ptr, param, ctypes.sizeof(value), ctypes.byref(value), None)
        if err != CL_SUCCESS:
            raise CldmError("clGetDeviceHeapInfoEXT(0x%X)" % param, err)
        result[n] = value.value
    return result[name] if name is not None else result


def reset_heap(queue, wait_for=None):
    """clEnqueueResetDeviceHeapEXT: frees every allocation of the heap of `queue`'s context and
    device, after the events of `wait_for`. Returns the command's pyopencl.Event."""
    import pyopencl

    fn = _entry_point(queue.device.platform, "clEnqueueResetDeviceHeapEXT")
    events = list(wait_for or [])
    wait_list = (_c_handle * len(events))(*[e.int_ptr for e in events]) if events else None
    event = _c_handle(None)
    err = fn(queue.int_ptr, len(events), wait_list, ctypes.byref(event))
    if err != CL_SUCCESS:
        raise CldmError("clEnqueueResetDeviceHeapEXT", err)
    return pyopencl.Event.from_int_ptr(event.value, retain=False)
