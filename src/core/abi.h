/* Config structs across library versions (docs/abi.md): every public entry
 * that takes a config struct by pointer has a _sized form that is told the
 * caller's sizeof, and reads the struct through weft__config_read. */
#ifndef WEFT_CORE_ABI_H
#define WEFT_CORE_ABI_H

#include <stddef.h>

#include "weft/common.h"

/* Bytes from a struct's start to the end of its member `last`: the size an
 * entry point of the old name (no _sized) reads.  Name the last member of the
 * 1.0 layout and never change it: fields appended later are beyond it, so an
 * old binary's shorter struct is never read past its end. */
#define WEFT__SIZE_TO(type, last) (offsetof(type, last) + sizeof(((type *)0)->last))

/* True while `last` is the last member of type (only padding follows it): the
 * static asserts that make growing a config struct a deliberate act. */
#define WEFT__ENDS_AT(type, last) (sizeof(type) - WEFT__SIZE_TO(type, last) < _Alignof(type))

/* Copies the caller's struct `src` of `size` bytes into `dst` of `own` bytes
 * (this library's sizeof): min(size, own) bytes, the rest of dst zeroed, so a
 * shorter struct from a binary built against an older weft reads as the
 * defaults (zero) for the fields it does not have.  A longer struct (a newer
 * header) is accepted when every byte past `own` is zero; otherwise it is
 * WEFT_EINVAL, logged (error level) and set as the thread's error message,
 * naming `type` and the offset of the first nonzero byte.  src must not be
 * NULL.  Any thread. */
weft_status weft__config_read(void *dst, size_t own, const void *src, size_t size, const char *type);

/* In a _sized entry point that returns a weft_status: points `cfg`, a
 * parameter of type `const type *` (NULL allowed: left NULL), at a local copy
 * read at `size` bytes, or returns the status of a bad tail. */
#define WEFT__CONFIG_IN(type, cfg, size)                                                 \
    type cfg##_copy_;                                                                    \
    if (cfg) {                                                                           \
        weft_status cfg##_st_ = weft__config_read(&cfg##_copy_, sizeof cfg##_copy_, cfg, \
                                                  size, #type);                          \
        if (cfg##_st_) return cfg##_st_;                                                 \
        cfg = &cfg##_copy_;                                                              \
    }

#endif
