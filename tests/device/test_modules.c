/*
 * test_modules.c — the embedded allocator modules keep the contract of cldm_device.h that the
 * lowering engine links against: SPIR-V 1.0, Kernel + Addresses + Linkage, the addressing
 * model of their width, the six functions exported with the expected signatures, no entry
 * points, no module-scope variables, no imports but cldm_target_* (the nv variant's, which the
 * PTX backend resolves); and cldm_device_module_select picks by width and features.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cldm_device.h"

enum {
  OP_NAME = 5,
  OP_EXTENSION = 10,
  OP_MEMORY_MODEL = 14,
  OP_ENTRY_POINT = 15,
  OP_CAPABILITY = 17,
  OP_TYPE_INT = 21,
  OP_TYPE_VOID = 19,
  OP_TYPE_POINTER = 32,
  OP_TYPE_FUNCTION = 33,
  OP_VARIABLE = 59,
  OP_FUNCTION = 54,
  OP_FUNCTION_END = 56,
  OP_DECORATE = 71,
  DEC_LINKAGE = 41,
  LINK_EXPORT = 0,
  LINK_IMPORT = 1,
  SC_CROSS_WORKGROUP = 5,
  CAP_ADDRESSES = 4,
  CAP_LINKAGE = 5,
  CAP_KERNEL = 6,
  CAP_INT64_ATOMICS = 12,
};

#define MAX_IDS 65536

typedef struct fn_sig {
  const char *name;
  int params;        /* parameter count */
  const char *shape; /* return then params: p = global uchar*, s = size_t, v = void */
} fn_sig;

static const fn_sig k_sigs[] = {
    {"cldm_malloc", 2, "pps"},   {"cldm_free", 2, "vpp"},           {"cldm_calloc", 3, "ppss"},
    {"cldm_realloc", 3, "ppps"}, {"cldm_aligned_alloc", 3, "ppss"}, {"cldm_new_failed", 1, "vp"},
};

enum { NUM_SIGS = (int)(sizeof k_sigs / sizeof k_sigs[0]) };

typedef struct module_info {
  uint32_t op_of_id[MAX_IDS];    /* opcode defining each id (type/function) */
  uint32_t words_of_id[MAX_IDS]; /* word offset of that instruction */
} module_info;

static module_info g_info;

/* Shape letter of type id t: 'p' (CrossWorkgroup pointer to i8), 's' (int of `bits`), 'v'. */
static char shape_of(const uint32_t *w, uint32_t t, unsigned bits) {
  if (t >= MAX_IDS)
    return '?';
  uint32_t at = g_info.words_of_id[t];
  switch (g_info.op_of_id[t]) {
  case OP_TYPE_VOID:
    return 'v';
  case OP_TYPE_INT:
    return w[at + 2] == bits ? 's' : '?';
  case OP_TYPE_POINTER: {
    uint32_t pointee = w[at + 3];
    if (w[at + 2] == SC_CROSS_WORKGROUP && pointee < MAX_IDS &&
        g_info.op_of_id[pointee] == OP_TYPE_INT && w[g_info.words_of_id[pointee] + 2] == 8)
      return 'p';
    return '?';
  }
  default:
    return '?';
  }
}

static void check_module(const cldm_device_module *m) {
  const uint32_t *w = m->words;
  size_t n = m->num_words;
  assert_true(n > 5);
  assert_int_equal(w[0], 0x07230203u);
  assert_int_equal(w[1], 0x00010000u); /* SPIR-V 1.0 */
  assert_true(w[3] <= MAX_IDS);
  memset(&g_info, 0, sizeof g_info);
  int caps_kernel = 0, caps_addresses = 0, caps_linkage = 0, memory_model = 0, in_function = 0;
  int caps_int64_atomics = 0, imports = 0;
  int exported[NUM_SIGS] = {0}, functions = 0;
  uint32_t fn_ids[NUM_SIGS] = {0};
  /* pass 1: ids */
  for (size_t i = 5; i < n;) {
    uint32_t op = w[i] & 0xFFFF, count = w[i] >> 16;
    assert_true(count >= 1 && i + count <= n);
    if ((op == OP_TYPE_INT || op == OP_TYPE_VOID || op == OP_TYPE_POINTER ||
         op == OP_TYPE_FUNCTION) &&
        w[i + 1] < MAX_IDS) {
      g_info.op_of_id[w[i + 1]] = op;
      g_info.words_of_id[w[i + 1]] = (uint32_t)i;
    }
    if (op == OP_FUNCTION && w[i + 2] < MAX_IDS) {
      g_info.op_of_id[w[i + 2]] = op;
      g_info.words_of_id[w[i + 2]] = (uint32_t)i;
    }
    i += count;
  }
  /* pass 2: contract */
  for (size_t i = 5; i < n;) {
    uint32_t op = w[i] & 0xFFFF, count = w[i] >> 16;
    switch (op) {
    case OP_CAPABILITY:
      caps_kernel |= w[i + 1] == CAP_KERNEL;
      caps_addresses |= w[i + 1] == CAP_ADDRESSES;
      caps_linkage |= w[i + 1] == CAP_LINKAGE;
      caps_int64_atomics |= w[i + 1] == CAP_INT64_ATOMICS;
      break;
    case OP_MEMORY_MODEL:
      assert_int_equal(w[i + 1], m->address_bits == 64 ? 2 : 1); /* Physical64 / Physical32 */
      assert_int_equal(w[i + 2], 2);                             /* OpenCL */
      memory_model = 1;
      break;
    case OP_ENTRY_POINT:
      fail_msg("%s: has an entry point", m->name);
      break;
    case OP_FUNCTION:
      in_function = 1;
      functions++;
      break;
    case OP_FUNCTION_END:
      in_function = 0;
      break;
    case OP_VARIABLE:
      if (!in_function)
        fail_msg("%s: module-scope OpVariable %%%u (storage class %u)", m->name, w[i + 2],
                 w[i + 3]);
      break;
    case OP_DECORATE:
      if (w[i + 2] == DEC_LINKAGE) {
        const char *name = (const char *)&w[i + 3];
        uint32_t type = w[i + count - 1];
        if (type == LINK_IMPORT) { /* only what a target backend provides */
          if (strncmp(name, "cldm_target_", 12))
            fail_msg("%s: imports %s", m->name, name);
          imports++;
          break;
        }
        assert_int_equal(type, LINK_EXPORT);
        int found = 0;
        for (int k = 0; k < NUM_SIGS; k++)
          if (strcmp(name, k_sigs[k].name) == 0) {
            exported[k]++;
            fn_ids[k] = w[i + 1];
            found = 1;
          }
        if (!found)
          fail_msg("%s: exports unexpected name %s", m->name, name);
      }
      break;
    default:
      break;
    }
    i += count;
  }
  assert_true(caps_kernel && caps_addresses && caps_linkage && memory_model);
  /* the nv variant forwards to the NVPTX allocator; the others hold one, with 64-bit atomics */
  if (m->features & CLDM_DEVICE_FEATURE_TARGET_PTX)
    assert_int_equal(imports, NUM_SIGS);
  else
    assert_true(caps_int64_atomics && imports == 0);
  assert_true(functions >= NUM_SIGS);
  for (int k = 0; k < NUM_SIGS; k++) {
    assert_int_equal(exported[k], 1);
    uint32_t f = fn_ids[k];
    assert_true(f < MAX_IDS && g_info.op_of_id[f] == OP_FUNCTION);
    const uint32_t *fw = &w[g_info.words_of_id[f]];
    uint32_t ftype = fw[4];
    assert_true(ftype < MAX_IDS && g_info.op_of_id[ftype] == OP_TYPE_FUNCTION);
    const uint32_t *tw = &w[g_info.words_of_id[ftype]];
    uint32_t nparams = (tw[0] >> 16) - 3;
    assert_int_equal(nparams, (uint32_t)k_sigs[k].params);
    char shape[8] = {0};
    shape[0] = shape_of(w, tw[2], m->address_bits);
    for (uint32_t p = 0; p < nparams; p++)
      shape[1 + p] = shape_of(w, tw[3 + p], m->address_bits);
    if (strcmp(shape, k_sigs[k].shape) != 0)
      fail_msg("%s: %s has shape %s, expected %s", m->name, k_sigs[k].name, shape, k_sigs[k].shape);
  }
}

static void test_modules_contract(void **state) {
  (void)state;
  size_t count = 0;
  const cldm_device_module *mods = cldm_device_modules(&count);
  assert_true(count >= 4);
  int seen32 = 0, seen64 = 0, baseline32 = 0, baseline64 = 0;
  for (size_t i = 0; i < count; i++) {
    const cldm_device_module *m = &mods[i];
    printf("%-28s %2u-bit features 0x%x %6zu words\n", m->name, m->address_bits, m->features,
           m->num_words);
    assert_true(m->address_bits == 32 || m->address_bits == 64);
    assert_non_null(strstr(m->name, m->address_bits == 64 ? ".spir64" : ".spir"));
    seen32 |= m->address_bits == 32;
    seen64 |= m->address_bits == 64;
    baseline32 |= m->address_bits == 32 && m->features == CLDM_DEVICE_FEATURE_INT64_ATOMICS;
    baseline64 |= m->address_bits == 64 && m->features == CLDM_DEVICE_FEATURE_INT64_ATOMICS;
    check_module(m);
  }
  assert_true(seen32 && seen64 && baseline32 && baseline64);
}

static void test_select(void **state) {
  (void)state;
  const unsigned i64 = CLDM_DEVICE_FEATURE_INT64_ATOMICS;
  const cldm_device_module *m;
  /* every variant needs 64-bit atomics */
  assert_null(cldm_device_module_select(64, 0));
  assert_null(cldm_device_module_select(32, CLDM_DEVICE_FEATURE_CL20_ATOMICS));
  m = cldm_device_module_select(64, i64);
  assert_non_null(m);
  assert_int_equal(m->address_bits, 64);
  assert_string_equal(m->name, "cldm_alloc.cl12.spir64");
  m = cldm_device_module_select(32, i64);
  assert_non_null(m);
  assert_int_equal(m->address_bits, 32);
  m = cldm_device_module_select(64, i64 | CLDM_DEVICE_FEATURE_CL20_ATOMICS);
  assert_non_null(m);
  assert_int_equal(m->features, i64 | CLDM_DEVICE_FEATURE_CL20_ATOMICS);
  assert_string_equal(m->name, "cldm_alloc.cl20.spir64");
  /* features the modules do not use change nothing */
  m = cldm_device_module_select(64, CLDM_DEVICE_FEATURE_CL20_ATOMICS | i64 |
                                        CLDM_DEVICE_FEATURE_GENERIC_AS |
                                        CLDM_DEVICE_FEATURE_SUBGROUPS);
  assert_non_null(m);
  assert_string_equal(m->name, "cldm_alloc.cl20.spir64");
  /* the PTX route's variant: 64-bit only, and only for that route */
  m = cldm_device_module_select(64, i64 | CLDM_DEVICE_FEATURE_TARGET_PTX);
  assert_non_null(m);
  assert_string_equal(m->name, "cldm_alloc.nv.spir64");
  m = cldm_device_module_select(32, i64 | CLDM_DEVICE_FEATURE_TARGET_PTX);
  assert_non_null(m);
  assert_string_equal(m->name, "cldm_alloc.cl12.spir");
  assert_null(cldm_device_module_select(16, ~0u));
  /* every module is the choice for exactly its own features */
  size_t count;
  const cldm_device_module *mods = cldm_device_modules(&count);
  for (size_t i = 0; i < count; i++)
    assert_ptr_equal(cldm_device_module_select(mods[i].address_bits, mods[i].features), &mods[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_modules_contract),
      cmocka_unit_test(test_select),
  };
  return cmocka_run_group_tests_name("device_modules", tests, NULL, NULL);
}
