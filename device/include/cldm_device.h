/*
 * cldm_device.h — host-side interface of the device allocator (device/).
 *
 * The allocator is OpenCL C compiled to SPIR-V at build time, in variants by address width
 * (Physical32 / Physical64) and by the device features it may use. This header is what the
 * layer and the tests see of it:
 *   - the embedded SPIR-V modules and how to pick one for a device;
 *   - the heap layout as far as the host needs it: its geometry (buffer, usable size, initial
 *     image, statistics span), how to write the image (creation and reset are one host write
 *     of it), how to decode statistics.
 * The heap layout itself is described in docs/allocator.md (diagram, terms); the structs
 * shared by OpenCL C and C live in device/include/cldm_heap_layout.h.
 *
 * Contract of the SPIR-V modules (what the lowering links against; spec 3.2):
 * each exports, with LinkageAttributes Export, functions taking the heap first:
 *   cldm_malloc(heap, size)          -> global pointer or NULL
 *   cldm_free(heap, ptr)             -> void
 *   cldm_calloc(heap, count, size)   -> global pointer or NULL
 *   cldm_realloc(heap, ptr, size)    -> global pointer or NULL
 *   cldm_aligned_alloc(heap, align, size) -> global pointer or NULL
 *   cldm_new_failed(heap)            -> void: counts a throwing operator new that got NULL
 *                                       (spec 2.2; linked where a module has one)
 * heap and ptr are `__global void *` (OpTypePointer CrossWorkgroup to 8-bit int), sizes are
 * size_t of the module's width, results `__global void *`. The modules hold no entry points,
 * no program-scope variables and no built-in variables; their only imports are functions named
 * cldm_target_* (the "nv" variant's), which the lowering keeps and the PTX backend resolves.
 * They are SPIR-V 1.0 with the Kernel, Addresses, Linkage, Int8, Int64 and Int64Atomics
 * capabilities and pass `spirv-val --target-env spv1.0` (SPIRV-Tools 2023.1's OpenCL
 * environments reject Int64Atomics, which OpenCL allows with cl_khr_int64_base_atomics).
 * All functions are lock-free: no work-item waits for another work-item's progress.
 *
 * Variants (cldm_device_modules lists them; names "cldm_alloc.<variant>.<spir|spir64>"):
 *   cl12     INT64_ATOMICS: OpenCL C 1.2 atomics as llvm-spirv-15 emits them (Workgroup scope,
 *            no memory semantics, ordering by OpMemoryBarrier);
 *   cl20     CL20_ATOMICS | INT64_ATOMICS: explicit acquire/release/relaxed at Device scope;
 *   cl12checked, cl20checked
 *            CHECKED | the features of cl12 / cl20: the same allocator in checked mode (guard
 *            bytes, freed marks, an event log in the heap's check area; spec 2.4), for heaps
 *            made with a check area (cldm_heap_geometry_for_request_checked);
 *   nv       TARGET_PTX | INT64_ATOMICS (spir64 only): cldm_* forward to cldm_target_*, the
 *            allocator built for NVPTX (cldm_alloc.nvptx.bc, linked by the PTX backend), which
 *            combines the calls of a warp; for the PTX route on compute capability >= 8.0.
 */
#ifndef CLDM_DEVICE_H
#define CLDM_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device features a module variant may require (bit set). */
enum {
  CLDM_DEVICE_FEATURE_CL20_ATOMICS = 1u << 0,  /* OpenCL C 2.0 atomics: explicit order, device
                                                  scope */
  CLDM_DEVICE_FEATURE_INT64_ATOMICS = 1u << 1, /* cl_khr_int64_base_atomics: every variant */
  CLDM_DEVICE_FEATURE_SUBGROUPS = 1u << 2,     /* cl_khr_subgroups (sub-group ballot/broadcast) */
  CLDM_DEVICE_FEATURE_GENERIC_AS = 1u << 3,    /* generic address space */
  /* Not a device feature but a route: the module is translated by the layer's PTX backend,
   * which links the NVPTX allocator (compute capability 8.0 or newer). */
  CLDM_DEVICE_FEATURE_TARGET_PTX = 1u << 4,
  /* Not a device feature but a mode: the checked allocator (spec 2.4), offered by the layer
   * only when checked mode is on. */
  CLDM_DEVICE_FEATURE_CHECKED = 1u << 5,
};

typedef struct cldm_device_module {
  const char *name;      /* e.g. "cldm_alloc.cl20.spir64" */
  unsigned address_bits; /* 32 (Physical32) or 64 (Physical64) */
  unsigned features;     /* CLDM_DEVICE_FEATURE_* this variant requires */
  const uint32_t *words; /* SPIR-V, host byte order */
  size_t num_words;
} cldm_device_module;

/* All embedded modules; count in *count. */
const cldm_device_module *cldm_device_modules(size_t *count);

/* The best module for a device of address width `address_bits` offering `features`: the one
 * requiring the most features among those whose requirements are all offered. NULL if none. */
const cldm_device_module *cldm_device_module_select(unsigned address_bits, unsigned features);

/* Heap statistics (spec 1.3); every field in bytes or counts. */
typedef struct cldm_heap_stats {
  uint64_t size;            /* usable heap size, bytes */
  uint64_t bytes_in_use;    /* bytes of live allocations (size-class rounded, runs in pages) */
  uint64_t bytes_held;      /* bytes of the pages taken for slabs and runs */
  uint64_t peak_bytes_held; /* maximum of bytes_held since creation/reset */
  uint64_t live_allocations;
  uint64_t failed_allocations;
  uint64_t invalid_frees;
} cldm_heap_stats;

/* Smallest heap (bytes) the allocator supports; equals CL_DEVICE_HEAP_SIZE_MIN_EXT. */
uint64_t cldm_heap_min_size(void);

/* Largest usable heap (bytes) the layout supports (64 GiB - 64 KiB; bytes in use are counted
 * in 32-bit units of 16 bytes). A 32-bit (Physical32) module additionally needs the whole buffer
 * below 4 GiB. */
uint64_t cldm_heap_max_size(void);

/* Usable bytes of a heap created for `requested` bytes: rounded down to the page size
 * (64 KiB, spec 1.2) and clamped to [min size, max size]. This is what the statistics report
 * as the heap size. */
uint64_t cldm_heap_usable_size(uint64_t requested);

/* Bytes of the buffer the host creates for a heap of `requested` bytes (>= min size): the
 * usable size plus header and metadata (about 0.8 % + 16 KiB) plus 64 KiB - 64 bytes of
 * slack for aligning the pages to 64 KiB in device address. Requests outside
 * [min size, max size] are clamped as in cldm_heap_usable_size. */
uint64_t cldm_heap_buffer_size(uint64_t requested);

/* Geometry of a heap: where everything lives in its buffer, in bytes from the heap base. The
 * host computes it once per heap (cldm_heap_geometry_for_*) and uses it for creation (buffer,
 * image), reset (image) and statistics (span); the image's header carries it to the device. */
typedef struct cldm_heap_geometry {
  uint64_t buffer_bytes; /* the whole buffer: header, metadata, slack for aligning the pages
                            (64 KiB - 64 bytes), pages (and any unused rest) */
  uint64_t usable_bytes; /* num_pages * 64 KiB: the heap size statistics report */
  uint32_t num_pages;
  uint32_t num_shards; /* rows of current-page words (cldm_heap_shards) */
  uint32_t w_offset, descs_offset, pool_offset, pool_words, bitmaps_offset;
  uint64_t pages_offset;   /* start of the page area; page 0 is the first 64 KiB-aligned device
                              address from there, at most CLDM_PAGES_SLACK_BYTES further
                              (cldm_heap_first_page) */
  size_t image_bytes;      /* initial image at offset 0: writing it creates or resets the heap */
  size_t stats_span;       /* bytes at offset 0 that statistics are decoded from */
  uint32_t check_offset;   /* checked heaps: the check area (cldm_check_area_bytes long, inside
                              the image); 0 for other heaps */
  uint32_t check_capacity; /* checked heaps: event-log entries; 0 for other heaps */
} cldm_heap_geometry;

/* The geometry of the largest heap a buffer of `buffer_bytes` holds. Returns 0, or -1 if the
 * buffer is too small for the minimum heap (then only g->buffer_bytes is set, all else 0). */
int cldm_heap_geometry_for_buffer(uint64_t buffer_bytes, cldm_heap_geometry *g);

/* The geometry of the heap created for `requested` bytes: usable size as cldm_heap_usable_size,
 * buffer as cldm_heap_buffer_size, except that a buffer larger than `max_buffer_bytes` (if not
 * 0; e.g. CL_DEVICE_MAX_MEM_ALLOC_SIZE) is cut to it, the metadata then coming out of the usable
 * size. Returns 0, or -1 as cldm_heap_geometry_for_buffer. */
int cldm_heap_geometry_for_request(uint64_t requested, uint64_t max_buffer_bytes,
                                   cldm_heap_geometry *g);

/* As cldm_heap_geometry_for_request, for a checked heap (spec 2.4): the image ends with a check
 * area of CLDM_CHECK_LOG_ENTRIES event-log entries (cldm_heap_layout.h), which the checked
 * modules need. */
int cldm_heap_geometry_for_request_checked(uint64_t requested, uint64_t max_buffer_bytes,
                                           cldm_heap_geometry *g);

/* Writes the image of a heap of geometry `g` into dst (dst_size >= g->image_bytes). Returns 0,
 * or -1 if g is not a valid heap's geometry or dst is NULL or too small. */
int cldm_heap_image_fill(const cldm_heap_geometry *g, void *dst, size_t dst_size);

/* Offset from the heap base of page 0 for a heap of geometry `g` whose buffer lies at device
 * address `base_address` (for SVM, its pointer): where the device puts it, aligned to the page
 * size (64 KiB) if the base is 64-byte aligned, as OpenCL guarantees. */
uint64_t cldm_heap_first_page(const cldm_heap_geometry *g, uint64_t base_address);

/* The three below take a buffer size and compute its geometry (cldm_heap_geometry_for_buffer)
 * on each call. */

/* Size of the initial image (header + metadata) at offset 0 of a heap buffer of
 * `buffer_bytes` bytes. Writing that image (nothing else) creates or resets the heap. */
size_t cldm_heap_image_size(uint64_t buffer_bytes);

/* Writes the image for a heap buffer of `buffer_bytes` into dst (dst_size >= image size).
 * Returns 0, or -1 if buffer_bytes is below the minimum or dst_size is too small. */
int cldm_heap_image_write(uint64_t buffer_bytes, void *dst, size_t dst_size);

/* Bytes at offset 0 of the heap buffer the host reads to decode statistics: the header, the
 * current-page words (640 bytes per shard) and the page descriptors (4 bytes per 64 KiB
 * page; 5.6 KiB for the default 8 MiB heap). */
size_t cldm_heap_stats_span(uint64_t buffer_bytes);

/* Decodes statistics from `span` bytes read at offset 0 (after the kernels that use the heap
 * completed: counts read while kernels run are approximate, spec 1.3). Returns 0, or -1 if the
 * bytes are not a heap of this layout version (bad magic/version) or span is too small. */
int cldm_heap_stats_decode(const void *src, size_t span, cldm_heap_stats *out);

/* Where a heap's memory is (CLDM_OOM=report prints it after a launch that got NULL, so that
 * a NULL at, say, 92 % in use can be told apart: free pages, or free slots of other classes). */
#define CLDM_CENSUS_CLASSES 72u /* the layout's size classes (CLDM_NUM_CLASSES) */
typedef struct cldm_heap_census_class {
  uint32_t class_bytes; /* the class's slot size */
  uint64_t slabs;       /* slabs (spans of 1-8 pages) of the class */
  uint64_t pages;       /* pages those slabs hold */
  uint64_t slots;       /* slots they have */
  uint64_t live;        /* slots allocated */
  uint64_t unissued;    /* free slots held by current slabs for their tickets to come */
} cldm_heap_census_class;
typedef struct cldm_heap_census {
  uint64_t size;          /* usable bytes */
  uint32_t free_pages;    /* pages no slab or run holds */
  uint32_t free_spans[3]; /* aligned spans of 2, 4, 8 pages wholly free (slabs take such
                             spans: 2 pages for 576 B - 1 KiB in a heap of 1 GiB or more) */
  uint32_t run_pages;     /* pages of large allocations (runs) */
  cldm_heap_census_class classes[CLDM_CENSUS_CLASSES]; /* smallest class first */
} cldm_heap_census;

/* Decodes the census from the statistics span (cldm_heap_stats_span), as
 * cldm_heap_stats_decode does. Returns 0, or -1 if the bytes are not a heap of this layout. */
int cldm_heap_census_decode(const void *src, size_t span, cldm_heap_census *out);

/* ---- checked mode (spec 2.4): decoding the check area and inspecting a heap ---------------- */

/* Bytes of the check area of a heap of geometry `g` (0 if it has none). */
size_t cldm_check_area_bytes(const cldm_heap_geometry *g);

/* An event of the log, as decoded. */
typedef struct cldm_check_event {
  uint32_t kind;        /* CLDM_CHECK_* (cldm_heap_layout.h) */
  uint64_t address;     /* device address of the pointer or block; 0 for failed allocations */
  uint64_t offset;      /* address - heap base (wraps below the base) */
  uint64_t size;        /* requested size (overflow, failed allocation) or CLDM_CHECK_SIZE_UNKNOWN;
                           0 for frees */
  uint64_t block_bytes; /* overflow: bytes of the block; else 0 */
} cldm_check_event;

/* What the check area says. */
typedef struct cldm_check_log {
  uint64_t counts[8]; /* events per kind (index CLDM_CHECK_*), since creation or reset */
  uint64_t total;     /* sum of counts */
  uint32_t claimed;   /* entries claimed (may exceed the capacity: those were not written) */
  uint32_t logged;    /* complete entries decoded (at most the capacity) */
  uint64_t base;      /* the heap's device address, 0 if no checked allocation stored it yet */
} cldm_check_log;

/* Decodes the check area (`n` bytes read at the heap's check_offset, `capacity` entries) into
 * *log and the first `max` complete entries into events[] (may be NULL with max 0). Returns 0,
 * or -1 if n is too small for the capacity or an argument is NULL. */
int cldm_check_log_decode(const void *area, size_t n, uint32_t capacity, cldm_check_log *log,
                          cldm_check_event *events, size_t max);

/* "double free", "interior-pointer free", "free outside the heap", "free of unallocated
 * memory", "overflow", "allocation failed"; "unknown" for anything else. */
const char *cldm_check_kind_name(uint32_t kind);

/* Formats one report line (spec 2.4, no newline) into buf (snprintf semantics):
 *   cl_ext_device_malloc: kernel <name>: <kind name> at <address> (heap+<offset>)[ details]
 * details: overflow ", block of <block_bytes> bytes, <size> bytes requested" (", size unknown"
 * if the trailer was overwritten); failed allocation ", <size> bytes requested". */
int cldm_check_format_event(char *buf, size_t n, const char *kernel, const cldm_check_event *e);

/* The heap's device address as its check area holds it (`n` bytes read from the heap's base);
 * 0 if unknown (not a checked heap, or no checked allocation yet). */
uint64_t cldm_check_heap_base(const void *heap, size_t n);

/* A live allocation found by an inspection. */
typedef struct cldm_check_block {
  uint64_t offset; /* from the heap base */
  uint64_t bytes;  /* bytes of the block */
  uint64_t size;   /* requested size (checked heaps; bytes - CLDM_CHECK_EXTRA_BYTES if the
                      trailer is damaged); for heaps that are not checked the block size */
  int damaged;     /* checked heaps: guard bytes or trailer overwritten */
} cldm_check_block;

/* Result of an inspection of a whole heap (after the kernels that use it completed). */
typedef struct cldm_check_scan {
  uint64_t live;       /* live allocations */
  uint64_t live_bytes; /* bytes they hold (requested sizes on checked heaps) */
  uint64_t damaged;    /* of them, blocks whose guard bytes or trailer were overwritten */
} cldm_check_scan;

/* Inspects `n` bytes read from a heap's base (the whole buffer) whose device address is `base`
 * (where its pages lie: cldm_heap_first_page; 0 while unknown): every live allocation, in
 * address order; the first `max_blocks` are stored into blocks[] (NULL with 0), and, on a
 * checked heap, the first `max_damaged` damaged ones into damaged[] (NULL with 0). Returns 0,
 * or -1 if the bytes are not a heap of this layout or n does not cover its pages. */
int cldm_check_heap_scan(const void *heap, size_t n, uint64_t base, cldm_check_scan *out,
                         cldm_check_block *blocks, size_t max_blocks, cldm_check_block *damaged,
                         size_t max_damaged);

#ifdef __cplusplus
}
#endif
#endif /* CLDM_DEVICE_H */
