/* Typed device buffers, pinned host memory, and copies between them. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"

#include <string.h>

weft_gpu_buffer *weft_gpu_buffer_create(weft_gpu_device *dev, size_t elem_size, size_t count, unsigned flags,
                                        weft_status *err) {
    int st = WEFT_EINVAL;
    weft_gpu_buffer *b = NULL;
    if (!dev || !elem_size || !count || count > SIZE_MAX / elem_size || (flags & ~WEFT_GPU_MANAGED)) {
        weft__set_error_message("weft_gpu_buffer_create: bad buffer (elem_size %zu, count %zu, flags %#x)", elem_size,
                                count, flags);
        goto out;
    }
    b = weft__calloc(sizeof *b);
    if (!b) {
        st = weft__fail_st(__func__, WEFT_ENOMEM);
        goto out;
    }
    *b = (weft_gpu_buffer){.dev = dev, .elem_size = elem_size, .count = count, .flags = flags};
    st = dev->ops->alloc(dev, elem_size * count, flags, &b->h, &b->host);
    if (st) {
        weft__free(b, sizeof *b);
        b = NULL;
    } else {
        atomic_fetch_add_explicit(&dev->live_buffers, 1, memory_order_relaxed);
    }
out:
    if (err) *err = (weft_status)st;
    return b;
}

void weft_gpu_buffer_destroy(weft_gpu_buffer *buf) {
    if (!buf) return;
    buf->dev->ops->free(buf->dev, buf->h, buf->elem_size * buf->count, buf->flags);
    atomic_fetch_sub_explicit(&buf->dev->live_buffers, 1, memory_order_relaxed);
    weft__free(buf, sizeof *buf);
}

size_t weft_gpu_buffer_count(const weft_gpu_buffer *buf) { return buf ? buf->count : 0; }
size_t weft_gpu_buffer_elem_size(const weft_gpu_buffer *buf) { return buf ? buf->elem_size : 0; }
size_t weft_gpu_buffer_bytes(const weft_gpu_buffer *buf) { return buf ? buf->count * buf->elem_size : 0; }
void *weft_gpu_buffer_host_ptr(const weft_gpu_buffer *buf) { return buf ? buf->host : NULL; }

/* Host memory with its size in a 64-byte header, as host_free is not told it:
 * the "pinned" memory of backends whose device reads host memory anyway. */
int weft__gpu_plain_host_alloc(weft_gpu_device *dev, size_t bytes, void **p) {
    /* The failure is decided here, so the message is set here (R3): the
     * driver backends' host_alloc sets the driver's. */
    unsigned char *m = bytes <= SIZE_MAX - 64 ? weft__alloc_aligned(bytes + 64, 64) : NULL;
    if (!m) return weft__fail("weft_gpu_host_alloc", WEFT_ENOMEM, "%zu bytes could not be allocated", bytes);
    memcpy(m, &bytes, sizeof bytes);
    *p = m + 64;
    return 0;
}

void weft__gpu_plain_host_free(weft_gpu_device *dev, void *p) {
    unsigned char *m = (unsigned char *)p - 64;
    size_t bytes;
    memcpy(&bytes, m, sizeof bytes);
    weft__free_aligned(m, bytes + 64, 64);
}

void *weft_gpu_host_alloc(weft_gpu_device *dev, size_t bytes, weft_status *err) {
    void *p = NULL;
    int st = dev && bytes ? dev->ops->host_alloc(dev, bytes, &p)
                          : weft__fail(__func__, WEFT_EINVAL, "invalid argument (!(dev && bytes))");
    if (err) *err = (weft_status)st;
    return st ? NULL : p;
}

void weft_gpu_host_free(weft_gpu_device *dev, void *p) {
    if (dev && p) dev->ops->host_free(dev, p);
}

/* The checks every copy makes: WEFT_EINVAL, or 0 with *bytes and *off set.
 * The message names the call made (fn) and what is wrong (docs/errors.md,
 * R3): it named "weft_gpu_copy", no call of gpu.h, and called a NULL host
 * pointer or a stream of another device a bad range. */
static int check_copy(const char *fn, const weft_gpu_stream *s, const weft_gpu_buffer *b, size_t first,
                      const void *host, size_t count, size_t *off, size_t *bytes) {
    if (!b) return weft__fail(fn, WEFT_EINVAL, "the buffer is NULL");
    if (!host && count) return weft__fail(fn, WEFT_EINVAL, "the host pointer is NULL with count %zu", count);
    if (first > b->count || count > b->count - first)
        return weft__fail(fn, WEFT_EINVAL, "elements %zu..+%zu are past the end of a buffer of %zu", first, count,
                          b->count);
    if (s && s->dev != b->dev)
        return weft__fail(fn, WEFT_EINVAL, "the buffer and the stream are of different devices");
    *off = first * b->elem_size;
    *bytes = count * b->elem_size;
    return 0;
}

static weft_status upload(const char *fn, weft_gpu_stream *s, weft_gpu_buffer *dst, size_t first, const void *src,
                          size_t count) {
    size_t off = 0, n = 0;
    int st = check_copy(fn, s, dst, first, src, count, &off, &n);
    if (st || n == 0) return (weft_status)st;
    if (s) atomic_store_explicit(&s->query_stale, true, memory_order_relaxed);
    return (weft_status)dst->dev->ops->upload(dst->dev, s ? s->h : NULL, dst->h, off, src, n);
}

static weft_status download(const char *fn, weft_gpu_stream *s, const weft_gpu_buffer *src, size_t first, void *dst,
                            size_t count) {
    size_t off = 0, n = 0;
    int st = check_copy(fn, s, src, first, dst, count, &off, &n);
    if (st || n == 0) return (weft_status)st;
    if (s) atomic_store_explicit(&s->query_stale, true, memory_order_relaxed);
    return (weft_status)src->dev->ops->download(src->dev, s ? s->h : NULL, dst, src->h, off, n);
}

weft_status weft_gpu_copy_to_device(weft_gpu_buffer *dst, size_t first, const void *src, size_t count) {
    return upload(__func__, NULL, dst, first, src, count);
}

weft_status weft_gpu_copy_to_host(const weft_gpu_buffer *src, size_t first, void *dst, size_t count) {
    return download(__func__, NULL, src, first, dst, count);
}

weft_status weft_gpu_copy_to_device_async(weft_gpu_stream *s, weft_gpu_buffer *dst, size_t first, const void *src,
                                          size_t count) {
    return s ? upload(__func__, s, dst, first, src, count) : weft__fail(__func__, WEFT_EINVAL, "s is NULL");
}

weft_status weft_gpu_copy_to_host_async(weft_gpu_stream *s, const weft_gpu_buffer *src, size_t first, void *dst,
                                        size_t count) {
    return s ? download(__func__, s, src, first, dst, count) : weft__fail(__func__, WEFT_EINVAL, "s is NULL");
}
