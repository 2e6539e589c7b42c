# tools/nvidia/env.sh — shell functions that the scripts of a pack (tools/nvidia/pack.sh) source,
# copied into it as env.sh: the environment a pack's programs run in on an NVIDIA machine. POSIX sh.
#
# The machine's own libOpenCL.so.1 is not used: with the CUDA toolkit installed, the dynamic
# linker finds CUDA's first, and that loader ignores OPENCL_LAYERS (the layer would silently
# not load). The pack carries two layer-capable loaders (lib/ocl-icd: Debian 12's ocl-icd,
# lib/khronos: the Khronos OpenCL-ICD-Loader), and its chosen one comes first in
# LD_LIBRARY_PATH. NVIDIA's ICD, not registered in /etc/OpenCL/vendors on such machines, is
# named in a vendors directory of one .icd file (OCL_ICD_VENDORS), which both loaders read;
# ocl-icd 2.3.1 finds no platform through OCL_ICD_FILENAMES, and the Khronos loader adds those
# to the vendors it finds, so OCL_ICD_FILENAMES is unset.

# The ICD library the pack's programs use unless told otherwise.
cldm_pack_icd=libnvidia-opencl.so.1

# cldm_pack_fallbacks ROOT DIR: links into DIR the libraries of ROOT/lib/fallback/ that the
# machine lacks (ldconfig -p), so that newer system copies win; prints DIR.
cldm_pack_fallbacks() {
  mkdir -p "$2"
  for f in "$1"/lib/fallback/*; do
    [ -e "$f" ] || continue
    so=$(basename "$f")
    ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$so (.*x86-64" || ln -sf "$f" "$2/$so"
  done
  echo "$2"
}

# cldm_pack_vendors DIR [ICD]: makes DIR a vendors directory naming one ICD library, ICD (a
# name the dynamic linker finds or a path; default NVIDIA's), and unsets OCL_ICD_FILENAMES.
cldm_pack_vendors() {
  mkdir -p "$1"
  rm -f "$1"/*.icd
  echo "${2:-$cldm_pack_icd}" > "$1/driver.icd"
  unset OCL_ICD_FILENAMES
}

# cldm_pack_env ROOT WORK [LOADER [ICD]]: exports the environment the pack ROOT's programs run
# in, with scratch space under WORK: the pack's LOADER (ocl-icd, the default, or khronos) first
# in LD_LIBRARY_PATH, then the pack's libraries and the fallbacks the machine lacks; ICD alone
# as the driver (cldm_pack_vendors); libclc for the PTX backend (CLDM_LIBCLC_DIR) and a PTX
# cache of its own (CLDM_CACHE_DIR). The layer is not enabled: OPENCL_LAYERS is the caller's.
cldm_pack_env() {
  case ${3:-ocl-icd} in ocl-icd | khronos) ;; *)
    echo "env.sh: loader ocl-icd or khronos, not '$3'" >&2
    return 2
    ;;
  esac
  cldm_pack_vendors "$2/vendors" "${4:-}"
  LD_LIBRARY_PATH=$1/lib/${3:-ocl-icd}:$1/lib:$(cldm_pack_fallbacks "$1" "$2/fallback")
  OCL_ICD_VENDORS=$2/vendors CLDM_LIBCLC_DIR=$1/share/clc CLDM_CACHE_DIR=$2/ptx-cache
  export LD_LIBRARY_PATH OCL_ICD_VENDORS CLDM_LIBCLC_DIR CLDM_CACHE_DIR
  mkdir -p "$CLDM_CACHE_DIR"
}
