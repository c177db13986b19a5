/* Devices: the backend probe (CUDA, HIP, OpenCL, emulator; WEFT_GPU), open and
 * close, memory info, device-wide synchronize. */
#include "core/alloc.h"
#include "core/env.h"
#include "core/error_detail.h"
#include "core/log.h"
#include "gpu/backend.h"

#include <stdio.h>
#include <string.h>

/* Indexed by weft_gpu_kind. */
static const weft__gpu_ops *const backends[] = {
    NULL, &weft__gpu_cuda_ops, &weft__gpu_hip_ops, &weft__gpu_opencl_ops, &weft__gpu_emulator_ops,
};
static const char *const kind_names[] = {"auto", "cuda", "hip", "opencl", "emulator"};

const char *weft_gpu_kind_name(weft_gpu_kind kind) {
    return (unsigned)kind < sizeof kind_names / sizeof *kind_names ? kind_names[kind] : "?";
}

/* Each failure below says why (docs/errors.md R3: every failing call sets
 * the thread's message; out of memory left the message of an earlier,
 * unrelated failure in place). */
static weft_gpu_device *open_one(const weft__gpu_ops *ops, const weft_gpu_config *cfg, int *st) {
    weft_gpu_device *d = weft__calloc(sizeof *d);
    if (!d) {
        *st = weft__fail("weft_gpu_open", WEFT_ENOMEM, "no memory for the device");
        return NULL;
    }
    d->ops = ops;
    d->cfg = *cfg;
    d->cfg.kind = ops->kind;
    if (weft__mutex_init(&d->lock) != 0) {
        weft__free(d, sizeof *d);
        *st = weft__fail("weft_gpu_open", WEFT_ENOMEM, "the device's lock could not be made");
        return NULL;
    }
    if (weft__mutex_init(&d->watch_lock) != 0) {
        weft__mutex_destroy(&d->lock);
        weft__free(d, sizeof *d);
        *st = weft__fail("weft_gpu_open", WEFT_ENOMEM, "the device's lock could not be made");
        return NULL;
    }
    *st = ops->open(d, &d->cfg);
    if (*st == 0) {
        d->pool = weft__gpu_pool_new(d, d->cfg.streams, true, (weft_status *)st);
        if (d->pool) return d;
        ops->close(d);
    }
    weft__mutex_destroy(&d->watch_lock);
    weft__mutex_destroy(&d->lock);
    weft__free(d, sizeof *d);
    return NULL;
}

/* The backend WEFT_GPU names: a kind, WEFT_GPU_AUTO when unset or bad, or -1
 * for "none". */
static int kind_from_env(void) {
    static const char *const words[] = {"cuda", "hip", "opencl", "emulator", "none", NULL};
    int k = weft__env_choice("WEFT_GPU", words, "the first backend found (cuda, hip, opencl, emulator)");
    if (k < 0) return WEFT_GPU_AUTO;
    return k == 4 ? -1 : k + 1;
}

weft_gpu_device *weft_gpu_open(const weft_gpu_config *config, weft_status *err) {
    weft_gpu_config cfg = config ? *config : (weft_gpu_config){0};
    int st = WEFT_EINVAL, kind = cfg.kind;
    weft_gpu_device *d = NULL;
    if (cfg.streams == 0) cfg.streams = 4;
    if (cfg.emulator_memory == 0) cfg.emulator_memory = (size_t)1 << 30;
    /* A kind out of range is WEFT_EINVAL before WEFT_GPU is read: a negative
     * one was taken for kind_from_env's "none" (WEFT_ENOENT, "WEFT_GPU=none"). */
    if (kind < WEFT_GPU_AUTO || kind > WEFT_GPU_EMULATOR || cfg.streams > 256) {
        weft__set_error_message("weft_gpu_open: bad config (kind %d, streams %u)", kind, cfg.streams);
    } else if (kind == WEFT_GPU_AUTO && (kind = kind_from_env()) < 0) {
        st = WEFT_ENOENT;
        weft__set_error_message("weft_gpu_open: no device: WEFT_GPU=none");
    } else if (kind != WEFT_GPU_AUTO) {
        d = open_one(backends[kind], &cfg, &st);
    } else {
        /* Probe in order; the emulator always opens, so what a failed probe said
         * about a real backend is only kept when nothing opened: once one opens,
         * the thread's message is put back as it was (a call that succeeds sets
         * none, docs/errors.md R3). */
        weft__saved_message saved;
        weft__error_message_save(&saved);
        /* A backend out of memory may well have a device: the probe stops
         * there with WEFT_ENOMEM, rather than hand out the next backend's
         * (a machine with a GPU got the emulator for one failed allocation). */
        for (int k = WEFT_GPU_CUDA; k <= WEFT_GPU_EMULATOR && !d && st != WEFT_ENOMEM; k++)
            d = open_one(backends[k], &cfg, &st);
        if (d) weft__error_message_restore(&saved);
    }
    if (err) *err = d ? WEFT_OK : (weft_status)st;
    return d;
}

/* Appends ", <n> <what>[s]" to buf at *len when n > 0. */
static void say_live(char *buf, size_t size, size_t *len, size_t n, const char *what) {
    if (n == 0 || *len >= size) return;
    int w = snprintf(buf + *len, size - *len, "%s%zu %s%s", *len ? ", " : "", n, what, n == 1 ? "" : "s");
    if (w > 0) *len += (size_t)w;
}

/* WEFT_EBUSY, with a message naming them, while the program's objects of the
 * device are alive or a guard holds a stream of the device's own pool (a GPU
 * task, weft_gpu_call or stage in progress, or weft_gpu_stream_begin without
 * its end): each would use the freed device.  Else 0. */
static int check_idle(weft_gpu_device *dev) {
    char what[200];
    size_t len = 0, guards = 0;
    what[0] = '\0';
    say_live(what, sizeof what, &len, atomic_load_explicit(&dev->live_buffers, memory_order_relaxed), "buffer");
    say_live(what, sizeof what, &len, atomic_load_explicit(&dev->live_streams, memory_order_relaxed), "stream");
    say_live(what, sizeof what, &len, atomic_load_explicit(&dev->live_pools, memory_order_relaxed), "stream pool");
    say_live(what, sizeof what, &len, atomic_load_explicit(&dev->live_events, memory_order_relaxed), "event");
    say_live(what, sizeof what, &len, atomic_load_explicit(&dev->live_kernels, memory_order_relaxed), "kernel");
    for (unsigned i = 0; dev->pool && i < dev->pool->n; i++)
        guards += atomic_load_explicit(&dev->pool->held[i], memory_order_acquire);
    say_live(what, sizeof what, &len, guards, "open guard");
    if (len == 0) return 0;
    weft__log(WEFT_LOG_WARN, "weft_gpu_close: the device still has %s (destroy them first): nothing closed", what);
    return weft__fail("weft_gpu_close", WEFT_EBUSY,
                      "the device still has %s (destroy them first, end the guards): nothing closed", what);
}

weft_status weft_gpu_close(weft_gpu_device *dev) {
    if (!dev) return WEFT_OK;
    int busy = check_idle(dev);
    if (busy) return (weft_status)busy;
    (void)weft_gpu_synchronize(dev);
    weft__gpu_for_cache_free(dev);
    weft__gpu_pool_free(dev->pool);
    dev->ops->close(dev);
    weft__mutex_destroy(&dev->watch_lock);
    weft__mutex_destroy(&dev->lock);
    weft__free(dev, sizeof *dev);
    return WEFT_OK;
}

weft_gpu_kind weft_gpu_device_kind(const weft_gpu_device *dev) { return dev ? dev->ops->kind : WEFT_GPU_AUTO; }

const char *weft_gpu_device_name(const weft_gpu_device *dev) { return dev ? dev->name : ""; }

weft_gpu_stream_pool *weft_gpu_device_pool(weft_gpu_device *dev) { return dev ? dev->pool : NULL; }

weft_status weft_gpu_mem_info(weft_gpu_device *dev, size_t *free_bytes, size_t *total_bytes) {
    if (!dev) return weft__fail(__func__, WEFT_EINVAL, "dev is NULL");
    size_t f = 0, t = 0;
    int st = dev->ops->mem_info(dev, &f, &t);
    if (st == 0) {
        if (free_bytes) *free_bytes = f;
        if (total_bytes) *total_bytes = t;
    }
    return (weft_status)st;
}

weft_status weft_gpu_synchronize(weft_gpu_device *dev) {
    if (!dev) return weft__fail(__func__, WEFT_EINVAL, "dev is NULL");
    int first = 0;
    /* Under the lock: a stream cannot be destroyed while it is synchronized
     * here (destroy unlinks it under the same lock first). */
    weft__mutex_lock(&dev->lock);
    for (weft_gpu_stream *s = dev->streams; s; s = s->next) {
        int st = dev->ops->stream_sync(dev, s->h);
        if (st && !first) first = st;
    }
    weft__mutex_unlock(&dev->lock);
    return (weft_status)first;
}
