/*
 * layer_device.c — per-device state: whether the device supports the extension (it accepts
 * SPIR-V, spec 1.1), its heap-size setting and how many live heaps it has (spec 1.2).
 *
 * Entries are created on first use and kept for the life of the process (root devices are
 * never destroyed; a released sub-device's entry is harmless). One mutex guards the table;
 * driver queries run outside it. Other modules read an entry through one copy taken under
 * the lock (cldm_device_snapshot).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cldm_device.h"
#include "cldm_layer.h"

/* A device's entry: the state callers get a copy of, and the live-heap count. */
typedef struct cldm_device_entry {
  cl_device_id device;
  unsigned live_heaps; /* heaps of this device in contexts not yet released */
  cldm_device_state state;
} cldm_device_entry;

static pthread_mutex_t cldm_devices_lock = PTHREAD_MUTEX_INITIALIZER;
static cldm_device_entry *cldm_devices;
static size_t cldm_devices_len, cldm_devices_cap;

static cl_int cldm_device_query(const void *obj, cl_uint name, size_t size, void *value,
                                size_t *size_ret) {
  return cldm_next->clGetDeviceInfo((cl_device_id)obj, name, size, value, size_ret);
}

/* 1 if a cl_name_version array names `name`. */
static int cldm_device_versions_have(const cl_name_version *v, size_t bytes, const char *name) {
  for (size_t i = 0; v && i < bytes / sizeof(*v); i++)
    if (!strcmp(v[i].name, name))
      return 1;
  return 0;
}

/* What the allocator may use on this device (picks the module variant, cldm_device.h). */
static void cldm_device_probe_features(cl_device_id device, cldm_device_state *st) {
  void *ext = NULL, *cfeat = NULL, *cver = NULL;
  size_t ext_size = 0, cfeat_size = 0, cver_size = 0;
  cldm_info_fetch(cldm_device_query, device, CL_DEVICE_EXTENSIONS, &ext, &ext_size);
  cldm_info_fetch(cldm_device_query, device, CL_DEVICE_OPENCL_C_FEATURES, &cfeat, &cfeat_size);
  cldm_info_fetch(cldm_device_query, device, CL_DEVICE_OPENCL_C_VERSION, &cver, &cver_size);
  const char *e = ext ? ext : "";
  const cl_name_version *f = cfeat;
  /* OpenCL C 2.x has all of it; 3.0 devices list optional features. */
  int c2 = cver && !strncmp(cver, "OpenCL C 2.", 11);
  cl_device_atomic_capabilities caps = 0;
  if (cldm_next->clGetDeviceInfo(device, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, sizeof(caps), &caps,
                                 NULL) != CL_SUCCESS)
    caps = 0;
  int acq_rel_device =
      (caps & CL_DEVICE_ATOMIC_ORDER_ACQ_REL) && (caps & CL_DEVICE_ATOMIC_SCOPE_DEVICE);
  if (c2 || acq_rel_device)
    st->features |= CLDM_DEVICE_FEATURE_CL20_ATOMICS;
  if (c2 || cldm_device_versions_have(f, cfeat_size, "__opencl_c_generic_address_space"))
    st->features |= CLDM_DEVICE_FEATURE_GENERIC_AS;
  if (strstr(e, "cl_khr_int64_base_atomics") && strstr(e, "cl_khr_int64_extended_atomics"))
    st->features |= CLDM_DEVICE_FEATURE_INT64_ATOMICS;
  if (strstr(e, "cl_khr_subgroups") ||
      cldm_device_versions_have(f, cfeat_size, "__opencl_c_subgroups"))
    st->features |= CLDM_DEVICE_FEATURE_SUBGROUPS;
  cl_device_svm_capabilities svm = 0;
  if (cldm_next->clGetDeviceInfo(device, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) ==
      CL_SUCCESS)
    st->svm_coarse = (svm & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER) != 0;
  cldm_next->clGetDeviceInfo(device, CL_DEVICE_ADDRESS_BITS, sizeof(st->address_bits),
                             &st->address_bits, NULL);
  free(ext);
  free(cfeat);
  free(cver);
}

/* An NVIDIA device without IL that the PTX route can serve: NVIDIA's vendor id, a compute
 * capability the driver reports (cl_nv_device_attribute_query), the route not switched off
 * (CLDM_NVIDIA=off) and the PTX backend loadable. Fills the compute capability. */
static int cldm_device_probe_nvidia(cl_device_id device, cldm_device_state *st) {
  cl_uint vendor = 0, major = 0, minor = 0;
  if (cldm_next->clGetDeviceInfo(device, CL_DEVICE_VENDOR_ID, sizeof(vendor), &vendor, NULL) !=
          CL_SUCCESS ||
      vendor != CLDM_NVIDIA_VENDOR_ID || !cldm_config_nvidia())
    return 0;
  if (cldm_next->clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof(major),
                                 &major, NULL) != CL_SUCCESS ||
      cldm_next->clGetDeviceInfo(device, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof(minor),
                                 &minor, NULL) != CL_SUCCESS ||
      major == 0) {
    cldm_log(CLDM_LOG_INFO, "NVIDIA device %p reports no compute capability: not served",
             (void *)device);
    return 0;
  }
  if (!cldm_ptx_available())
    return 0;
  st->cc_major = major;
  st->cc_minor = minor;
  return 1;
}

/* Finds the entry; caller holds the lock. */
static cldm_device_entry *cldm_device_find(cl_device_id device) {
  for (size_t i = 0; i < cldm_devices_len; i++)
    if (cldm_devices[i].device == device)
      return &cldm_devices[i];
  return NULL;
}

/* The state of a device the layer knows nothing of: not supported, the default heap size. */
static void cldm_device_state_unknown(cldm_device_state *st) {
  memset(st, 0, sizeof(*st));
  st->heap_size = cldm_config_default_heap_size();
}

/* Queries the driver and fills `e` (no lock held). Returns CL_SUCCESS or the driver's error
 * for an invalid device. */
static cl_int cldm_device_probe(cl_device_id device, cldm_device_entry *e) {
  if (!device || !CLDM_NEXT_HAS(clGetDeviceInfo))
    return CL_INVALID_DEVICE;
  cl_device_type type;
  cl_int err = cldm_next->clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
  if (err != CL_SUCCESS)
    return err;
  memset(e, 0, sizeof(*e));
  e->device = device;
  cldm_device_state *st = &e->state;
  cldm_device_state_unknown(st);
  cldm_next->clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(st->max_alloc),
                             &st->max_alloc, NULL);
  void *il = NULL;
  size_t il_size = 0;
  /* CL_DEVICE_IL_VERSION (OpenCL 2.1) and CL_DEVICE_IL_VERSION_KHR share one value. */
  if (cldm_info_fetch(cldm_device_query, device, CL_DEVICE_IL_VERSION, &il, &il_size) ==
          CL_SUCCESS &&
      strstr((const char *)il, "SPIR-V"))
    st->route = CLDM_ROUTE_SPIRV;
  else if (cldm_device_probe_nvidia(device, st))
    st->route = CLDM_ROUTE_PTX;
  free(il);
  if (st->route != CLDM_ROUTE_NONE)
    cldm_device_probe_features(device, st);
  /* every allocator variant uses 64-bit atomics (cl_khr_int64_base_atomics and, for OpenCL C
   * 2.0 atomic types, cl_khr_int64_extended_atomics; spec 1.1) */
  if (st->route != CLDM_ROUTE_NONE && !(st->features & CLDM_DEVICE_FEATURE_INT64_ATOMICS)) {
    cldm_log(CLDM_LOG_INFO,
             "device %p takes SPIR-V but lacks cl_khr_int64_base/extended_atomics: not "
             "served",
             (void *)device);
    st->route = CLDM_ROUTE_NONE;
  }
  /* the PTX route's own allocator from compute capability 8.0 (match.any, redux.sync) */
  if (st->route == CLDM_ROUTE_PTX && st->cc_major >= 8)
    st->features |= CLDM_DEVICE_FEATURE_TARGET_PTX;
  st->supported = st->route != CLDM_ROUTE_NONE;
  return CL_SUCCESS;
}

/* Makes sure `device` has an entry (probing the driver the first time). Entries are only
 * read or written under the lock, through cldm_device_find: realloc may move them. */
static cl_int cldm_device_ensure(cl_device_id device) {
  pthread_mutex_lock(&cldm_devices_lock);
  int known = cldm_device_find(device) != NULL;
  pthread_mutex_unlock(&cldm_devices_lock);
  if (known)
    return CL_SUCCESS;
  cldm_device_entry fresh;
  cl_int err = cldm_device_probe(device, &fresh);
  if (err != CL_SUCCESS)
    return err;
  pthread_mutex_lock(&cldm_devices_lock);
  if (!cldm_device_find(device)) { /* another thread may have added it meanwhile */
    if (cldm_devices_len == cldm_devices_cap) {
      size_t cap = cldm_devices_cap ? 2 * cldm_devices_cap : 8;
      cldm_device_entry *grown = realloc(cldm_devices, cap * sizeof(*grown));
      if (!grown)
        err = CL_OUT_OF_HOST_MEMORY;
      else {
        cldm_devices = grown;
        cldm_devices_cap = cap;
      }
    }
    if (err == CL_SUCCESS)
      cldm_devices[cldm_devices_len++] = fresh;
  }
  pthread_mutex_unlock(&cldm_devices_lock);
  return err;
}

cl_int cldm_device_snapshot(cl_device_id device, cldm_device_state *state) {
  cl_int err = cldm_device_ensure(device);
  if (err != CL_SUCCESS) {
    cldm_device_state_unknown(state);
    return err < 0 ? err : CL_INVALID_DEVICE;
  }
  pthread_mutex_lock(&cldm_devices_lock);
  *state = cldm_device_find(device)->state;
  pthread_mutex_unlock(&cldm_devices_lock);
  return CL_SUCCESS;
}

cl_int cldm_device_set_heap_size(cl_device_id device, size_t size) {
  cl_int err = cldm_device_ensure(device);
  if (err != CL_SUCCESS)
    return CL_INVALID_DEVICE;
  pthread_mutex_lock(&cldm_devices_lock);
  cldm_device_entry *e = cldm_device_find(device);
  cldm_device_state *st = &e->state;
  if (!st->supported)
    err = CL_INVALID_DEVICE;
  else if (size == 0 || size < CL_DEVICE_HEAP_SIZE_MIN_EXT ||
           (st->max_alloc && size > st->max_alloc) || size > cldm_heap_max_size())
    err = CL_INVALID_VALUE;
  else if (e->live_heaps > 0)
    err = CL_INVALID_OPERATION;
  else
    st->heap_size = size;
  pthread_mutex_unlock(&cldm_devices_lock);
  return err;
}

void cldm_device_heap_created(cl_device_id device) {
  if (cldm_device_ensure(device) != CL_SUCCESS)
    return;
  pthread_mutex_lock(&cldm_devices_lock);
  cldm_device_find(device)->live_heaps++;
  pthread_mutex_unlock(&cldm_devices_lock);
}

void cldm_device_heap_released(cl_device_id device) {
  pthread_mutex_lock(&cldm_devices_lock);
  cldm_device_entry *e = cldm_device_find(device);
  if (e && e->live_heaps > 0)
    e->live_heaps--;
  pthread_mutex_unlock(&cldm_devices_lock);
}

cldm_device_route cldm_device_platform_route(cl_platform_id platform) {
  if (!CLDM_NEXT_HAS(clGetDeviceIDs))
    return CLDM_ROUTE_NONE;
  cl_uint n = 0;
  if (cldm_next->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n) != CL_SUCCESS || !n)
    return CLDM_ROUTE_NONE;
  cl_device_id *devs = calloc(n, sizeof(*devs));
  if (!devs)
    return CLDM_ROUTE_NONE;
  cldm_device_route route = CLDM_ROUTE_NONE;
  if (cldm_next->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, devs, NULL) == CL_SUCCESS)
    for (cl_uint i = 0; i < n && route == CLDM_ROUTE_NONE; i++) {
      cldm_device_state st;
      if (cldm_device_snapshot(devs[i], &st) == CL_SUCCESS)
        route = st.route;
    }
  free(devs);
  return route;
}

/* Contexts hold devices of one platform, so of one route; without a served device the layer
 * stays out of the way. */
cldm_device_route cldm_device_context_route(cl_context context, unsigned *features) {
  void *devs = NULL;
  size_t size = 0;
  if (!CLDM_NEXT_HAS(clGetContextInfo) ||
      cldm_info_fetch(cldm_info_context_query, context, CL_CONTEXT_DEVICES, &devs, &size) !=
          CL_SUCCESS)
    return CLDM_ROUTE_NONE;
  cldm_device_route route = CLDM_ROUTE_NONE;
  unsigned all = ~0u;
  for (size_t i = 0; i < size / sizeof(cl_device_id); i++) {
    cldm_device_state st;
    if (cldm_device_snapshot(((cl_device_id *)devs)[i], &st) == CL_SUCCESS && st.supported) {
      all &= st.features;
      if (route == CLDM_ROUTE_NONE || st.route == CLDM_ROUTE_PTX)
        route = st.route;
    }
  }
  free(devs);
  *features = route != CLDM_ROUTE_NONE ? all : 0;
  return route;
}

void cldm_device_compute_capabilities(cl_uint n, const cl_device_id *devices, unsigned *cc) {
  for (cl_uint i = 0; i < n; i++) {
    cldm_device_state st;
    cc[i] = cldm_device_snapshot(devices[i], &st) == CL_SUCCESS && st.route == CLDM_ROUTE_PTX
                ? st.cc_major * 100u + st.cc_minor
                : 0;
  }
}
