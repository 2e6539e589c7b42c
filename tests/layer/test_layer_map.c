/*
 * test_layer_map.c — layer_map.c against a reference model: random puts, gets and removes of
 * many keys, including keys that collide in the hash (aligned addresses), through growth and
 * backward-shift deletion; counts of holders (cldm_map_hold).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cldm_layer.h"

#define KEYS 5000

static void test_against_model(void **state) {
  static void *model[KEYS];
  cldm_map m = CLDM_MAP_INIT;
  srand(12345);
  for (int round = 0; round < 200000; round++) {
    int i = rand() % KEYS;
    const void *key = (const void *)(uintptr_t)(0x1000 + (uintptr_t)i * 4096); /* aligned keys */
    switch (rand() % 3) {
    case 0: {
      void *v = (void *)(uintptr_t)(round + 1);
      assert_int_equal(cldm_map_put(&m, key, v), 0);
      model[i] = v;
      break;
    }
    case 1:
      assert_ptr_equal(cldm_map_get(&m, key), model[i]);
      break;
    default:
      assert_ptr_equal(cldm_map_remove(&m, key), model[i]);
      model[i] = NULL;
    }
  }
  size_t live = 0;
  for (int i = 0; i < KEYS; i++) {
    const void *key = (const void *)(uintptr_t)(0x1000 + (uintptr_t)i * 4096);
    assert_ptr_equal(cldm_map_get(&m, key), model[i]);
    live += model[i] != NULL;
  }
  assert_int_equal(m.len, live);
  assert_null(cldm_map_get(&m, NULL));
  assert_int_equal(cldm_map_put(&m, NULL, (void *)1), -1);
  free(m.slots);
}

/* cldm_map_hold: counts up and down at the value's offset, the value leaves the map at 0 (and
 * is handed back), a key without a value answers -1. */
static void test_hold(void **state) {
  typedef struct {
    int tag;
    unsigned long holders;
  } rec;
  cldm_map m = CLDM_MAP_INIT;
  rec r = {7, 1ul};
  const void *key = (const void *)(uintptr_t)0x5000;
  void *gone = &r;
  assert_int_equal(cldm_map_hold(&m, key, offsetof(rec, holders), 1, &gone), -1);
  assert_null(gone);
  assert_int_equal(cldm_map_put(&m, key, &r), 0);
  assert_int_equal(cldm_map_hold(&m, key, offsetof(rec, holders), 2, &gone), 3);
  assert_null(gone);
  assert_int_equal(r.holders, 3);
  assert_int_equal(cldm_map_hold(&m, key, offsetof(rec, holders), -2, &gone), 1);
  assert_ptr_equal(cldm_map_get(&m, key), &r);
  assert_int_equal(cldm_map_hold(&m, key, offsetof(rec, holders), -1, &gone), 0);
  assert_ptr_equal(gone, &r);
  assert_null(cldm_map_get(&m, key));
  assert_int_equal(r.tag, 7);
  free(m.slots);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_model),
                                     cmocka_unit_test(test_hold)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
