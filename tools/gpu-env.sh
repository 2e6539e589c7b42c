# tools/gpu-env.sh — shell functions the scripts of a pack (tools/gpu-pack.sh) source, copied
# into it as env.sh: the pack's fallback libraries and an ICD vendors directory with NVIDIA's
# driver only. POSIX sh.

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

# cldm_session_unpack PACK OUT: for the session scripts, which run from the repository
# (tools/gpu-*-session.sh): unpacks PACK into a scratch directory, removed when the script exits
# ($work), and sets $p (the pack's root) and $res (OUT/res, created), where it writes the GPU's
# name, driver and memory (res/gpu.txt).
cldm_session_unpack() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  tar -xJf "$1" -C "$work"
  p=$work/cldm-gpu-pack res=$2/res
  mkdir -p "$res"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$res/gpu.txt" 2>&1
}

# cldm_pack_vendors DIR: makes DIR a vendors directory (OCL_ICD_VENDORS, read by both loaders)
# naming NVIDIA's ICD only (CLDM_GPU_RUN_ICD names another, to try a pack with pocl), and
# unsets OCL_ICD_FILENAMES, which would override it.
cldm_pack_vendors() {
  mkdir -p "$1"
  echo "${CLDM_GPU_RUN_ICD:-libnvidia-opencl.so.1}" > "$1/nvidia.icd"
  unset OCL_ICD_FILENAMES
}

# cldm_pack_env ROOT WORK: the environment the pack ROOT's programs run in, with scratch space
# under WORK: the pack's ocl-icd first, its libraries, the fallbacks the machine lacks,
# NVIDIA's ICD only, libclc for the PTX backend and a PTX cache of its own (exported).
cldm_pack_env() {
  cldm_pack_vendors "$2/vendors"
  LD_LIBRARY_PATH=$1/lib/ocl-icd:$1/lib:$(cldm_pack_fallbacks "$1" "$2/fallback")
  OCL_ICD_VENDORS=$2/vendors CLDM_LIBCLC_DIR=$1/share/clc CLDM_CACHE_DIR=$2/ptx-cache
  export LD_LIBRARY_PATH OCL_ICD_VENDORS CLDM_LIBCLC_DIR CLDM_CACHE_DIR
  mkdir -p "$CLDM_CACHE_DIR"
}
