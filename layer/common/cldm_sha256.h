/*
 * cldm_sha256.h — SHA-256 (FIPS 180-4) shared by the layer and the PTX backend
 * (static library cldm_common, layer/common).
 */
#ifndef CLDM_SHA256_H
#define CLDM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cldm_sha256 {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t nbuf;
} cldm_sha256;

void cldm_sha256_init(cldm_sha256 *s);
void cldm_sha256_update(cldm_sha256 *s, const void *data, size_t len);
void cldm_sha256_final(cldm_sha256 *s, uint8_t out[32]);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_SHA256_H */
