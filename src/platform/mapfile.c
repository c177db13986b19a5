/* Shared file mappings and whole-file replacement (mapfile.h). */
#include "platform/mapfile.h"
#include "platform/platform.h"
#include "weft/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* True if path names something that is not a regular file: a device
 * (/dev/null), a FIFO, a socket, a directory or a symbolic link.  Renaming
 * over it would replace it, and the publisher's stop would then remove the
 * file it put there: WEFT_STATS=/dev/null, run as root, deleted /dev/null.
 * Such a path is refused and left alone.  (Checked before the rename: a path
 * that changes in between is the caller's race.) */
static bool not_a_regular_file(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

int weft__mapfile_create(const char *path, size_t len, weft__mapfile *out) {
    if (!out) return WEFT_EINVAL;
    memset(out, 0, sizeof *out);
    if (!path || !len) return WEFT_EINVAL;
    if (not_a_regular_file(path)) return WEFT_ESYS;
    /* A new file renamed over path, not path opened with O_TRUNC: a file
     * there may be mapped by another publisher, whose writes past the
     * truncated end would raise SIGBUS in its process (mapfile.h). */
    static atomic_uint seq;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.%u.%u.tmp", path, weft__process_id(),
                     atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed));
    if (n < 0 || (size_t)n >= sizeof tmp) return WEFT_ESYS;
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return WEFT_ESYS;
    void *p = MAP_FAILED;
    struct stat st;
    if (ftruncate(fd, (off_t)len) == 0 && fstat(fd, &st) == 0)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the mapping keeps the file */
    if (p != MAP_FAILED && rename(tmp, path) != 0) {
        munmap(p, len);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED) {
        unlink(tmp);
        return WEFT_ESYS;
    }
    out->addr = p;
    out->len = len;
    out->dev = (unsigned long long)st.st_dev;
    out->ino = (unsigned long long)st.st_ino;
    return 0;
}

int weft__mapfile_remove(const weft__mapfile *m, const char *path) {
    struct stat st;
    if (!m || !m->addr || !path || stat(path, &st) != 0 || (unsigned long long)st.st_dev != m->dev ||
        (unsigned long long)st.st_ino != m->ino)
        return WEFT_ESYS;
    return unlink(path) == 0 ? 0 : WEFT_ESYS;
}

void weft__mapfile_close(weft__mapfile *m) {
    if (m && m->addr) munmap(m->addr, m->len);
    if (m) memset(m, 0, sizeof *m);
}

static int write_all(int fd, const char *p, size_t len) {
    while (len) {
        ssize_t r = write(fd, p, len);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r, len -= (size_t)r;
    }
    return 0;
}

int weft__file_replace(const char *path, const void *buf, size_t len) {
    if (!path || (len && !buf)) return WEFT_EINVAL;
    if (not_a_regular_file(path)) return WEFT_ESYS;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.%u.tmp", path, weft__process_id());
    if (n < 0 || (size_t)n >= sizeof tmp) return WEFT_EINVAL;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return WEFT_ESYS;
    int bad = write_all(fd, buf, len);
    if (close(fd) != 0) bad = -1;
    if (!bad && rename(tmp, path) == 0) return 0;
    unlink(tmp);
    return WEFT_ESYS;
}

int weft__file_remove(const char *path) { return path && unlink(path) == 0 ? 0 : WEFT_ESYS; }
