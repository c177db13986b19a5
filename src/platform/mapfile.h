/* weft — platform: a file mapped into memory and shared with other processes
 * (the live statistics block that weft-top reads), and a file replaced whole
 * in one step (the Prometheus textfile).  Internal. */
#ifndef WEFT_PLATFORM_MAPFILE_H
#define WEFT_PLATFORM_MAPFILE_H

#include <stddef.h>

typedef struct weft__mapfile {
    void *addr; /* len bytes, shared with every process that maps the file */
    size_t len;
    unsigned long long dev, ino; /* the file's identity (weft__mapfile_remove) */
} weft__mapfile;

/* Makes `path` a new file (mode 0644) of len bytes of zeros and maps it
 * shared, read-write.  The file is made beside it ("<path>.<pid>.<n>.tmp"),
 * sized, then renamed over path: a file already there is replaced, never
 * truncated, since another publisher (an executor, another process) may
 * still map it, and its writes past a shrunk end would kill it with SIGBUS;
 * and a reader never finds path empty.  0, WEFT_EINVAL (NULL path or out,
 * len 0) or WEFT_ESYS (path names something that is not a regular file, left
 * alone; or cannot create, size, map or rename it: the temporary file is
 * removed and *out zeroed).  Any thread. */
int weft__mapfile_create(const char *path, size_t len, weft__mapfile *out);
/* Unmaps m (a zeroed m is allowed) and zeroes it. */
void weft__mapfile_close(weft__mapfile *m);
/* Removes `path` if it still names the file m maps (not one another publisher
 * has put there since).  0, or WEFT_ESYS (gone, another file, or cannot be
 * removed).  Before weft__mapfile_close. */
int weft__mapfile_remove(const weft__mapfile *m, const char *path);

/* Replaces `path` with len bytes of buf in one step: writes a temporary file
 * beside it ("<path>.<pid>.tmp"), then renames it over path, so a reader sees
 * the old file or the new one, never a part (node_exporter's textfile rule).
 * 0, WEFT_EINVAL (NULL path, or buf with len > 0 NULL) or WEFT_ESYS (path
 * names something that is not a regular file, left alone; or the write
 * failed: the temporary file is removed).  Any thread; two threads replacing one path at
 * once race on the temporary file (callers have one writer per path). */
int weft__file_replace(const char *path, const void *buf, size_t len);
/* Removes `path`.  0, or WEFT_ESYS (it did not exist, or cannot be removed). */
int weft__file_remove(const char *path);

#endif
