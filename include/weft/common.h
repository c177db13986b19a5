/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * Things every area shares: the export macro, status codes and the allocator hook.
 */
#ifndef WEFT_COMMON_H
#define WEFT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
#  define WEFT_EXTERN_C_BEGIN extern "C" {
#  define WEFT_EXTERN_C_END }
#else
/* Opens the headers' extern "C" block in C++; nothing in C. */
#  define WEFT_EXTERN_C_BEGIN
/* Closes the block WEFT_EXTERN_C_BEGIN opened; nothing in C. */
#  define WEFT_EXTERN_C_END
#endif

/* WEFT_API marks the exported symbols; everything else is hidden.  Consumers of the
 * static library define WEFT_STATIC (the CMake target and weft.pc do it for them). */
#if defined(_WIN32) && !defined(WEFT_STATIC)
#  ifdef WEFT_BUILDING
#    define WEFT_API __declspec(dllexport)
#  else
#    define WEFT_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define WEFT_API __attribute__((visibility("default")))
#else
#  define WEFT_API
#endif

#if defined(__GNUC__)
#  define WEFT_NODISCARD __attribute__((warn_unused_result))
#else
/* Marks a call whose result must be used (GCC and Clang warn when it is
 * ignored: warn_unused_result); nothing with other compilers. */
#  define WEFT_NODISCARD
#endif

WEFT_EXTERN_C_BEGIN

/* Every fallible call returns a weft_status: 0 for success, a negative WEFT_E* code
 * otherwise.  The table below is the single list of codes; weft_strerror and
 * weft_errname are generated from it. */
#define WEFT_ERROR_TABLE(X)                                                              \
    X(WEFT_OK,         0,  "success")                                                   \
    X(WEFT_EINVAL,    -1,  "invalid argument")                                          \
    X(WEFT_ENOMEM,    -2,  "out of memory")                                             \
    X(WEFT_EBUSY,     -3,  "busy: in use now (e.g. a taskflow being run)")              \
    X(WEFT_ECYCLE,    -4,  "taskflow has a cycle")                                      \
    X(WEFT_ETASK,     -5,  "a task failed")                                             \
    X(WEFT_ECANCELED, -6,  "run was cancelled")                                         \
    X(WEFT_ETIMEDOUT, -7,  "timed out")                                                 \
    X(WEFT_EAGAIN,    -8,  "not ready yet")                                             \
    X(WEFT_ESHUTDOWN, -9,  "executor is shutting down")                                 \
    X(WEFT_ESYS,      -10, "operating system call failed")                              \
    X(WEFT_EDEADLK,   -11, "waiting here would deadlock")                               \
    X(WEFT_ENOENT,    -12, "no such object")                                            \
    X(WEFT_EFORKED,   -13, "executor was created before fork(); unusable in the child") \
    X(WEFT_EDEVICE,   -14, "GPU driver call or kernel failed")

/* A call's outcome: WEFT_OK (0) or a negative WEFT_E* code of the table above
 * (weft_strerror describes it; docs/errors.md says what each means). */
typedef enum weft_status {
#define WEFT__ENUM(name, value, text) name = value,
    WEFT_ERROR_TABLE(WEFT__ENUM)
#undef WEFT__ENUM
} weft_status;

/* A static English description of `status` ("unknown status" for codes not in the
 * table).  Never NULL.  Any thread. */
WEFT_API const char *weft_strerror(int status);
/* The code's name, e.g. "WEFT_ECYCLE" ("WEFT_E?" when unknown).  Any thread. */
WEFT_API const char *weft_errname(int status);

/* Allocator hook.  Every allocation weft makes goes through these functions, so a
 * program can route memory to its own allocator and tests can fail the Nth
 * allocation.  `ctx` is passed back unchanged.  `alloc` must return memory aligned
 * for any type (like malloc) or NULL; `free` accepts NULL.  Any field left NULL
 * falls back to the C library.
 *
 * Install it before creating any weft object: memory is freed with the allocator
 * that was current when it was released, so switching allocators while objects are
 * alive is only safe if the two can free each other's memory.  Not thread-safe with
 * concurrent weft calls, and a live executor's workers count as such even when no
 * call of yours runs: a worker may still free a finished call's state after the
 * call returned, so switch allocators with no executor alive.  Passing NULL
 * restores the C library allocator. */
typedef struct weft_allocator {
    /* Returns size bytes (size >= 1) aligned for any type, or NULL.  NULL: malloc. */
    void *(*alloc)(void *ctx, size_t size);
    /* Resizes ptr (from alloc or realloc, old_size bytes) to new_size bytes,
     * keeping its contents, or returns NULL and leaves ptr as it was.  NULL:
     * the C library's realloc, or alloc, copy and free when alloc is set. */
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    /* Frees ptr (NULL allowed) of size bytes, the size it was allocated with.
     * NULL: the C library's free. */
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx; /* passed to the three functions unchanged; may be NULL */
} weft_allocator;

/* Installs *allocator (copied) for all of weft's memory from now on; NULL
 * restores the C library's.  The rules above apply. */
WEFT_API void weft_set_allocator(const weft_allocator *allocator);

/* The four calls below hand out memory through the installed allocator, as weft
 * does for itself: for a library built on weft whose memory must go where weft's
 * goes (weft::mpi is one; weft's own internal calls are hidden in libweft.so).
 * Any thread, as far as the installed allocator allows.
 *
 * Returns size bytes aligned like malloc's, or NULL.  A size of 0 is taken as 1,
 * here and in weft_mem_free, so a zero-sized request succeeds with a block. */
WEFT_API void *weft_mem_alloc(size_t size);
/* weft_mem_alloc, the block zeroed. */
WEFT_API void *weft_mem_calloc(size_t size);
/* Resizes ptr (a block of old_size bytes from these calls, or NULL with
 * old_size 0) to new_size bytes (0 taken as 1: never a free), keeping its
 * contents; or returns NULL and leaves ptr as it was. */
WEFT_API void *weft_mem_realloc(void *ptr, size_t old_size, size_t new_size);
/* Frees ptr (NULL allowed) of size bytes: the size it was allocated or last
 * resized with, which the allocator's free is told. */
WEFT_API void weft_mem_free(void *ptr, size_t size);

WEFT_EXTERN_C_END
#endif
