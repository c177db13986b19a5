/* weft — task-parallel runtime for C11.  SPDX-License-Identifier: MIT
 *
 * The GPU layer: devices, typed buffers, streams, events, kernels, and GPU
 * work as tasks of the same graph as CPU work.
 *
 * Backends are chosen at run time and loaded with dlopen, so weft builds and
 * runs where no GPU software is installed: CUDA (the driver API of
 * libcuda.so.1), HIP (libamdhip64.so), OpenCL (the ICD loader libOpenCL.so.1)
 * and an emulator that runs "kernels" as host functions on a thread per stream.
 * docs/guide-gpu.md is the guide.
 *
 * Thread-safety: every function may be called from any thread unless its
 * comment says otherwise; a device, its buffers, streams and kernels may be
 * used from several threads at once.  Work on one stream runs in the order it
 * was enqueued; work on different streams may overlap.  Destroying an object
 * while another thread uses it is the caller's bug, as with free().
 *
 * Errors: WEFT_EINVAL for NULL or bad arguments, WEFT_ENOMEM when the host or
 * the device is out of memory, WEFT_ENOENT when a backend or a feature is not
 * there, WEFT_EDEVICE when a driver call or a kernel failed; then
 * weft_last_error_message() holds the backend's own message (e.g.
 * "cuda: cuLaunchKernel: CUDA_ERROR_INVALID_VALUE: invalid argument").
 *
 * Failed work (a kernel that fails while it runs, a failed asynchronous copy)
 * is reported by the calls that wait for or ask about it, by these rules:
 *  - an event reports the failures of the work queued on its stream before it
 *    was recorded, and only those; every query and wait of it says the same;
 *  - a synchronize of a stream (weft_gpu_stream_synchronize, _wait, _query,
 *    weft_gpu_stream_end, and weft_gpu_synchronize for each of the device's
 *    streams) reports the failures of work queued on the stream since the
 *    previous synchronize of that stream, so each failure is reported by one
 *    synchronize (a query reports it without taking it);
 *  - a failure of work a GPU task queued (weft_emplace_gpu, weft_gpu_call,
 *    weft_gpu_stage_run: work its fn queued, from its own thread, on the stream
 *    it was given) is that task's: it fails that task and no other task that
 *    shares the stream, and no synchronize reports it again.
 * The emulator follows them exactly; a failed kernel does not stop the work
 * queued after it.  OpenCL and CUDA give no way to tell failures apart by
 * when they were queued, so there each event, synchronize and task reports
 * what a marker after its work says: on OpenCL the marker fails when work
 * before it failed, and an implementation may fail every command queued after
 * a failed one, so a failure can be reported by every later event,
 * synchronize and task of its stream; on CUDA a kernel fault is sticky: the
 * context is unusable and every later call fails, queries of earlier events
 * included, until the process ends.
 */
#ifndef WEFT_GPU_H
#define WEFT_GPU_H

#include "weft/common.h"
#include "weft/core.h"
#include "weft/graph.h"
#include "weft/pipeline.h"

WEFT_EXTERN_C_BEGIN

/* ---- devices ------------------------------------------------------------------ */

/* Which backend drives a device (weft_gpu_config.kind, weft_gpu_device_kind). */
typedef enum weft_gpu_kind {
    WEFT_GPU_AUTO = 0,     /* probe CUDA, HIP, OpenCL, then the emulator (see weft_gpu_open) */
    WEFT_GPU_CUDA = 1,     /* NVIDIA, driver API through libcuda.so.1 */
    WEFT_GPU_HIP = 2,      /* AMD ROCm, through libamdhip64.so */
    WEFT_GPU_OPENCL = 3,   /* any OpenCL 1.2 device through libOpenCL.so.1 (PoCL on a CPU too) */
    WEFT_GPU_EMULATOR = 4  /* a complete GPU emulated on the CPU: host memory, kernels as host
                            * functions, a thread per stream (tests, and machines with no GPU) */
} weft_gpu_kind;

/* An open device and its backend (weft_gpu_open, weft_gpu_close).  Opaque. */
typedef struct weft_gpu_device weft_gpu_device;
/* Device memory holding `count` elements of one size (weft_gpu_buffer_create,
 * weft_gpu_buffer_destroy).  Opaque. */
typedef struct weft_gpu_buffer weft_gpu_buffer;
/* An in-order queue of copies and launches on one device
 * (weft_gpu_stream_create, weft_gpu_stream_destroy).  Opaque. */
typedef struct weft_gpu_stream weft_gpu_stream;
/* A point in a stream's work, to query or wait for (weft_gpu_event_record,
 * weft_gpu_event_destroy).  Opaque. */
typedef struct weft_gpu_event weft_gpu_event;
/* A compiled kernel of one device (weft_gpu_kernel_create,
 * weft_gpu_kernel_destroy).  Opaque. */
typedef struct weft_gpu_kernel weft_gpu_kernel;
/* A fixed set of streams that tasks borrow one at a time
 * (weft_gpu_stream_pool_create, weft_gpu_stream_begin).  Opaque. */
typedef struct weft_gpu_stream_pool weft_gpu_stream_pool;

/* How to open a device; all zero means defaults. */
typedef struct weft_gpu_config {
    weft_gpu_kind kind;     /* WEFT_GPU_AUTO (default) or one backend */
    unsigned index;         /* which device of that backend (default 0, the first) */
    unsigned streams;       /* streams in the device's pool for GPU tasks (default 4; at most 256, more is WEFT_EINVAL) */
    size_t emulator_memory; /* the emulator's device memory in bytes (default 1 GiB) */
} weft_gpu_config;

/* Opens a device.  config NULL: defaults.  With kind WEFT_GPU_AUTO the
 * environment variable WEFT_GPU=cuda|hip|opencl|emulator|none picks the backend
 * (none: no device, WEFT_ENOENT); unset, the first backend that has a device
 * wins, in the order CUDA, HIP, OpenCL, emulator, so AUTO always finds at least
 * the emulator; a backend that runs out of memory while it opens ends the
 * probe with WEFT_ENOMEM (it may have a device: the next backend's would be
 * the wrong one).  A bad WEFT_GPU value is logged once and ignored.  A kind named in
 * config ignores WEFT_GPU.  Returns NULL with *err (err may be NULL):
 * WEFT_EINVAL (kind unknown), WEFT_ENOENT (backend not installed, no device
 * at that index, WEFT_GPU=none), WEFT_ENOMEM, WEFT_EDEVICE (the driver failed
 * to start: weft_last_error_message says why).  Any thread. */
WEFT_API WEFT_NODISCARD weft_gpu_device *weft_gpu_open(const weft_gpu_config *config, weft_status *err);
/* Waits for all work of the device's streams, then frees the device and its
 * own stream pool (weft_gpu_device_pool); WEFT_OK (also for NULL).  The
 * buffers, streams, events, kernels and pools made on it must have been
 * destroyed first, and no guard may hold a stream of its own pool (a GPU
 * task, weft_gpu_call or GPU stage still running, or a weft_gpu_stream_begin
 * without its end): while any is alive close is WEFT_EBUSY, frees and waits
 * for nothing, logs a warning, and weft_last_error_message names what is
 * left (e.g. "weft_gpu_close: the device still has 2 buffers, 1 event
 * (destroy them first, end the guards): nothing closed"); destroy them and
 * close again.  Not at the same time as other calls on the device or its
 * objects. */
WEFT_API weft_status weft_gpu_close(weft_gpu_device *dev);

/* The device's backend (WEFT_GPU_AUTO for NULL). */
WEFT_API weft_gpu_kind weft_gpu_device_kind(const weft_gpu_device *dev);
/* The device's name as the driver reports it ("" for NULL).  Valid until close. */
WEFT_API const char *weft_gpu_device_name(const weft_gpu_device *dev);
/* "cuda", "hip", "opencl", "emulator", "auto", or "?" for a value out of range. */
WEFT_API const char *weft_gpu_kind_name(weft_gpu_kind kind);
/* Free and total device memory in bytes (either pointer may be NULL).
 * OpenCL cannot tell free memory: it reports the total for both.
 * WEFT_EINVAL (dev NULL), WEFT_EDEVICE. */
WEFT_API weft_status weft_gpu_mem_info(weft_gpu_device *dev, size_t *free_bytes, size_t *total_bytes);
/* Blocks until every stream of the device has finished its work.  Returns the
 * first error a stream reports, else WEFT_OK; each stream is synchronized
 * (failures since its previous synchronize, see "Failed work" above), so a
 * failure it reports is not reported again by that stream's next synchronize.
 * WEFT_EINVAL for NULL. */
WEFT_API weft_status weft_gpu_synchronize(weft_gpu_device *dev);

/* ---- buffers ------------------------------------------------------------------ */

/* Buffer flags. */
#define WEFT_GPU_MANAGED 1u /* unified memory the host may also address (CUDA, HIP, emulator) */

/* Allocates a device buffer of `count` elements of `elem_size` bytes (not
 * initialised).  flags: 0 or WEFT_GPU_MANAGED.  Returns NULL with *err:
 * WEFT_EINVAL (dev NULL, elem_size or count 0, size overflow, unknown flag),
 * WEFT_ENOMEM (host or device memory exhausted), WEFT_ENOENT (managed memory
 * on a backend without it: OpenCL), WEFT_EDEVICE. */
WEFT_API WEFT_NODISCARD weft_gpu_buffer *weft_gpu_buffer_create(weft_gpu_device *dev, size_t elem_size, size_t count,
                                                              unsigned flags, weft_status *err);
/* Frees a buffer.  Work still queued on streams that uses it must have
 * finished (wait for those streams first).  NULL is a no-op. */
WEFT_API void weft_gpu_buffer_destroy(weft_gpu_buffer *buf);
/* Element count, element size, and bytes (count * elem_size); 0 for NULL. */
WEFT_API size_t weft_gpu_buffer_count(const weft_gpu_buffer *buf);
WEFT_API size_t weft_gpu_buffer_elem_size(const weft_gpu_buffer *buf);
WEFT_API size_t weft_gpu_buffer_bytes(const weft_gpu_buffer *buf);
/* The host address of a WEFT_GPU_MANAGED buffer; NULL for other buffers.
 * Touch it only while no stream uses the buffer. */
WEFT_API void *weft_gpu_buffer_host_ptr(const weft_gpu_buffer *buf);

/* Page-locked ("pinned") host memory, which asynchronous copies need to be
 * really asynchronous on CUDA and HIP (on OpenCL and the emulator it is ordinary
 * memory).  NULL with *err: WEFT_EINVAL (dev NULL, bytes 0), WEFT_ENOMEM,
 * WEFT_EDEVICE.  Free it with weft_gpu_host_free on the same device (NULL is
 * a no-op). */
WEFT_API WEFT_NODISCARD void *weft_gpu_host_alloc(weft_gpu_device *dev, size_t bytes, weft_status *err);
WEFT_API void weft_gpu_host_free(weft_gpu_device *dev, void *p);

/* ---- copies: counts and offsets are in elements of the buffer --------------------
 * Synchronous copies return when the data has arrived.  They are not ordered
 * with work queued on streams: wait for a stream that uses the buffer first.
 * Asynchronous copies are queued on a stream and return at once; the host
 * memory must stay valid (and, for an upload, unchanged) until the stream has
 * done them.  All return WEFT_EINVAL for NULL pointers or a range past the end
 * of the buffer (first + count > weft_gpu_buffer_count), a buffer and stream
 * of different devices; WEFT_EDEVICE when the driver fails.  count 0 is a
 * no-op that returns WEFT_OK. */

/* Copy `count` elements from element `first` on: host src to buffer dst, or
 * buffer src to host dst; synchronous, or (_async) queued on stream s.  Rules
 * and errors: above. */
WEFT_API weft_status weft_gpu_copy_to_device(weft_gpu_buffer *dst, size_t first, const void *src, size_t count);
WEFT_API weft_status weft_gpu_copy_to_host(const weft_gpu_buffer *src, size_t first, void *dst, size_t count);
WEFT_API weft_status weft_gpu_copy_to_device_async(weft_gpu_stream *s, weft_gpu_buffer *dst, size_t first,
                                                   const void *src, size_t count);
WEFT_API weft_status weft_gpu_copy_to_host_async(weft_gpu_stream *s, const weft_gpu_buffer *src, size_t first,
                                                 void *dst, size_t count);

/* ---- streams and events -------------------------------------------------------- */

/* Creates a stream: an in-order queue of copies and kernels.  NULL with *err:
 * WEFT_EINVAL (dev NULL), WEFT_ENOMEM, WEFT_EDEVICE. */
WEFT_API WEFT_NODISCARD weft_gpu_stream *weft_gpu_stream_create(weft_gpu_device *dev, weft_status *err);
/* Waits for the stream's work, then frees it.  NULL is a no-op.  A stream of
 * a pool (weft_gpu_stream_pool_get, weft_gpu_stream_begin, the stream a GPU
 * task's or stage's fn is given) belongs to the pool, which frees it: this
 * logs a warning and does nothing. */
WEFT_API void weft_gpu_stream_destroy(weft_gpu_stream *s);
/* The stream's device (NULL for NULL). */
WEFT_API weft_gpu_device *weft_gpu_stream_device(const weft_gpu_stream *s);
/* Blocks the calling thread until the stream's work is done.  WEFT_OK, or the
 * error of a failed copy or kernel queued since the previous synchronize of s
 * and not a GPU task's (WEFT_EDEVICE, message set; "Failed work" above:
 * OpenCL and CUDA may report a failure again); WEFT_EINVAL; WEFT_ENOMEM when
 * no marker could be queued to tell its failures apart (the emulator, OpenCL):
 * the work is waited for all the same, and its failures are left for the
 * next synchronize. */
WEFT_API weft_status weft_gpu_stream_synchronize(weft_gpu_stream *s);
/* Waits for the stream's work without blocking a worker: called from a task
 * (graph, async, pipeline stage) on one of an executor's workers, the worker
 * runs other ready tasks until the work is done (so CPU work and GPU tasks
 * overlap); on any other thread it blocks like weft_gpu_stream_synchronize.
 * Returns what weft_gpu_stream_synchronize would. */
WEFT_API weft_status weft_gpu_stream_wait(weft_gpu_stream *s);
/* WEFT_OK when all work queued so far is done, WEFT_EAGAIN while some is
 * pending, or the error weft_gpu_stream_synchronize would report now (which
 * the query leaves for it to report); WEFT_EINVAL; WEFT_ENOMEM (no memory for
 * the marker, nothing waited for).  Never blocks.  It queues
 * a marker behind the work and asks about it; while no work is queued on s
 * since, later queries ask about the same marker, so polling an idle stream
 * reaches WEFT_OK.  Not at the same time as other calls on s. */
WEFT_API weft_status weft_gpu_stream_query(weft_gpu_stream *s);

/* Marks the current end of a stream's queue.  NULL with *err: WEFT_EINVAL,
 * WEFT_ENOMEM, WEFT_EDEVICE. */
WEFT_API WEFT_NODISCARD weft_gpu_event *weft_gpu_event_record(weft_gpu_stream *s, weft_status *err);
/* WEFT_OK once the work before the event is done, WEFT_EAGAIN before, or the
 * error of failed work queued on the stream before the event was recorded
 * (WEFT_EDEVICE, message set: "Failed work" above), whether or not a
 * synchronize reported it, and never of work queued after it (CUDA: after a
 * kernel fault, every query fails); WEFT_EINVAL for NULL.  Never blocks.  The
 * same answer every time once the work is done. */
WEFT_API weft_status weft_gpu_event_query(weft_gpu_event *e);
/* Waits for the event as weft_gpu_stream_wait waits for a stream (a worker
 * keeps running other tasks; another thread blocks). */
WEFT_API weft_status weft_gpu_event_wait(weft_gpu_event *e);
/* Frees an event (pending or not).  NULL is a no-op. */
WEFT_API void weft_gpu_event_destroy(weft_gpu_event *e);

/* A fixed set of streams handed out to users of the device in turn.  n 0
 * means 4.  NULL with *err: WEFT_EINVAL (dev NULL, n > 256), WEFT_ENOMEM,
 * WEFT_EDEVICE.  Destroy waits for the streams' work (NULL is a no-op). */
WEFT_API WEFT_NODISCARD weft_gpu_stream_pool *weft_gpu_stream_pool_create(weft_gpu_device *dev, unsigned n,
                                                                        weft_status *err);
WEFT_API void weft_gpu_stream_pool_destroy(weft_gpu_stream_pool *p);
/* Number of streams (0 for NULL). */
WEFT_API unsigned weft_gpu_stream_pool_size(const weft_gpu_stream_pool *p);
/* Stream i (taken modulo the size); NULL for NULL.  Shared, not reserved;
 * the pool's (its destroy frees it). */
WEFT_API weft_gpu_stream *weft_gpu_stream_pool_get(weft_gpu_stream_pool *p, unsigned i);
/* The device's own pool, used by GPU tasks (weft_gpu_config.streams streams).
 * It belongs to the device: weft_gpu_close frees it; weft_gpu_stream_pool_destroy
 * of it logs a warning and does nothing. */
WEFT_API weft_gpu_stream_pool *weft_gpu_device_pool(weft_gpu_device *dev);

/* A scoped stream: weft_gpu_stream_begin reserves a stream of the pool that
 * no other guard holds (when all are held it shares one, whose work is then
 * ordered after the other holder's); weft_gpu_stream_end waits for the work
 * queued on it (as weft_gpu_stream_wait: a worker keeps running other tasks)
 * and gives it back.  Fields are private.
 *
 *     weft_gpu_stream_guard g;
 *     weft_gpu_stream *s = weft_gpu_stream_begin(pool, &g);
 *     ... copies and launches on s ...
 *     weft_status st = weft_gpu_stream_end(&g);
 */
typedef struct weft_gpu_stream_guard {
    weft_gpu_stream_pool *pool_; /* private: the pool the stream came from */
    unsigned slot_;              /* private: the stream's index in that pool */
    bool reserved_;              /* private: true while the guard is open */
} weft_gpu_stream_guard;
/* Returns the stream, or NULL (g or p NULL: nothing to end). */
WEFT_API weft_gpu_stream *weft_gpu_stream_begin(weft_gpu_stream_pool *p, weft_gpu_stream_guard *g);
/* WEFT_OK, the stream's error as weft_gpu_stream_synchronize reports it
 * (failures since the stream's previous synchronize: on a shared stream, the
 * other holder's work too), or WEFT_EINVAL for NULL or a guard that is not
 * open.  The guard is closed afterwards either way. */
WEFT_API weft_status weft_gpu_stream_end(weft_gpu_stream_guard *g);

/* ---- kernels ------------------------------------------------------------------ */

/* The launch shape: global[i] work items in dimension i (0 counts as 1), in
 * groups of local[i] (all local 0: the backend chooses; OpenCL then needs
 * nothing of global, CUDA and HIP use blocks of 256 in dimension 0 and the
 * kernel must ignore items past the end).  CUDA/HIP launch
 * ceil(global/local) blocks of local threads. */
typedef struct weft_gpu_range {
    size_t global[3]; /* work items in dimensions 0, 1, 2; 0 counts as 1 */
    size_t local[3];  /* work items per group in each dimension; all 0: the backend's choice */
} weft_gpu_range;

/* An emulator kernel: runs every work item of `range` on the host; args[i] is the
 * host address of buffer argument i or of a copy of value argument i.
 * Returns 0, or non-zero to report a failed kernel (the stream then reports
 * WEFT_EDEVICE, as a real device reports a fault). */
typedef int (*weft_gpu_host_fn)(const weft_gpu_range *range, void *const *args);

/* One kernel in the forms the backends take; the device uses its own and
 * ignores the others. */
typedef struct weft_gpu_kernel_source {
    const char *name;      /* the entry point (required, except for a host-only kernel) */
    const char *opencl;    /* OpenCL C source, built once per device and source text */
    const void *cuda;      /* PTX text (NUL-terminated) or a cubin image */
    const void *hip;       /* a HIP code object */
    weft_gpu_host_fn host; /* the emulator's host function */
} weft_gpu_kernel_source;

/* Prepares a kernel for the device (compiling source where needed; OpenCL
 * programs are cached per device by source text).  NULL with *err:
 * WEFT_EINVAL (NULL, no name), WEFT_ENOENT (no form for this backend, or no
 * entry point of that name), WEFT_EDEVICE (the build failed: the compiler's
 * log starts weft_last_error_message), WEFT_ENOMEM. */
WEFT_API WEFT_NODISCARD weft_gpu_kernel *weft_gpu_kernel_create(weft_gpu_device *dev,
                                                              const weft_gpu_kernel_source *src, weft_status *err);
/* Frees a kernel; queued launches of it still run.  NULL is a no-op. */
WEFT_API void weft_gpu_kernel_destroy(weft_gpu_kernel *k);

/* A kernel argument: a buffer, or a value of `size` bytes copied at launch. */
typedef struct weft_gpu_arg {
    weft_gpu_buffer *buffer; /* a buffer of the kernel's device; NULL: `value` is the argument */
    const void *value;       /* with buffer NULL: the bytes to pass (copied at launch) */
    size_t size;             /* bytes at value (sizeof the parameter's type); unused for a buffer */
} weft_gpu_arg;
#define WEFT_GPU_ARG_BUFFER(b) ((weft_gpu_arg){.buffer = (b)})
#define WEFT_GPU_ARG_VALUE(v) ((weft_gpu_arg){.value = &(v), .size = sizeof(v)})
#define WEFT_GPU_MAX_ARGS 32

/* Queues a launch of k on s with the given arguments (at most
 * WEFT_GPU_MAX_ARGS).  WEFT_EINVAL (NULL, nargs too large, an argument with
 * neither a buffer nor a value, objects of different devices),
 * WEFT_EDEVICE (the launch was refused, e.g. a group too large: the
 * driver's message; on OpenCL also an argument count other than the
 * kernel's, which CUDA cannot check), WEFT_ENOMEM.  A kernel that fails while it runs is
 * reported as "Failed work" above says: by events recorded after it, by one
 * synchronize of the stream, or, queued by a GPU task, to that task. */
WEFT_API weft_status weft_gpu_launch(weft_gpu_stream *s, weft_gpu_kernel *k, const weft_gpu_range *range,
                                     const weft_gpu_arg *args, size_t nargs);

/* ---- kernels from source at run time ------------------------------------------------ */

/* An element-wise kernel given as text: `body` is run for every index i in
 * [0, n) (i is a 64-bit unsigned integer; items past n are never run), with
 * `params` the kernel's parameters as a C parameter list ("" or NULL for
 * none).  Pointers to device memory are written WEFT_GLOBAL (OpenCL's
 * __global; nothing on CUDA):
 *
 *     static const weft_gpu_for_kernel saxpy = {
 *         .params = "WEFT_GLOBAL float *y, WEFT_GLOBAL const float *x, float a",
 *         .body = "y[i] = a * x[i] + y[i];",
 *         .host = saxpy_host,  // for the emulator, which has no compiler
 *     };
 *     weft_gpu_parallel_for(s, n, &saxpy, args, 3);
 *
 * The text must be valid as OpenCL C and, for CUDA, as CUDA C++ (the common
 * subset of C serves both).  Only what the device's backend needs is built. */
typedef struct weft_gpu_for_kernel {
    const char *params;    /* the parameter list as C text; "" or NULL: none */
    const char *body;      /* required */
    weft_gpu_host_fn host; /* the emulator's: called once with global[0] = n and the arguments as for a
                              emulator kernel; NULL: the emulator refuses (WEFT_ENOENT) */
} weft_gpu_for_kernel;

/* Queues the kernel of fk over n items on s.  It is built on first use for
 * the device and cached by its text (the emulator's by its host function) until
 * weft_gpu_close: OpenCL builds it with clBuildProgram; CUDA compiles it to
 * PTX with NVRTC (libnvrtc.so, loaded by dlopen on first use, for
 * compute_75, which the driver compiles for the device).  args are the values
 * and buffers for params, in order (at most WEFT_GPU_MAX_ARGS - 1).  n 0 is a
 * no-op.  WEFT_EINVAL (NULL s or fk or body, too many arguments, objects of
 * another device), WEFT_ENOENT (the emulator without a host function, NVRTC not
 * installed, HIP), WEFT_EDEVICE (the build failed: the compiler's log starts
 * weft_last_error_message; or the launch was refused), WEFT_ENOMEM.  Any
 * thread; the same kernel from several threads at once is built at most once
 * per racing thread and then shared. */
WEFT_API weft_status weft_gpu_parallel_for(weft_gpu_stream *s, size_t n, const weft_gpu_for_kernel *fk,
                                           const weft_gpu_arg *args, size_t nargs);

/* ---- GPU work as tasks ----------------------------------------------------------- */

/* Records GPU work (copies, launches) on `s`; does not wait for it.  ctx is
 * the running task's context (NULL when called outside a worker).  Return 0,
 * or non-zero to fail (the task fails with that value).  s is a stream of the
 * device's pool, which other tasks may hold at the same time (when every
 * stream of the pool is held, they share one): copies, launches, events and
 * waits on it are fine, weft_gpu_stream_query (one caller at a time) is not. */
typedef int (*weft_gpu_task_fn)(weft_ctx *ctx, weft_gpu_stream *s, void *arg);

/* Adds a task that takes a stream of dev's pool (weft_gpu_stream_begin), calls
 * fn to record work on it, and completes when that work is done: meanwhile
 * its worker runs other ready tasks (weft_gpu_stream_end), so CPU tasks and
 * other GPU tasks overlap with it.  Its successors start after the GPU work.
 * A non-zero return of fn, or a failure of the work fn queued (WEFT_EDEVICE;
 * not of another task's work on a shared stream: "Failed work" above), fails
 * the run like a failing task.  Observers, metrics and profiles see the task
 * end when its work does, with that outcome.  dev must outlive the taskflow's
 * runs.
 * Returns the task, or the null task (WEFT_EINVAL for NULL tf/dev/fn,
 * WEFT_ENOMEM, WEFT_EBUSY while tf runs: as weft_emplace). */
WEFT_API weft_task weft_emplace_gpu(weft_taskflow *tf, weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg);

/* The same work from any code, for async tasks and pipeline stages: takes a
 * stream of dev's pool, calls fn(weft_current_ctx(), stream, arg) and waits
 * for the work as weft_gpu_stream_wait does.  Returns fn's non-zero value,
 * the failure of the work fn queued (WEFT_EDEVICE: "Failed work" above),
 * WEFT_EINVAL (dev or fn NULL), or WEFT_OK. */
WEFT_API int weft_gpu_call(weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg);

/* ---- GPU pipeline stages -------------------------------------------------------- */

/* A pipeline stage's GPU work: records copies and launches for the token of
 * pf on s.  Return 0, or non-zero to fail the pipeline (as a stage). */
typedef int (*weft_gpu_stage_fn)(weft_pipeflow *pf, weft_gpu_stream *s, void *arg);

/* What weft_gpu_stage_run needs: the device, the executor the pipeline runs
 * on, and the stage's function and argument.  The stage's wait for its GPU
 * work is cooperative (its worker runs other jobs meanwhile) wherever it runs
 * on a worker: every stage call there has a context of its run, through which
 * the wait finds the worker, so `ex` may be NULL; it is the fallback for a
 * call with no context.  Off the workers (a thread that is not one) the wait
 * blocks that thread. */
typedef struct weft_gpu_stage {
    weft_gpu_device *dev; /* the device whose stream pool the stage takes a stream from; required */
    weft_executor *ex;    /* the pipeline's executor, or NULL (see above) */
    weft_gpu_stage_fn fn; /* records the token's GPU work; required */
    void *arg;            /* passed to fn */
} weft_gpu_stage;

/* A weft_stage_fn for GPU work: give it as a stage's fn with a
 * weft_gpu_stage as its arg:
 *
 *     weft_gpu_stage up = {dev, ex, up_kernel_down, chunks};
 *     weft_stage stages[] = {{WEFT_STAGE_SERIAL, read, NULL, "read"},
 *                            {WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &up, "gpu"},
 *                            {WEFT_STAGE_SERIAL, write, NULL, "write"}};
 *
 * It takes a stream of the device's pool (weft_gpu_stream_begin: tokens in a
 * parallel stage get different streams, so their copies and kernels
 * overlap), calls fn, and waits for the work cooperatively: the worker runs
 * other jobs (other tokens' stages included) meanwhile, and naps when there
 * are none; the token goes on to the next stage once the work is done.
 * Returns fn's non-zero value, the failure of the work fn queued
 * (WEFT_EDEVICE: "Failed work" above), or
 * WEFT_EINVAL (NULL pf or stage, stage without dev or fn); any of them fails
 * the pipeline.  The weft_gpu_stage must outlive the pipeline's runs. */
WEFT_API int weft_gpu_stage_run(weft_pipeflow *pf, void *stage);

/* ---- config sizes (docs/abi.md) ----------------------------------------------
 *
 * Each call of this header that takes a config struct by pointer has a _sized
 * form, told the sizeof the caller was compiled with (right after the
 * pointer).  A program never names them: the header defines each call's name
 * as an inline function that passes this header's size.  A shorter struct (an
 * older header) reads as zero, the defaults, for the fields it lacks; a
 * longer one (a newer header) is WEFT_EINVAL, logged with the offset, unless
 * every byte this library does not know is zero.  Otherwise each behaves,
 * fails and may be called exactly as the call of its name.  The exported
 * symbols without _sized, which binaries built before the sizes were passed
 * call, read the 1.0 layout. */
/* weft_gpu_open with a weft_gpu_config of config_size bytes (see "config sizes"). */
WEFT_API WEFT_NODISCARD weft_gpu_device *weft_gpu_open_sized(const weft_gpu_config *config,
                                                             size_t config_size, weft_status *err);
#ifndef WEFT_BUILDING
WEFT_NODISCARD static inline weft_gpu_device *weft__gpu_open_inline(const weft_gpu_config *config,
                                                                    weft_status *err) {
    return weft_gpu_open_sized(config, sizeof(weft_gpu_config), err);
}
#define weft_gpu_open weft__gpu_open_inline
#endif

WEFT_EXTERN_C_END

#endif
