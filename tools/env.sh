# tools/env.sh — sourced by the other scripts: where the dependency cache lives and how to
# reach pocl 6.0 and the two ICD loaders. Sets (and exports):
#   CLDM_DEPS_DIR        cache root (default /var/cache/cldm-deps), outside the repo
#   CLDM_POCL_PREFIX     pocl install prefix, keyed by pocl version and architecture
#   CLDM_VENDORS_DIR     ICD vendors dir naming only our pocl (use as OCL_ICD_VENDORS)
#   CLDM_KHRONOS_LIBDIR  directory holding the Khronos loader's libOpenCL.so.1
#   CLDM_PYOPENCL_PYTHONPATH  PYTHONPATH entry holding Debian's pyopencl, unpacked (tests/python)
CLDM_POCL_VERSION=${CLDM_POCL_VERSION:-6.0-6}
CLDM_KHRONOS_VERSION=${CLDM_KHRONOS_VERSION:-0~20250722-2}
CLDM_DEPS_DIR=${CLDM_DEPS_DIR:-/var/cache/cldm-deps}
CLDM_POCL_PREFIX="$CLDM_DEPS_DIR/pocl-$CLDM_POCL_VERSION-$(uname -m)"
CLDM_VENDORS_DIR="$CLDM_POCL_PREFIX/vendors"
CLDM_KHRONOS_DIR="$CLDM_DEPS_DIR/khronos-icd-loader-$CLDM_KHRONOS_VERSION-$(uname -m)"
CLDM_KHRONOS_LIBDIR="$CLDM_KHRONOS_DIR/usr/lib/$(uname -m)-linux-gnu"
CLDM_PYOPENCL_VERSION=${CLDM_PYOPENCL_VERSION:-2022.3.1-2.1}
CLDM_PYOPENCL_DIR="$CLDM_DEPS_DIR/pyopencl-$CLDM_PYOPENCL_VERSION-$(uname -m)"
CLDM_PYOPENCL_PYTHONPATH="$CLDM_PYOPENCL_DIR/usr/lib/python3/dist-packages"
export CLDM_DEPS_DIR CLDM_POCL_PREFIX CLDM_VENDORS_DIR CLDM_KHRONOS_DIR CLDM_KHRONOS_LIBDIR \
  CLDM_POCL_VERSION CLDM_KHRONOS_VERSION CLDM_PYOPENCL_VERSION CLDM_PYOPENCL_DIR \
  CLDM_PYOPENCL_PYTHONPATH
