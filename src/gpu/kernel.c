/* Kernels: preparing one for a device, and launches with checked arguments. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"

weft_gpu_kernel *weft__gpu_kernel_new(weft_gpu_device *dev, const weft_gpu_kernel_source *src, bool cached,
                                      weft_status *err) {
    int st = WEFT_EINVAL;
    weft_gpu_kernel *k = NULL;
    if (!dev || !src || (!src->name && !(dev->ops->kind == WEFT_GPU_EMULATOR && src->host))) {
        weft__set_error_message("weft_gpu_kernel_create: kernel needs a device, a source and an entry point name");
        goto out;
    }
    k = weft__calloc(sizeof *k);
    if (!k) {
        st = weft__fail_st("weft_gpu_kernel_create", WEFT_ENOMEM);
        goto out;
    }
    k->dev = dev;
    k->cached = cached;
    st = dev->ops->kernel_create(dev, src, &k->h);
    if (st) {
        weft__free(k, sizeof *k);
        k = NULL;
    } else if (!cached) {
        atomic_fetch_add_explicit(&dev->live_kernels, 1, memory_order_relaxed);
    }
out:
    if (err) *err = (weft_status)st;
    return k;
}

weft_gpu_kernel *weft_gpu_kernel_create(weft_gpu_device *dev, const weft_gpu_kernel_source *src, weft_status *err) {
    return weft__gpu_kernel_new(dev, src, false, err);
}

void weft_gpu_kernel_destroy(weft_gpu_kernel *k) {
    if (!k) return;
    k->dev->ops->kernel_destroy(k->dev, k->h);
    if (!k->cached) atomic_fetch_sub_explicit(&k->dev->live_kernels, 1, memory_order_relaxed);
    weft__free(k, sizeof *k);
}

static int check_args(const weft_gpu_device *dev, const weft_gpu_arg *args, size_t nargs) {
    if (nargs > WEFT_GPU_MAX_ARGS || (nargs && !args))
        return weft__fail("weft_gpu_launch", WEFT_EINVAL, "more than %d arguments, or args is NULL", WEFT_GPU_MAX_ARGS);
    for (size_t i = 0; i < nargs; i++) {
        const weft_gpu_arg *a = &args[i];
        bool ok = a->buffer ? a->buffer->dev == dev : (a->value && a->size);
        if (!ok) {
            weft__set_error_message(
                "weft_gpu_launch: kernel argument %zu is neither a buffer of this device nor a value", i);
            return WEFT_EINVAL;
        }
    }
    return 0;
}

weft_status weft_gpu_launch(weft_gpu_stream *s, weft_gpu_kernel *k, const weft_gpu_range *range,
                            const weft_gpu_arg *args, size_t nargs) {
    if (!s || !k || !range || k->dev != s->dev)
        return weft__fail(__func__, WEFT_EINVAL, "s, k or range is NULL, or the kernel is of another device");
    weft_gpu_range r = *range;
    for (int i = 0; i < 3; i++) {
        if (r.global[i] == 0) r.global[i] = 1;
    }
    if (check_args(s->dev, args, nargs)) return WEFT_EINVAL; /* check_args said why */
    atomic_store_explicit(&s->query_stale, true, memory_order_relaxed);
    return (weft_status)s->dev->ops->launch(s->dev, s->h, k->h, &r, args, nargs);
}
