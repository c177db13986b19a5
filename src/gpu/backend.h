/* The GPU layer's backend table and object layouts.  Internal.
 *
 * The front end (device.c, memory.c, stream.c, kernel.c, task.c) checks
 * arguments and owns the weft_gpu_* objects; a backend (emulator.c, opencl.c,
 * drv.c for CUDA and HIP) fills one weft__gpu_ops and sees only checked
 * arguments.  Every op returns 0 or a negative weft_status, with
 * weft__set_error_message called where a driver call failed.  A handle of a
 * backend object is a void * (streams, events, kernels) or, for device
 * memory, a uint64_t (a CUdeviceptr, a cl_mem, or a host address). */
#ifndef WEFT_GPU_BACKEND_H
#define WEFT_GPU_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "weft/gpu.h"

typedef struct weft__gpu_ops {
    weft_gpu_kind kind;
    /* Finds device cfg->index and starts it: sets dev->impl and dev->name.
     * WEFT_ENOENT when the library or the device is not there. */
    int (*open)(weft_gpu_device *dev, const weft_gpu_config *cfg);
    void (*close)(weft_gpu_device *dev);
    int (*mem_info)(weft_gpu_device *dev, size_t *free_b, size_t *total_b);
    /* Device memory; *host is set for managed memory. */
    int (*alloc)(weft_gpu_device *dev, size_t bytes, unsigned flags, uint64_t *h, void **host);
    void (*free)(weft_gpu_device *dev, uint64_t h, size_t bytes, unsigned flags);
    int (*host_alloc)(weft_gpu_device *dev, size_t bytes, void **p);
    void (*host_free)(weft_gpu_device *dev, void *p);
    /* Copies of n bytes at byte offset off; stream NULL: synchronous. */
    int (*upload)(weft_gpu_device *dev, void *stream, uint64_t dst, size_t off, const void *src, size_t n);
    int (*download)(weft_gpu_device *dev, void *stream, void *dst, uint64_t src, size_t off, size_t n);
    int (*stream_create)(weft_gpu_device *dev, void **stream);
    void (*stream_destroy)(weft_gpu_device *dev, void *stream); /* after its work */
    int (*stream_sync)(weft_gpu_device *dev, void *stream);
    /* Waits for the work queued on `stream` so far and reports nothing: its
     * failures stay for the next synchronize.  For a scope's wait that has no
     * marker (weft__gpu_scope_end): a stream_sync there would take loose
     * failures (no task's) as reported, and the scope's outcome drops them.
     * Backends with scopes need it; NULL elsewhere (stream_sync is used). */
    void (*stream_drain)(weft_gpu_device *dev, void *stream);
    int (*event_record)(weft_gpu_device *dev, void *stream, void **event);
    /* 0, WEFT_EAGAIN, or an error: a failure of any work queued on the stream
     * before the event (weft_gpu_event_query's rule, gpu.h).  Never consumed:
     * every query says the same once the event is done. */
    int (*event_query)(weft_gpu_device *dev, void *event);
    int (*event_sync)(weft_gpu_device *dev, void *event);
    /* What a synchronize of `stream` reports once `event`, recorded on it, is
     * done: a failure of work queued before the event that no earlier
     * synchronize reported and no task owns (weft__gpu_scope); take: mark those
     * reported.  stream_sync follows the same rule.  NULL: the backend cannot
     * tell failures apart (a failure fails every later command of the queue:
     * OpenCL, CUDA), and event_query's answer is the synchronize's. */
    int (*sync_status)(weft_gpu_device *dev, void *stream, void *event, bool take);
    /* True when the backend reports failures of work queued in a scope to the
     * scope (weft__gpu_scope) rather than only to events after it. */
    bool scopes;
    void (*event_destroy)(weft_gpu_device *dev, void *event);
    /* WEFT_ENOENT when src has no form for this backend. */
    int (*kernel_create)(weft_gpu_device *dev, const weft_gpu_kernel_source *src, void **kernel);
    void (*kernel_destroy)(weft_gpu_device *dev, void *kernel);
    /* range has every global[i] >= 1; args checked (buffers of dev). */
    int (*launch)(weft_gpu_device *dev, void *stream, void *kernel, const weft_gpu_range *range,
                  const weft_gpu_arg *args, size_t nargs);
} weft__gpu_ops;

extern const weft__gpu_ops weft__gpu_emulator_ops;
extern const weft__gpu_ops weft__gpu_opencl_ops;
extern const weft__gpu_ops weft__gpu_cuda_ops;
extern const weft__gpu_ops weft__gpu_hip_ops;

struct weft_gpu_device {
    const weft__gpu_ops *ops;
    void *impl;
    weft_gpu_config cfg; /* with defaults filled in */
    char name[128];
    weft_gpu_stream_pool *pool; /* for GPU tasks */
    /* Every stream of the device, for weft_gpu_synchronize. */
    weft__mutex lock;
    weft_gpu_stream *streams;
    /* GPU tasks waiting for their work, one watch per executor they run on
     * (task.c): the list and each watch's count are under watch_lock, which
     * no poller takes. */
    weft__mutex watch_lock;
    struct weft__gpu_watch *watches;
    /* weft_gpu_parallel_for's built kernels (parallel_for.c), under watch_lock. */
    struct weft__gpu_for *fors;
    /* The program's objects made on the device and not yet destroyed, for
     * weft_gpu_close's refusal (WEFT_EBUSY): closed under them, they pointed
     * at the freed device.  The device's own pool and its streams, the pools'
     * streams and parallel_for's cached kernels are not counted. */
    _Atomic size_t live_buffers, live_streams, live_events, live_kernels, live_pools;
};

struct weft_gpu_buffer {
    weft_gpu_device *dev;
    uint64_t h;
    size_t elem_size, count;
    unsigned flags;
    void *host; /* managed memory: its host address */
};

struct weft_gpu_stream {
    weft_gpu_device *dev;
    void *h;
    weft_gpu_stream *prev, *next; /* in dev->streams, under dev->lock */
    /* The marker weft_gpu_stream_query last recorded, asked again while no work
     * was queued since (query_stale clear): a fresh marker per query may never
     * be seen done by the call that records it (PoCL under TSan). */
    void *query_h;
    _Atomic bool query_stale;
    bool pooled; /* a stream of a pool: the pool's to free (weft_gpu_stream_destroy refuses it) */
};

struct weft_gpu_event {
    weft_gpu_device *dev;
    void *h;
};

struct weft_gpu_kernel {
    weft_gpu_device *dev;
    void *h;
    bool cached; /* parallel_for's (freed by close): not in dev->live_kernels */
};

struct weft_gpu_stream_pool {
    weft_gpu_device *dev;
    unsigned n;
    _Atomic unsigned next; /* where the next reservation starts looking */
    /* n counts: the open guards on stream i, the one that reserved it and
     * those sharing it (a flag cleared by the reserver's end let the next
     * begin reserve a stream a sharer still held, while another was free). */
    _Atomic unsigned *held;
    weft_gpu_stream **streams;
    bool own; /* the device's (weft_gpu_device_pool): weft_gpu_close frees it, not in dev->live_pools */
};

/* host_alloc/host_free for backends without pinned memory: aligned host
 * memory (memory.c). */
int weft__gpu_plain_host_alloc(weft_gpu_device *dev, size_t bytes, void **p);
void weft__gpu_plain_host_free(weft_gpu_device *dev, void *p);

/* Waits for an event: cooperatively on a worker (other tasks run; with
 * nothing to run anywhere, the worker naps), blocking elsewhere (stream.c). */
int weft__gpu_event_wait_any(weft_gpu_event *e);
/* The same on worker w (NULL: the calling thread's, through its task
 * context, else blocking). */
struct weft__worker;
int weft__gpu_event_wait_on(weft_gpu_event *e, struct weft__worker *w);
/* The GPU work of one task (weft_emplace_gpu, weft_gpu_call,
 * weft_gpu_stage_run), so that a failed kernel fails the task that launched
 * it and no other task sharing its stream.  While a scope is entered on a
 * thread, work that thread queues on the scope's stream belongs to it: a
 * backend with `scopes` sets `status` (and `message`) at the first failure of
 * that work, on its own thread, before the work counts as done; synchronizes
 * of the stream do not report it again.  A scope must outlive its work: its
 * task waits for an event recorded after it (weft__gpu_scope_end). */
typedef struct weft__gpu_scope {
    void *stream;             /* the backend's handle of the stream */
    struct weft__gpu_scope *outer; /* the thread's scope before this one */
    _Atomic int status;       /* the first failure of the scope's work; 0 if none */
    char message[160];        /* its text, written before status */
} weft__gpu_scope;
/* The calling thread's innermost scope, or NULL (stream.c). */
extern _Thread_local weft__gpu_scope *weft__gpu_scope_now;
/* Enters sc for work queued on s by the calling thread; leave it on the same
 * thread, innermost first, before waiting for the work. */
void weft__gpu_scope_enter(weft__gpu_scope *sc, weft_gpu_stream *s);
void weft__gpu_scope_leave(weft__gpu_scope *sc);
/* The task's outcome once an event recorded after the scope's work is done,
 * event_status being that event's: the scope's own failure where the backend
 * has scopes (message set), else event_status. */
int weft__gpu_scope_status(weft_gpu_device *dev, weft__gpu_scope *sc, int event_status);
/* Waits for the work of a left scope on a guard's stream as
 * weft__gpu_event_wait_on does (a stream that cannot record an event is
 * synchronized), gives the stream back, and returns the scope's status. */
int weft__gpu_scope_end(weft__gpu_scope *sc, weft_gpu_stream_guard *g, struct weft__worker *w);
/* A guard's stream given back without waiting for its work (the caller has
 * seen that work done). */
void weft__gpu_guard_release(weft_gpu_stream_guard *g);

/* CUDA C++ source to PTX through NVRTC, loaded by dlopen (nvrtc.c); arch as
 * "compute_75".  *ptx (*ptx_bytes, NUL included) is freed with weft__free.
 * 0, WEFT_ENOENT (no NVRTC), WEFT_EDEVICE (the compiler's log in the
 * message), WEFT_ENOMEM. */
int weft__gpu_nvrtc_ptx(const char *source, const char *arch, char **ptx, size_t *ptx_bytes);
/* Frees weft_gpu_parallel_for's kernels (at close). */
void weft__gpu_for_cache_free(weft_gpu_device *dev);

/* weft_gpu_stream_pool_create, with own: the device's own pool (opened with the
 * device, freed by weft_gpu_close through weft__gpu_pool_free; not one of the
 * program's objects, dev->live_pools).  stream.c. */
weft_gpu_stream_pool *weft__gpu_pool_new(weft_gpu_device *dev, unsigned n, bool own, weft_status *err);
void weft__gpu_pool_free(weft_gpu_stream_pool *p);
/* weft_gpu_kernel_create, with cached: a kernel the device keeps for itself
 * (parallel_for.c's cache, freed by weft_gpu_close; not in dev->live_kernels).
 * kernel.c. */
weft_gpu_kernel *weft__gpu_kernel_new(weft_gpu_device *dev, const weft_gpu_kernel_source *src, bool cached,
                                      weft_status *err);

/* Work-item count of a range: the product of its global sizes (0 counts as 1). */
static inline size_t weft__gpu_range_items(const weft_gpu_range *r) {
    size_t n = 1;
    for (int i = 0; i < 3; i++) n *= r->global[i] ? r->global[i] : 1;
    return n;
}

/* Number of dimensions a range uses (1..3): the last with global or local set. */
static inline unsigned weft__gpu_range_dims(const weft_gpu_range *r) {
    unsigned d = 1;
    for (unsigned i = 1; i < 3; i++)
        if (r->global[i] > 1 || r->local[i] > 1) d = i + 1;
    return d;
}

#endif
