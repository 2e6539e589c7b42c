/*
 * cl_ext_device_malloc.h — OpenCL C and C++ for OpenCL interface of the cl_ext_device_malloc
 * extension (spec 2.3): the feature macro and the declarations of malloc, free, calloc, realloc
 * and aligned_alloc; in C++ for OpenCL also the global operator new and delete and two helpers
 * that destroy what new made (cl_ext_delete, cl_ext_delete_array).
 *
 * Programs the implementation builds from source see this header implicitly (the layer passes
 * it as an included header, and defines cl_ext_device_malloc for devices that report the
 * extension): kernels call malloc, and use new, without declaring them. For offline compilation
 * to SPIR-V, include it and compile as usual, e.g.
 *
 *   clang-15 -target spir64 -x cl -cl-std=CL1.2 -c -emit-llvm -fno-builtin \
 *       -Xclang -no-opaque-pointers -I include/opencl-c -o k.bc k.cl
 *   clang-15 -target spir64 -x clcpp -cl-std=clc++2021 -c -emit-llvm -fno-builtin \
 *       -Xclang -no-opaque-pointers -I include/opencl-c -o k.bc k.clcpp
 *   llvm-spirv-15 --spirv-max-version=1.0 k.bc -o k.spv
 *
 * OpenCL C 1.x (and 3.0 without __opencl_c_generic_address_space) gets the global forms
 * (`global void *malloc(size_t)`); OpenCL C 2.0 (and 3.0 with generic pointers) the generic
 * forms (`void *malloc(size_t)`), which also take and return pointers to global memory.
 * C++ for OpenCL gets the generic forms as extern "C" functions, and the operators where it has
 * generic pointers (C++ for OpenCL 1.0, and 2021 with __opencl_c_generic_address_space).
 * A program may declare these functions itself only with the same types; defining
 * CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS (e.g. -D CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS) before
 * the header leaves them to the program.
 *
 * C++ for OpenCL (spec 2.2, 2.3). `new T`, `new T[n]`, `new (std::nothrow) T` and aligned types
 * (alignas above 16 bytes) allocate from the heap; a throwing new that finds no room stops its
 * work-item (the kernel's other work-items go on) and the implementation reports it after the
 * kernel, while new (std::nothrow) returns NULL. clang rejects `delete p` and `delete[] p` in
 * C++ for OpenCL, so objects are destroyed with
 *
 *   cl_ext_delete(p);        // for p = new T: runs ~T(), then operator delete
 *   cl_ext_delete_array(p);  // for p = new T[n]: runs ~T() on each element, last first, then
 *                            // operator delete[]
 *
 * (NULL does nothing). cl_ext_delete_array reads the element count that new T[n] stores before
 * the array when T has a destructor (the Itanium C++ ABI's array cookie, which clang uses for
 * SPIR targets); ::operator delete(p) and ::operator delete[](p) free without destroying.
 */
#ifndef CL_EXT_DEVICE_MALLOC_OPENCL_C_H
#define CL_EXT_DEVICE_MALLOC_OPENCL_C_H

#ifndef cl_ext_device_malloc
#define cl_ext_device_malloc 1
#endif

#if defined(__opencl_c_generic_address_space) ||                                                   \
    (defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ == 200) ||                              \
    (defined(__OPENCL_CPP_VERSION__) && __OPENCL_CPP_VERSION__ == 100)
#define CL_EXT_DEVICE_MALLOC_GENERIC_FORMS 1
#endif

#ifndef CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS
#ifdef __cplusplus
extern "C" {
#endif
#ifdef CL_EXT_DEVICE_MALLOC_GENERIC_FORMS
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void *realloc(void *ptr, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
void free(void *ptr);
#else
__global void *malloc(size_t size);
__global void *calloc(size_t count, size_t size);
__global void *realloc(__global void *ptr, size_t size);
__global void *aligned_alloc(size_t alignment, size_t size);
void free(__global void *ptr);
#endif
#ifdef __cplusplus
}
#endif

#if defined(__cplusplus) && defined(CL_EXT_DEVICE_MALLOC_GENERIC_FORMS)
namespace std {
enum class align_val_t : size_t {};
/* std::nothrow lives in __constant memory (a program-scope variable needs no other feature);
 * nothrow_t has no constructor, since constructors cannot make __constant objects. */
struct nothrow_t {};
static __constant nothrow_t nothrow = {};
} // namespace std

void *operator new(size_t size);
void *operator new[](size_t size);
void *operator new(size_t size, std::align_val_t alignment);
void *operator new[](size_t size, std::align_val_t alignment);
void *operator new(size_t size, const __constant std::nothrow_t &) noexcept;
void *operator new[](size_t size, const __constant std::nothrow_t &) noexcept;
void *operator new(size_t size, std::align_val_t alignment,
                   const __constant std::nothrow_t &) noexcept;
void *operator new[](size_t size, std::align_val_t alignment,
                     const __constant std::nothrow_t &) noexcept;
void operator delete(void *ptr) noexcept;
void operator delete[](void *ptr) noexcept;
void operator delete(void *ptr, size_t size) noexcept;
void operator delete[](void *ptr, size_t size) noexcept;
void operator delete(void *ptr, std::align_val_t alignment) noexcept;
void operator delete[](void *ptr, std::align_val_t alignment) noexcept;
void operator delete(void *ptr, size_t size, std::align_val_t alignment) noexcept;
void operator delete[](void *ptr, size_t size, std::align_val_t alignment) noexcept;
inline void *operator new(size_t, void *place) noexcept { return place; }
inline void *operator new[](size_t, void *place) noexcept { return place; }

/* Destroys *p and frees it (p from new T; NULL does nothing). */
template <class T> inline void cl_ext_delete(T *p) {
  if (!p)
    return;
  p->~T();
  ::operator delete(const_cast<void *>(static_cast<const volatile void *>(p)));
}

/* Destroys p[n - 1] .. p[0] and frees the array (p from new T[n]; NULL does nothing). */
template <class T> inline void cl_ext_delete_array(T *p) {
  if (!p)
    return;
  char *start = const_cast<char *>(reinterpret_cast<const volatile char *>(p));
  if constexpr (!__is_trivially_destructible(T)) {
    /* the cookie: max(sizeof(size_t), alignof(T)) bytes, the count in its last size_t */
    constexpr size_t cookie = sizeof(size_t) > alignof(T) ? sizeof(size_t) : alignof(T);
    size_t n = reinterpret_cast<size_t *>(start)[-1];
    while (n)
      p[--n].~T();
    start -= cookie;
  }
  ::operator delete[](start);
}
#endif /* C++ for OpenCL with generic pointers */
#endif /* CL_EXT_DEVICE_MALLOC_NO_DECLARATIONS */

#endif /* CL_EXT_DEVICE_MALLOC_OPENCL_C_H */
