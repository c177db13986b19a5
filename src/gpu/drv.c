/* The backend shared by CUDA and HIP (drv.h says why): memory, copies,
 * streams, events, modules and launches through a weft__drv_api.  Every
 * entry makes the device's context current on the calling thread first
 * (workers move between devices and executors freely). */
#include "gpu/drv.h"

#include "core/alloc.h"
#include "core/error_detail.h"
#include "platform/files.h"

#include <limits.h>
#include <stdio.h>

#define STREAM_NON_BLOCKING 1 /* CU_STREAM_NON_BLOCKING, hipStreamNonBlocking */
#define EVENT_DISABLE_TIMING 2 /* CU_EVENT_DISABLE_TIMING, hipEventDisableTiming */
#define MEM_ATTACH_GLOBAL 1   /* CU_MEM_ATTACH_GLOBAL, hipMemAttachGlobal */

int weft__drv_fail(weft__drv *d, drv_res r, const char *call) {
    if (r == 0) return 0;
    if (r == DRV_NOT_READY) return WEFT_EAGAIN;
    char text[160];
    d->api.describe(d, r, text, sizeof text);
    weft__set_error_message("%s: %s: %s", d->prefix, call, text);
    return r == DRV_OUT_OF_MEMORY ? WEFT_ENOMEM : WEFT_EDEVICE;
}

#define DRV(dev) ((weft__drv *)(dev)->impl)
/* Calls api.fn with the context current; a weft status. */
#define DRV_CALL(d, fn, ...) (current(d) ? current(d) : weft__drv_fail((d), (d)->api.fn(__VA_ARGS__), #fn))

static int current(weft__drv *d) { return weft__drv_fail(d, d->api.make_current(d), "make_current"); }

static void drv_close(weft_gpu_device *dev) {
    weft__drv *d = DRV(dev);
    for (drv_module *m = d->modules, *next; m; m = next) {
        next = m->next;
        if (!current(d)) (void)d->api.module_unload(m->module);
        weft__free(m, sizeof *m);
    }
    if (d->api.release) d->api.release(d);
    weft__dl_close(d->lib);
    weft__mutex_destroy(&d->lock);
    weft__free(d, sizeof *d);
}

int weft__drv_open(weft_gpu_device *dev, const weft_gpu_config *cfg, const char *prefix,
                   int (*load)(weft__drv *d), int (*attach)(weft__drv *d)) {
    weft__drv *d = weft__calloc(sizeof *d);
    if (!d || weft__mutex_init(&d->lock) != 0) {
        if (d) weft__free(d, sizeof *d);
        return weft__fail(prefix, WEFT_ENOMEM, "no host memory for the device");
    }
    d->prefix = prefix;
    dev->impl = d;
    int n = 0, st = load(d);
    if (!st) st = weft__drv_fail(d, d->api.init(0), "init");
    if (!st) st = weft__drv_fail(d, d->api.device_count(&n), "device_count");
    if (!st && cfg->index >= (unsigned)n) {
        weft__set_error_message("%s: no device %u (%d found)", prefix, cfg->index, n);
        st = WEFT_ENOENT;
    }
    if (!st) st = weft__drv_fail(d, d->api.device_get(&d->device, (int)cfg->index), "device_get");
    if (!st) st = attach(d);
    if (!st) st = weft__drv_fail(d, d->api.device_name(dev->name, (int)sizeof dev->name - 1, d->device), "name");
    if (st) drv_close(dev);
    return st;
}

static int drv_mem_info(weft_gpu_device *dev, size_t *free_b, size_t *total_b) {
    return DRV_CALL(DRV(dev), mem_info, free_b, total_b);
}

static int drv_alloc(weft_gpu_device *dev, size_t bytes, unsigned flags, uint64_t *h, void **host) {
    weft__drv *d = DRV(dev);
    int st = (flags & WEFT_GPU_MANAGED) ? DRV_CALL(d, mem_alloc_managed, h, bytes, MEM_ATTACH_GLOBAL)
                                         : DRV_CALL(d, mem_alloc, h, bytes);
    *host = (!st && (flags & WEFT_GPU_MANAGED)) ? (void *)(uintptr_t)*h : NULL;
    return st;
}

static void drv_free(weft_gpu_device *dev, uint64_t h, size_t bytes, unsigned flags) {
    (void)(DRV_CALL(DRV(dev), mem_free, h));
}

static int drv_host_alloc(weft_gpu_device *dev, size_t bytes, void **p) {
    return DRV_CALL(DRV(dev), host_alloc, p, bytes);
}

static void drv_host_free(weft_gpu_device *dev, void *p) { (void)(DRV_CALL(DRV(dev), host_free, p)); }

static int drv_upload(weft_gpu_device *dev, void *stream, uint64_t dst, size_t off, const void *src, size_t n) {
    weft__drv *d = DRV(dev);
    return stream ? DRV_CALL(d, htod_async, dst + off, src, n, stream) : DRV_CALL(d, htod, dst + off, src, n);
}

static int drv_download(weft_gpu_device *dev, void *stream, void *dst, uint64_t src, size_t off, size_t n) {
    weft__drv *d = DRV(dev);
    return stream ? DRV_CALL(d, dtoh_async, dst, src + off, n, stream) : DRV_CALL(d, dtoh, dst, src + off, n);
}

/* Non-blocking streams: they do not wait for the legacy default stream, so
 * synchronous copies are unordered with them on every backend alike. */
static int drv_stream_create(weft_gpu_device *dev, void **stream) {
    return DRV_CALL(DRV(dev), stream_create, stream, STREAM_NON_BLOCKING);
}

static void drv_stream_destroy(weft_gpu_device *dev, void *stream) {
    (void)(DRV_CALL(DRV(dev), stream_destroy, stream));
}

static int drv_stream_sync(weft_gpu_device *dev, void *stream) { return DRV_CALL(DRV(dev), stream_sync, stream); }

static int drv_event_record(weft_gpu_device *dev, void *stream, void **event) {
    weft__drv *d = DRV(dev);
    int st = DRV_CALL(d, event_create, event, EVENT_DISABLE_TIMING);
    if (st) return st;
    st = DRV_CALL(d, event_record, *event, stream);
    if (st) (void)d->api.event_destroy(*event);
    return st;
}

static int drv_event_query(weft_gpu_device *dev, void *event) { return DRV_CALL(DRV(dev), event_query, event); }

static int drv_event_sync(weft_gpu_device *dev, void *event) { return DRV_CALL(DRV(dev), event_sync, event); }

static void drv_event_destroy(weft_gpu_device *dev, void *event) {
    (void)(DRV_CALL(DRV(dev), event_destroy, event));
}

/* The module loaded from `image` (loaded once per device; JIT-compiling PTX
 * takes milliseconds).  Under d->lock. */
static int get_module(weft__drv *d, const void *image, void **out) {
    for (drv_module *m = d->modules; m; m = m->next) {
        if (m->image == image) {
            *out = m->module;
            return 0;
        }
    }
    drv_module *m = weft__calloc(sizeof *m);
    if (!m) return weft__fail(d->prefix, WEFT_ENOMEM, "no host memory for a module");
    int st = DRV_CALL(d, module_load, &m->module, image);
    if (st) {
        weft__free(m, sizeof *m);
        return st;
    }
    m->image = image;
    m->next = d->modules;
    d->modules = m;
    *out = m->module;
    return 0;
}

static int drv_kernel_create(weft_gpu_device *dev, const weft_gpu_kernel_source *src, void **kernel) {
    weft__drv *d = DRV(dev);
    const void *image = dev->ops->kind == WEFT_GPU_CUDA ? src->cuda : src->hip;
    if (!image) {
        weft__set_error_message("%s: kernel %s has no %s image", d->prefix, src->name, d->prefix);
        return WEFT_ENOENT;
    }
    void *module = NULL;
    weft__mutex_lock(&d->lock);
    int st = get_module(d, image, &module);
    weft__mutex_unlock(&d->lock);
    if (!st) st = current(d);
    if (st) return st;
    drv_res r = d->api.module_function(kernel, module, src->name);
    st = weft__drv_fail(d, r, "module_function");
    return r == 500 ? WEFT_ENOENT : st; /* CUDA_ERROR_NOT_FOUND, hipErrorNotFound: no such entry point */
}

static void drv_kernel_destroy(weft_gpu_device *dev, void *kernel) { /* functions live as long as their module */ }

static int drv_launch(weft_gpu_device *dev, void *stream, void *kernel, const weft_gpu_range *range,
                      const weft_gpu_arg *args, size_t nargs) {
    weft__drv *d = DRV(dev);
    static const unsigned dflt[3][3] = {{256, 1, 1}, {16, 16, 1}, {8, 8, 4}};
    unsigned dims = weft__gpu_range_dims(range), block[3], grid[3];
    bool local = range->local[0] || range->local[1] || range->local[2];
    for (int i = 0; i < 3; i++) {
        size_t b = local ? (range->local[i] ? range->local[i] : 1) : dflt[dims - 1][i];
        size_t g = (range->global[i] + b - 1) / b;
        if (b > UINT_MAX || g > UINT_MAX) {
            weft__set_error_message("%s: launch of %zu items in groups of %zu is too large", d->prefix,
                                    range->global[i], b);
            return WEFT_EDEVICE;
        }
        block[i] = (unsigned)b;
        grid[i] = (unsigned)g;
    }
    void *params[WEFT_GPU_MAX_ARGS];
    for (size_t i = 0; i < nargs; i++)
        params[i] = args[i].buffer ? (void *)&args[i].buffer->h : (void *)args[i].value;
    int st = DRV_CALL(d, launch, kernel, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, stream, params,
                      NULL);
    return st == WEFT_ENOMEM ? WEFT_EDEVICE : st; /* out of resources for a launch: refused */
}

#define DRV_OPS(KIND, OPEN)                                                                                    \
    {                                                                                                          \
        .kind = KIND, .open = OPEN, .close = drv_close, .mem_info = drv_mem_info, .alloc = drv_alloc,          \
        .free = drv_free, .host_alloc = drv_host_alloc, .host_free = drv_host_free, .upload = drv_upload,      \
        .download = drv_download, .stream_create = drv_stream_create, .stream_destroy = drv_stream_destroy,    \
        .stream_sync = drv_stream_sync, .event_record = drv_event_record, .event_query = drv_event_query,      \
        .event_sync = drv_event_sync, .event_destroy = drv_event_destroy, .kernel_create = drv_kernel_create, \
        .kernel_destroy = drv_kernel_destroy, .launch = drv_launch,                                            \
    }

int weft__gpu_cuda_open(weft_gpu_device *dev, const weft_gpu_config *cfg);
int weft__gpu_hip_open(weft_gpu_device *dev, const weft_gpu_config *cfg);
const weft__gpu_ops weft__gpu_cuda_ops = DRV_OPS(WEFT_GPU_CUDA, weft__gpu_cuda_open);
const weft__gpu_ops weft__gpu_hip_ops = DRV_OPS(WEFT_GPU_HIP, weft__gpu_hip_open);
