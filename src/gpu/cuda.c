/* The CUDA backend's loader: libcuda.so.1 through dlopen, every entry point
 * through cuGetProcAddress at one fixed API version.  Looking symbols up by
 * name gives the oldest ABI of each (cuMemAlloc is the 32-bit one;
 * cuMemAlloc_v2 the one cuda.h means), while cuGetProcAddress(name, version)
 * gives the ABI that version's cuda.h declares.  No CUDA header is needed to
 * build: the signatures are those of weft__drv_api (drv.h). */
#include "gpu/drv.h"

#include "core/error_detail.h"
#include "platform/files.h"

#include <stdio.h>

#define CUDA_API_VERSION 12000 /* the ABI of CUDA 12.0's cuda.h */

/* cuGetProcAddress as libcuda exports it under that name (the 4-argument
 * form of CUDA 11.3; cuda.h 12 renames its own declaration to _v2). */
typedef drv_res (*get_proc_fn)(const char *symbol, void **fn, int version, uint64_t flags);

/* Entry points beyond the shared table; one libcuda per process, so these
 * are the same for every device (relaxed atomics: written at each load with
 * the same values). */
static _Atomic(drv_res (*)(drv_res, const char **)) error_name, error_string;
static _Atomic(drv_res (*)(void *)) ctx_set_current;
static _Atomic(drv_res (*)(void **, int)) primary_retain;
static _Atomic(drv_res (*)(int)) primary_release;

/* The context last made current on this thread by weft (skips the driver
 * call when it is already current; a program that switches contexts behind
 * weft's back on a worker thread should call cuCtxSetCurrent back). */
static _Thread_local void *tls_context;

static void cuda_describe(weft__drv *d, drv_res r, char *buf, size_t len) {
    const char *name = NULL, *text = NULL;
    drv_res (*n)(drv_res, const char **) = atomic_load_explicit(&error_name, memory_order_relaxed);
    drv_res (*s)(drv_res, const char **) = atomic_load_explicit(&error_string, memory_order_relaxed);
    if (n) (void)n(r, &name);
    if (s) (void)s(r, &text);
    snprintf(buf, len, "%s: %s", name ? name : "CUDA error", text ? text : "?");
    if (!name) snprintf(buf, len, "CUDA error %d", r);
}

static drv_res cuda_make_current(weft__drv *d) {
    if (tls_context == d->context) return 0;
    drv_res r = atomic_load_explicit(&ctx_set_current, memory_order_relaxed)(d->context);
    if (r == 0) tls_context = d->context;
    return r;
}

static void cuda_release(weft__drv *d) {
    if (!d->context) return;
    if (tls_context == d->context) tls_context = NULL;
    (void)atomic_load_explicit(&primary_release, memory_order_relaxed)(d->device);
}

struct entry {
    const char *name;
    size_t offset; /* in weft__drv_api */
};
#define E(field, symbol) {symbol, offsetof(weft__drv_api, field)}
static const struct entry entries[] = {
    E(init, "cuInit"), E(device_count, "cuDeviceGetCount"), E(device_get, "cuDeviceGet"),
    E(device_name, "cuDeviceGetName"), E(mem_alloc, "cuMemAlloc"), E(mem_alloc_managed, "cuMemAllocManaged"),
    E(mem_free, "cuMemFree"), E(host_alloc, "cuMemAllocHost"), E(host_free, "cuMemFreeHost"),
    E(htod, "cuMemcpyHtoD"), E(dtoh, "cuMemcpyDtoH"), E(htod_async, "cuMemcpyHtoDAsync"),
    E(dtoh_async, "cuMemcpyDtoHAsync"), E(stream_create, "cuStreamCreate"), E(stream_destroy, "cuStreamDestroy"),
    E(stream_sync, "cuStreamSynchronize"), E(event_create, "cuEventCreate"), E(event_record, "cuEventRecord"),
    E(event_query, "cuEventQuery"), E(event_sync, "cuEventSynchronize"), E(event_destroy, "cuEventDestroy"),
    E(module_load, "cuModuleLoadData"), E(module_unload, "cuModuleUnload"),
    E(module_function, "cuModuleGetFunction"), E(launch, "cuLaunchKernel"), E(mem_info, "cuMemGetInfo"),
};
#undef E

static int lookup(get_proc_fn gpa, const char *name, void **fn) {
    *fn = NULL;
    if (gpa(name, fn, CUDA_API_VERSION, 0) == 0 && *fn) return 0;
    weft__set_error_message("cuda: cuGetProcAddress(%s, %d) failed (driver too old?)", name, CUDA_API_VERSION);
    return WEFT_ENOENT;
}

static int cuda_load(weft__drv *d) {
    d->lib = weft__dl_open("libcuda.so.1");
    if (!d->lib) {
        weft__set_error_message("cuda: libcuda.so.1 not found (or not loadable)");
        return WEFT_ENOENT;
    }
    get_proc_fn gpa;
    *(void **)&gpa = weft__dl_sym(d->lib, "cuGetProcAddress");
    if (!gpa) {
        weft__set_error_message("cuda: libcuda.so.1 has no cuGetProcAddress (a driver for CUDA 11.3 or later is needed)");
        return WEFT_ENOENT;
    }
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++)
        if (lookup(gpa, entries[i].name, (void **)((char *)&d->api + entries[i].offset))) return WEFT_ENOENT;
    void *f[5];
    static const char *const extra[5] = {"cuGetErrorName", "cuGetErrorString", "cuCtxSetCurrent",
                                         "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease"};
    for (int i = 0; i < 5; i++)
        if (lookup(gpa, extra[i], &f[i])) return WEFT_ENOENT;
    atomic_store_explicit(&error_name, (drv_res(*)(drv_res, const char **))f[0], memory_order_relaxed);
    atomic_store_explicit(&error_string, (drv_res(*)(drv_res, const char **))f[1], memory_order_relaxed);
    atomic_store_explicit(&ctx_set_current, (drv_res(*)(void *))f[2], memory_order_relaxed);
    atomic_store_explicit(&primary_retain, (drv_res(*)(void **, int))f[3], memory_order_relaxed);
    atomic_store_explicit(&primary_release, (drv_res(*)(int))f[4], memory_order_relaxed);
    d->api.describe = cuda_describe;
    d->api.make_current = cuda_make_current;
    d->api.release = cuda_release;
    return 0;
}

/* The device's primary context: the one the CUDA runtime uses too, so
 * buffers can be shared with code that uses cudart. */
static int cuda_attach(weft__drv *d) {
    return weft__drv_fail(d, atomic_load_explicit(&primary_retain, memory_order_relaxed)(&d->context, d->device),
                          "cuDevicePrimaryCtxRetain");
}

int weft__gpu_cuda_open(weft_gpu_device *dev, const weft_gpu_config *cfg);
int weft__gpu_cuda_open(weft_gpu_device *dev, const weft_gpu_config *cfg) {
    return weft__drv_open(dev, cfg, "cuda", cuda_load, cuda_attach);
}
