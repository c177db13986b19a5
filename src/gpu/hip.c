/* The HIP backend's loader: libamdhip64.so through dlopen and dlsym (HIP
 * exports one ABI per name).  Where HIP's signature differs from the CUDA
 * shape of weft__drv_api, a small adapter here bridges it.  Compiled and
 * probed everywhere; exercised only where ROCm is installed. */
#include "gpu/drv.h"

#include "core/error_detail.h"
#include "platform/files.h"

#include <stdio.h>

/* Entry points beyond the shared table (one libamdhip64 per process). */
static _Atomic(const char *(*)(drv_res)) error_name, error_string;
static _Atomic(drv_res (*)(int)) set_device;
static _Atomic(drv_res (*)(void **, size_t, unsigned)) host_malloc;

static _Thread_local int tls_device = -1; /* the device weft last made current here */

static void hip_describe(weft__drv *d, drv_res r, char *buf, size_t len) {
    const char *(*n)(drv_res) = atomic_load_explicit(&error_name, memory_order_relaxed);
    const char *(*s)(drv_res) = atomic_load_explicit(&error_string, memory_order_relaxed);
    snprintf(buf, len, "%s: %s", n ? n(r) : "HIP error", s ? s(r) : "?");
}

static drv_res hip_make_current(weft__drv *d) {
    if (tls_device == d->device) return 0;
    drv_res r = atomic_load_explicit(&set_device, memory_order_relaxed)(d->device);
    if (r == 0) tls_device = d->device;
    return r;
}

static drv_res hip_host_alloc(void **p, size_t bytes) {
    return atomic_load_explicit(&host_malloc, memory_order_relaxed)(p, bytes, 0);
}

struct entry {
    const char *name;
    size_t offset;
};
#define E(field, symbol) {symbol, offsetof(weft__drv_api, field)}
static const struct entry entries[] = {
    E(init, "hipInit"), E(device_count, "hipGetDeviceCount"), E(device_get, "hipDeviceGet"),
    E(device_name, "hipDeviceGetName"), E(mem_alloc, "hipMalloc"), E(mem_alloc_managed, "hipMallocManaged"),
    E(mem_free, "hipFree"), E(host_free, "hipHostFree"), E(htod, "hipMemcpyHtoD"), E(dtoh, "hipMemcpyDtoH"),
    E(htod_async, "hipMemcpyHtoDAsync"), E(dtoh_async, "hipMemcpyDtoHAsync"),
    E(stream_create, "hipStreamCreateWithFlags"), E(stream_destroy, "hipStreamDestroy"),
    E(stream_sync, "hipStreamSynchronize"), E(event_create, "hipEventCreateWithFlags"),
    E(event_record, "hipEventRecord"), E(event_query, "hipEventQuery"), E(event_sync, "hipEventSynchronize"),
    E(event_destroy, "hipEventDestroy"), E(module_load, "hipModuleLoadData"), E(module_unload, "hipModuleUnload"),
    E(module_function, "hipModuleGetFunction"), E(launch, "hipModuleLaunchKernel"), E(mem_info, "hipMemGetInfo"),
};
#undef E

static void *need(weft__drv *d, const char *name) {
    void *f = weft__dl_sym(d->lib, name);
    if (!f) weft__set_error_message("hip: the HIP runtime lacks %s", name);
    return f;
}

static int hip_load(weft__drv *d) {
    static const char *const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
    for (int i = 0; i < 3 && !d->lib; i++) d->lib = weft__dl_open(names[i]);
    if (!d->lib) {
        weft__set_error_message("hip: libamdhip64.so not found (or not loadable)");
        return WEFT_ENOENT;
    }
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++)
        if (!(*(void **)((char *)&d->api + entries[i].offset) = need(d, entries[i].name))) return WEFT_ENOENT;
    void *f[4] = {need(d, "hipGetErrorName"), need(d, "hipGetErrorString"), need(d, "hipSetDevice"),
                  need(d, "hipHostMalloc")};
    if (!f[0] || !f[1] || !f[2] || !f[3]) return WEFT_ENOENT;
    atomic_store_explicit(&error_name, (const char *(*)(drv_res))f[0], memory_order_relaxed);
    atomic_store_explicit(&error_string, (const char *(*)(drv_res))f[1], memory_order_relaxed);
    atomic_store_explicit(&set_device, (drv_res(*)(int))f[2], memory_order_relaxed);
    atomic_store_explicit(&host_malloc, (drv_res(*)(void **, size_t, unsigned))f[3], memory_order_relaxed);
    d->api.host_alloc = hip_host_alloc;
    d->api.describe = hip_describe;
    d->api.make_current = hip_make_current;
    return 0;
}

static int hip_attach(weft__drv *d) { return weft__drv_fail(d, hip_make_current(d), "hipSetDevice"); }

int weft__gpu_hip_open(weft_gpu_device *dev, const weft_gpu_config *cfg);
int weft__gpu_hip_open(weft_gpu_device *dev, const weft_gpu_config *cfg) {
    return weft__drv_open(dev, cfg, "hip", hip_load, hip_attach);
}
