/* weft — platform: small files, directories, shared libraries and CPU masks,
 * for the topology layer (sysfs, hwloc by dlopen) and anyone else who needs
 * them.  The only code that opens files or libraries.  Internal. */
#ifndef WEFT_PLATFORM_FILES_H
#define WEFT_PLATFORM_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads the whole of a small file (a sysfs attribute) into buf, at most
 * cap - 1 bytes, and ends it with a NUL.  Returns the bytes read, or -1 when
 * the file cannot be opened or read (buf is then "").  cap must be >= 1.
 * Any thread. */
int weft__file_read(const char *path, char *buf, size_t cap);

/* A sysfs size ("48K", "1024K", "32M", "12345", trailing white space allowed)
 * in bytes: true and *out, or false.  Any thread. */
bool weft__parse_size(const char *s, uint64_t *out);

/* The largest cache of cpu0 in bytes (its last level: the L3 it shares), from
 * /sys/devices/system/cpu/cpu0/cache, or 0 when /sys does not say.  (Not
 * glibc's sysconf: on an EPYC VM it says 384 MiB, the package's L3s summed,
 * where this CPU shares 32.)  Any thread; no allocation. */
size_t weft__last_level_cache_bytes(void);

/* Calls fn(ctx, name) for each entry of the directory `path` except "." and
 * "..", in the order the OS gives; stops early when fn returns nonzero.
 * Returns 0, or -1 when the directory cannot be opened.  Any thread. */
int weft__dir_each(const char *path, int (*fn)(void *ctx, const char *name), void *ctx);

/* dlopen(name, RTLD_NOW | RTLD_LOCAL): a handle or NULL when the library is
 * not there (or fails to load).  Any thread. */
void *weft__dl_open(const char *name);
/* The address of `symbol` in lib, or NULL. */
void *weft__dl_sym(void *lib, const char *symbol);
/* Unloads lib (NULL is allowed). */
void weft__dl_close(void *lib);

/* The OS numbers of the CPUs in the calling thread's affinity mask, in
 * increasing order: writes at most cap of them to out and returns how many
 * there are (which may exceed cap), or -1 when the mask cannot be read. */
int weft__affinity_cpus(int *out, int cap);

/* Binds the calling thread to the n CPUs in cpus (OS numbers).  0, WEFT_EINVAL
 * (n == 0, or a number below 0 or past what the OS can name) or WEFT_ESYS. */
int weft__thread_bind_cpus(const int *cpus, size_t n);

#endif
