/*
 * cldm_modules.c — the table of embedded allocator modules and the choice of one for a device.
 *
 * The modules are compiled at build time (device/CMakeLists.txt) and turned into headers of
 * word arrays by cmake/CldmEmbed.cmake; the generated cldm_device_modules.inc includes them
 * and lists them as CLDM_MODULE(symbol, "name", address_bits, features), features being an
 * expression of CLDM_DEVICE_FEATURE_* names (0 for none).
 */
#include "cldm_device.h"

#define CLDM_MODULE(sym, name, bits, features)
#include "cldm_device_modules.inc" /* first pass: the arrays */
#undef CLDM_MODULE

static const cldm_device_module cldm_module_table[] = {
#define CLDM_MODULE(sym, name, bits, features)                                                     \
  {name, bits, features, sym, sizeof sym / sizeof sym[0]},
#include "cldm_device_modules.inc"
#undef CLDM_MODULE
};

#define CLDM_NUM_MODULES (sizeof cldm_module_table / sizeof cldm_module_table[0])

const cldm_device_module *cldm_device_modules(size_t *count) {
  if (count)
    *count = CLDM_NUM_MODULES;
  return cldm_module_table;
}

static unsigned cldm_popcount(unsigned x) {
  unsigned n = 0;
  for (; x; x &= x - 1)
    n++;
  return n;
}

const cldm_device_module *cldm_device_module_select(unsigned address_bits, unsigned features) {
  const cldm_device_module *best = NULL;
  for (size_t i = 0; i < CLDM_NUM_MODULES; i++) {
    const cldm_device_module *m = &cldm_module_table[i];
    if (m->address_bits != address_bits || (m->features & ~features) != 0)
      continue;
    if (best == NULL || cldm_popcount(m->features) > cldm_popcount(best->features))
      best = m;
  }
  return best;
}
