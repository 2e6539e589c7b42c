/*
 * cldm_file.h — a whole file read into memory: the one helper the tool, the tests, the
 * benchmarks and the examples share for loading SPIR-V modules and other inputs.
 */
#ifndef CLDM_FILE_H
#define CLDM_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Reads stream f to its end into a malloc'd buffer, followed by one NUL byte that *size does
 * not count (so a text file can be used as a string). NULL on a read error or when memory runs
 * out (errno says which); f stays open. */
void *cldm_file_read_stream(FILE *f, size_t *size);

/* Opens `path` for binary reading and reads it as cldm_file_read_stream does. NULL if it cannot
 * be opened or read (errno says why). */
void *cldm_file_read(const char *path, size_t *size);

#endif /* CLDM_FILE_H */
