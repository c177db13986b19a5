/* Kernels from source at run time: weft_gpu_parallel_for wraps an
 * element-wise body in a kernel for the device's backend (OpenCL C, or CUDA
 * C++ compiled to PTX by NVRTC), builds it once per device and text, and
 * launches it over n items. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"

#include <stdio.h>
#include <string.h>

/* A built kernel of the device's cache (dev->fors, under dev->watch_lock). */
struct weft__gpu_for {
    struct weft__gpu_for *next;
    char *key; /* params, '\n', body */
    size_t key_bytes;
    weft_gpu_host_fn host; /* the emulator's entry is keyed by this */
    weft_gpu_kernel *k;
    char *image; /* CUDA: the PTX the module was loaded from (kept: modules are cached by address) */
    size_t image_bytes;
};

static const char opencl_fmt[] =
    "#define WEFT_GLOBAL __global\n"
    "__kernel void weft_for(ulong weft_n%s%s) {\n"
    "    ulong i = get_global_id(0);\n"
    "    if (i >= weft_n) return;\n"
    "    { %s }\n"
    "}\n";

static const char cuda_fmt[] =
    "#define WEFT_GLOBAL\n"
    "extern \"C\" __global__ void weft_for(unsigned long long weft_n%s%s) {\n"
    "    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= weft_n) return;\n"
    "    { %s }\n"
    "}\n";

/* The kernel's source for `fmt`, allocated (*bytes its size), or NULL. */
static char *make_source(const char *fmt, const weft_gpu_for_kernel *fk, size_t *bytes) {
    const char *sep = fk->params && fk->params[0] ? ", " : "";
    const char *params = fk->params ? fk->params : "";
    int n = snprintf(NULL, 0, fmt, sep, params, fk->body);
    if (n < 0) return NULL;
    *bytes = (size_t)n + 1;
    char *s = weft__alloc(*bytes);
    if (s) snprintf(s, *bytes, fmt, sep, params, fk->body);
    return s;
}

static void entry_free(struct weft__gpu_for *e) {
    weft_gpu_kernel_destroy(e->k);
    if (e->image) weft__free(e->image, e->image_bytes);
    if (e->key) weft__free(e->key, e->key_bytes);
    weft__free(e, sizeof *e);
}

void weft__gpu_for_cache_free(weft_gpu_device *dev) {
    while (dev->fors) {
        struct weft__gpu_for *e = dev->fors;
        dev->fors = e->next;
        entry_free(e);
    }
}

/* Builds the kernel for fk on dev into e (e->key set).  0 or a status. */
static int build(weft_gpu_device *dev, const weft_gpu_for_kernel *fk, struct weft__gpu_for *e) {
    weft_gpu_kernel_source src = {.name = "weft_for"};
    char *text = NULL;
    size_t text_bytes = 0;
    int st = 0;
    switch (dev->ops->kind) {
    case WEFT_GPU_EMULATOR:
        if (!fk->host) {
            weft__set_error_message("emulator: weft_gpu_parallel_for needs a host function (no compiler)");
            return WEFT_ENOENT;
        }
        src.host = fk->host;
        break;
    case WEFT_GPU_OPENCL:
        if (!(text = make_source(opencl_fmt, fk, &text_bytes)))
            return weft__fail("weft_gpu_parallel_for", WEFT_ENOMEM, "no memory for the kernel's source");
        src.opencl = text;
        break;
    case WEFT_GPU_CUDA:
        if (!(text = make_source(cuda_fmt, fk, &text_bytes)))
            return weft__fail("weft_gpu_parallel_for", WEFT_ENOMEM, "no memory for the kernel's source");
        st = weft__gpu_nvrtc_ptx(text, "compute_75", &e->image, &e->image_bytes);
        weft__free(text, text_bytes);
        text = NULL;
        if (st) return st;
        src.cuda = e->image;
        break;
    default:
        weft__set_error_message("%s: weft_gpu_parallel_for is not supported on this backend",
                                weft_gpu_kind_name(dev->ops->kind));
        return WEFT_ENOENT;
    }
    weft_status kst;
    e->k = weft__gpu_kernel_new(dev, &src, true, &kst); /* the cache's, freed by weft_gpu_close */
    if (text) weft__free(text, text_bytes); /* OpenCL keeps its own copy in its program cache */
    return kst;
}

/* The cached kernel for fk, built on first use.  NULL with *st. */
static weft_gpu_kernel *kernel_for(weft_gpu_device *dev, const weft_gpu_for_kernel *fk, int *st) {
    bool emulator = dev->ops->kind == WEFT_GPU_EMULATOR;
    const char *params = fk->params ? fk->params : "";
    size_t plen = strlen(params), blen = strlen(fk->body), key_bytes = plen + blen + 2;
    weft__mutex_lock(&dev->watch_lock);
    for (struct weft__gpu_for *e = dev->fors; e; e = e->next) {
        bool same = emulator ? e->host == fk->host
                         : e->key_bytes == key_bytes && memcmp(e->key, params, plen) == 0 &&
                               e->key[plen] == '\n' && memcmp(e->key + plen + 1, fk->body, blen + 1) == 0;
        if (same) {
            weft__mutex_unlock(&dev->watch_lock);
            return e->k;
        }
    }
    weft__mutex_unlock(&dev->watch_lock);
    /* Built outside the lock (a compile takes milliseconds); a racing build of
     * the same text adds a second entry, which is harmless. */
    struct weft__gpu_for *e = weft__calloc(sizeof *e);
    if (!e || !(e->key = weft__alloc(key_bytes))) {
        if (e) weft__free(e, sizeof *e);
        *st = weft__fail("weft_gpu_parallel_for", WEFT_ENOMEM, "no memory for the kernel's cache entry");
        return NULL;
    }
    e->key_bytes = key_bytes;
    memcpy(e->key, params, plen);
    e->key[plen] = '\n';
    memcpy(e->key + plen + 1, fk->body, blen + 1);
    e->host = fk->host;
    *st = build(dev, fk, e);
    if (*st) {
        entry_free(e);
        return NULL;
    }
    weft__mutex_lock(&dev->watch_lock);
    e->next = dev->fors;
    dev->fors = e;
    weft__mutex_unlock(&dev->watch_lock);
    return e->k;
}

weft_status weft_gpu_parallel_for(weft_gpu_stream *s, size_t n, const weft_gpu_for_kernel *fk,
                                  const weft_gpu_arg *args, size_t nargs) {
    if (!s || !fk || !fk->body || nargs >= WEFT_GPU_MAX_ARGS || (nargs && !args)) { /* nargs + 1 could wrap */
        weft__set_error_message("weft_gpu_parallel_for: it needs a stream, a body, and at most %d arguments",
                                WEFT_GPU_MAX_ARGS - 1);
        return WEFT_EINVAL;
    }
    if (n == 0) return WEFT_OK;
    weft_gpu_device *dev = s->dev;
    int st;
    weft_gpu_kernel *k = kernel_for(dev, fk, &st);
    if (!k) return (weft_status)st;
    weft_gpu_range range = {.global = {n}};
    if (dev->ops->kind == WEFT_GPU_EMULATOR) return weft_gpu_launch(s, k, &range, args, nargs);
    /* The item count goes first, as the generated kernel takes it. */
    unsigned long long count = n;
    weft_gpu_arg all[WEFT_GPU_MAX_ARGS];
    all[0] = WEFT_GPU_ARG_VALUE(count);
    if (nargs) memcpy(all + 1, args, nargs * sizeof *args);
    return weft_gpu_launch(s, k, &range, all, nargs + 1);
}
