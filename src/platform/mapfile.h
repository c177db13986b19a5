/* weft — platform: a file mapped into memory and shared with other processes
 * (the live statistics block that weft-top reads), and a file replaced whole
 * in one step (the Prometheus textfile).  Internal. */
#ifndef WEFT_PLATFORM_MAPFILE_H
#define WEFT_PLATFORM_MAPFILE_H

#include <stddef.h>

typedef struct weft__mapfile {
    void *addr; /* len bytes, shared with every process that maps the file */
    size_t len;
} weft__mapfile;

/* Creates (or truncates) `path` (mode 0644), sizes it to len bytes of zeros and
 * maps it shared, read-write.  0, WEFT_EINVAL (NULL path or out, len 0) or
 * WEFT_ESYS (cannot create, size or map it: *out is then zeroed).  Any thread. */
int weft__mapfile_create(const char *path, size_t len, weft__mapfile *out);
/* Unmaps m (a zeroed m is allowed) and zeroes it. */
void weft__mapfile_close(weft__mapfile *m);

/* Replaces `path` with len bytes of buf in one step: writes a temporary file
 * beside it ("<path>.<pid>.tmp"), then renames it over path, so a reader sees
 * the old file or the new one, never a part (node_exporter's textfile rule).
 * 0, WEFT_EINVAL (NULL path, or buf with len > 0 NULL) or WEFT_ESYS (the
 * temporary file is removed).  Any thread; two threads replacing one path at
 * once race on the temporary file (callers have one writer per path). */
int weft__file_replace(const char *path, const void *buf, size_t len);
/* Removes `path`.  0, or WEFT_ESYS (it did not exist, or cannot be removed). */
int weft__file_remove(const char *path);

#endif
