/* The emulator backend: "device" memory is host memory (counted against a limit,
 * so running out is testable), each stream is a thread that runs its queue of
 * copies and host-function kernels in order.  Streams are really asynchronous
 * and ordered, as on a GPU: a test that forgets to wait reads stale data here
 * too.
 *
 * A stream's protocol: submitters append under `lock`, bump `bell` and wake
 * the thread if it said it sleeps; the thread bumps `completed` after each op
 * and wakes waiters if any registered; a marker's waiters sleep on its event
 * (emu_event.done), which the thread wakes when it stamps it.  All three are
 * store-then-load handshakes with seq_cst on both sides (the thread's
 * `sleeping` against a submitter's `bell`; a waiter's `waiters` against the
 * thread's `completed`; an event's `waiters` against its `done`), so no
 * wake-up is lost.
 *
 * Failures (gpu.h has the rules): the thread counts failed kernels, all of
 * them and those outside any task's scope ("loose"), and an event is a marker
 * in the queue that the thread stamps with both counts when it reaches it.
 * So an event reports exactly the failures of the work before it, however
 * often it is asked; a synchronize reports the loose failures between the
 * last count a synchronize took and its own marker's; and a failure of work
 * queued in a scope goes to that scope (its task) alone.  Later work still
 * runs after a failure: a failed kernel does not break the stream. */
#include "core/alloc.h"
#include "core/error_detail.h"
#include "gpu/backend.h"

#include <stdio.h>
#include <string.h>

#define EMU_MAX_GROUP 1024 /* work items per group, as CUDA's block limit */

typedef struct emu_device {
    size_t limit;
    _Atomic size_t used;
} emu_device;

typedef struct emu_kernel {
    weft_gpu_host_fn fn;
    char name[64];
} emu_kernel;

struct emu_event;

typedef struct emu_op {
    struct emu_op *next;
    size_t bytes;        /* of this record */
    /* A launch carries a copy of its kernel (fn and name), not a pointer:
     * weft_gpu_kernel_destroy may free the kernel while its launches are
     * queued, and they still run (gpu.h). */
    bool launch;       /* false: a copy or a marker */
    emu_kernel kernel; /* a launch's */
    struct emu_event *mark;   /* a marker: the event to stamp */
    weft__gpu_scope *scope;   /* a kernel queued in a task's scope, or NULL */
    void *dst;
    const void *src;
    size_t n;
    weft_gpu_range range;
    void *args[WEFT_GPU_MAX_ARGS];
    _Alignas(16) unsigned char values[]; /* copies of value arguments */
} emu_op;

typedef struct emu_stream {
    weft__mutex lock; /* queue, submitted and reported */
    emu_op *head, *tail;
    uint32_t submitted; /* under lock */
    _Atomic uint32_t bell, sleeping, completed, waiters;
    /* Failed kernels so far, all and loose (outside any scope), with the text
     * of the last of each: the thread's alone, read by it when it stamps a
     * marker. */
    uint32_t failed, loose;
    char message[160], loose_message[160];
    uint32_t reported; /* loose failures synchronizes have reported: under lock */
    _Atomic bool stop;
    weft__thread thread;
} emu_stream;

/* A marker, owned by the event's holder and by the queue until the thread has
 * stamped it (refs counts the two). */
typedef struct emu_event {
    _Atomic int refs;
    /* 1 once stamped.  Queries and waits of an event read it, not the
     * stream: an event may outlive its stream (weft_gpu_stream_destroy frees
     * it), and reading s->completed then was a use after free.  A wait sleeps
     * on this word (counted in `waiters`), never on the stream's: a waiter
     * woken by the stream's counter read the stream again after a destroy on
     * another thread, which had seen the work end, had freed it. */
    _Atomic uint32_t done, waiters;
    uint32_t failed, loose; /* the stream's counts when the thread reached the marker */
    char message[160], loose_message[160];
} emu_event;

static bool reached(uint32_t completed, uint32_t seq) { return (int32_t)(completed - seq) >= 0; }

/* ---- the stream thread ------------------------------------------------------ */

static void event_unref(emu_event *e) {
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) weft__free(e, sizeof *e);
}

/* Copies the counts into the marker; its holder reads them once `completed`
 * has passed it (the thread's seq_cst increment after this orders them). */
static void stamp(emu_stream *s, emu_event *e) {
    e->failed = s->failed;
    e->loose = s->loose;
    if (s->failed) memcpy(e->message, s->message, sizeof e->message);
    if (s->loose) memcpy(e->loose_message, s->loose_message, sizeof e->loose_message);
    /* seq_cst store, then the load of waiters (a waiter: its increment, then
     * its load of done, in emu_event_sync), so no wake-up is lost; the store
     * also releases the counts above to the acquire loads of done.  The
     * queue's reference, dropped last, keeps e alive through the wake. */
    atomic_store_explicit(&e->done, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&e->waiters, memory_order_seq_cst)) weft__futex_wake(&e->done, INT32_MAX);
    event_unref(e);
}

/* A failed kernel: counted, and its scope's first failure.  The scope reads
 * status after its event, which the increment of `completed` orders after
 * this; release all the same, for the message written before it. */
static void note_failure(emu_stream *s, const emu_op *op, int rc) {
    snprintf(s->message, sizeof s->message, "emulator: kernel %s failed (returned %d)", op->kernel.name, rc);
    s->failed++;
    if (!op->scope) {
        memcpy(s->loose_message, s->message, sizeof s->message);
        s->loose++;
    } else if (atomic_load_explicit(&op->scope->status, memory_order_relaxed) == 0) {
        memcpy(op->scope->message, s->message, sizeof s->message);
        atomic_store_explicit(&op->scope->status, WEFT_EDEVICE, memory_order_release);
    }
}

static void run_op(emu_stream *s, emu_op *op) {
    if (op->mark) {
        stamp(s, op->mark);
    } else if (!op->launch) {
        memcpy(op->dst, op->src, op->n);
    } else {
        int rc = op->kernel.fn(&op->range, op->args);
        if (rc != 0) note_failure(s, op, rc);
    }
}

static emu_op *pop(emu_stream *s) {
    weft__mutex_lock(&s->lock);
    emu_op *op = s->head;
    if (op) {
        s->head = op->next;
        if (!s->head) s->tail = NULL;
    }
    weft__mutex_unlock(&s->lock);
    return op;
}

static void *stream_main(void *arg) {
    emu_stream *s = arg;
    weft__thread_set_name("weft-gpu-emulator");
    for (;;) {
        emu_op *op = pop(s);
        if (op) {
            /* A marker is stamped and counted under the lock, as one step:
             * its waiters wake at the stamp, and an event recorded as soon as
             * they return (a query right after a synchronize) must find the
             * stream idle (emu_event_record), not a count one short. */
            bool mark = op->mark != NULL;
            if (mark) weft__mutex_lock(&s->lock);
            run_op(s, op);
            /* seq_cst store, then the load of waiters: see the file comment. */
            atomic_fetch_add_explicit(&s->completed, 1, memory_order_seq_cst);
            if (mark) weft__mutex_unlock(&s->lock);
            weft__free(op, op->bytes);
            if (atomic_load_explicit(&s->waiters, memory_order_seq_cst)) weft__futex_wake(&s->completed, INT32_MAX);
            continue;
        }
        atomic_store_explicit(&s->sleeping, 1, memory_order_seq_cst);
        uint32_t bell = atomic_load_explicit(&s->bell, memory_order_seq_cst);
        weft__mutex_lock(&s->lock);
        bool empty = s->head == NULL;
        weft__mutex_unlock(&s->lock);
        if (empty && atomic_load_explicit(&s->stop, memory_order_acquire)) break;
        if (empty) (void)weft__futex_wait(&s->bell, bell, UINT64_MAX);
        atomic_store_explicit(&s->sleeping, 0, memory_order_relaxed);
    }
    return NULL;
}

/* Queues op; returns its place in the stream's order (the `completed` count
 * at which it is done). */
static uint32_t push(emu_stream *s, emu_op *op) {
    op->next = NULL;
    weft__mutex_lock(&s->lock);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    uint32_t seq = ++s->submitted;
    weft__mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&s->bell, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&s->sleeping, memory_order_seq_cst)) weft__futex_wake(&s->bell, 1);
    return seq;
}

static emu_op *new_op(size_t extra) {
    size_t bytes = sizeof(emu_op) + extra;
    emu_op *op = weft__calloc(bytes);
    if (op) op->bytes = bytes;
    return op;
}

/* ---- the table -------------------------------------------------------------- */

static int emu_open(weft_gpu_device *dev, const weft_gpu_config *cfg) {
    if (cfg->index != 0) { /* said as the driver backends say it (drv.c), not left unsaid */
        weft__set_error_message("emulator: no device %u (1 found)", cfg->index);
        return WEFT_ENOENT;
    }
    emu_device *sd = weft__calloc(sizeof *sd);
    if (!sd) return weft__fail("emulator", WEFT_ENOMEM, "no host memory for the device");
    sd->limit = cfg->emulator_memory;
    dev->impl = sd;
    snprintf(dev->name, sizeof dev->name, "weft emulator (host memory, %zu MiB)", sd->limit >> 20);
    return 0;
}

static void emu_close(weft_gpu_device *dev) { weft__free(dev->impl, sizeof(emu_device)); }

static int emu_mem_info(weft_gpu_device *dev, size_t *free_b, size_t *total_b) {
    emu_device *sd = dev->impl;
    size_t used = atomic_load_explicit(&sd->used, memory_order_relaxed);
    *total_b = sd->limit;
    *free_b = used < sd->limit ? sd->limit - used : 0;
    return 0;
}

static int emu_alloc(weft_gpu_device *dev, size_t bytes, unsigned flags, uint64_t *h, void **host) {
    emu_device *sd = dev->impl;
    size_t used = atomic_fetch_add_explicit(&sd->used, bytes, memory_order_relaxed);
    void *p = NULL;
    if (used <= sd->limit && bytes <= sd->limit - used) p = weft__alloc_aligned(bytes, 64);
    if (!p) {
        atomic_fetch_sub_explicit(&sd->used, bytes, memory_order_relaxed);
        weft__set_error_message("emulator: out of device memory (%zu bytes asked, %zu of %zu in use)", bytes, used,
                                sd->limit);
        return WEFT_ENOMEM;
    }
    *h = (uint64_t)(uintptr_t)p;
    *host = (flags & WEFT_GPU_MANAGED) ? p : NULL;
    return 0;
}

static void emu_free(weft_gpu_device *dev, uint64_t h, size_t bytes, unsigned flags) {
    emu_device *sd = dev->impl;
    weft__free_aligned((void *)(uintptr_t)h, bytes, 64);
    atomic_fetch_sub_explicit(&sd->used, bytes, memory_order_relaxed);
}

static int copy(void *stream, void *dst, const void *src, size_t n) {
    if (!stream) {
        memcpy(dst, src, n);
        return 0;
    }
    emu_op *op = new_op(0);
    if (!op) return weft__fail("emulator", WEFT_ENOMEM, "no host memory to queue a copy of %zu bytes", n);
    op->dst = dst;
    op->src = src;
    op->n = n;
    (void)push(stream, op);
    return 0;
}

static int emu_upload(weft_gpu_device *dev, void *stream, uint64_t dst, size_t off, const void *src, size_t n) {
    return copy(stream, (char *)(uintptr_t)dst + off, src, n);
}

static int emu_download(weft_gpu_device *dev, void *stream, void *dst, uint64_t src, size_t off, size_t n) {
    return copy(stream, dst, (const char *)(uintptr_t)src + off, n);
}

static int emu_stream_create(weft_gpu_device *dev, void **stream) {
    emu_stream *s = weft__calloc(sizeof *s);
    if (!s) return weft__fail("emulator", WEFT_ENOMEM, "no host memory for a stream");
    if (weft__mutex_init(&s->lock) != 0) goto fail;
    int st = weft__thread_start(&s->thread, stream_main, s, 0);
    if (st == 0) {
        *stream = s;
        return 0;
    }
    weft__mutex_destroy(&s->lock);
fail:
    weft__free(s, sizeof *s);
    return weft__fail("emulator", WEFT_ENOMEM, "a stream's lock or thread could not be made");
}

/* Blocks until `completed` reaches seq. */
static void wait_for(emu_stream *s, uint32_t seq) {
    for (;;) {
        uint32_t c = atomic_load_explicit(&s->completed, memory_order_acquire);
        if (reached(c, seq)) return;
        atomic_fetch_add_explicit(&s->waiters, 1, memory_order_seq_cst);
        c = atomic_load_explicit(&s->completed, memory_order_seq_cst);
        if (!reached(c, seq)) (void)weft__futex_wait(&s->completed, c, UINT64_MAX);
        atomic_fetch_sub_explicit(&s->waiters, 1, memory_order_relaxed);
    }
}

static uint32_t current_seq(emu_stream *s) {
    weft__mutex_lock(&s->lock);
    uint32_t seq = s->submitted;
    weft__mutex_unlock(&s->lock);
    return seq;
}

/* Queues a marker; *event holds the caller's reference. */
static int emu_event_record(weft_gpu_device *dev, void *stream, void **event) {
    emu_stream *s = stream;
    emu_event *e = weft__calloc(sizeof *e);
    emu_op *op = e ? new_op(0) : NULL;
    if (!op) {
        if (e) weft__free(e, sizeof *e);
        return weft__fail("emulator", WEFT_ENOMEM, "no host memory for a marker (an event)");
    }
    atomic_init(&e->refs, 2);
    *event = e;
    /* A stream whose work is all done: the marker is stamped here, done at
     * once.  Queued, it stayed pending until the thread woke for it, so a
     * weft_gpu_stream_query right after a synchronize said WEFT_EAGAIN for a
     * stream with nothing pending (6 times in 100).  Under the lock no op can
     * be pushed; the acquire load of `completed` orders the thread's counts
     * (written before its increment) before the stamp's reads. */
    weft__mutex_lock(&s->lock);
    if (!s->head && reached(atomic_load_explicit(&s->completed, memory_order_acquire), s->submitted)) {
        stamp(s, e); /* drops the queue's reference */
        weft__mutex_unlock(&s->lock);
        weft__free(op, op->bytes);
        return 0;
    }
    weft__mutex_unlock(&s->lock);
    op->mark = e;
    (void)push(s, op);
    return 0;
}

static int event_status(const emu_event *e) {
    if (e->failed == 0) return 0;
    weft__set_error_message("%s", e->message);
    return WEFT_EDEVICE;
}

/* The stamp comes before the thread's increment of `completed`, so `done`
 * is set by the time the marker counts as reached; a pending event's stream
 * is still alive (destroying a stream runs its queue to the end, which stamps
 * every marker). */
static int emu_event_query(weft_gpu_device *dev, void *event) {
    emu_event *e = event;
    if (!atomic_load_explicit(&e->done, memory_order_acquire)) return WEFT_EAGAIN;
    return event_status(e);
}

static int emu_event_sync(weft_gpu_device *dev, void *event) {
    emu_event *e = event;
    while (!atomic_load_explicit(&e->done, memory_order_acquire)) {
        atomic_fetch_add_explicit(&e->waiters, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(&e->done, memory_order_seq_cst)) (void)weft__futex_wait(&e->done, 0, UINT64_MAX);
        atomic_fetch_sub_explicit(&e->waiters, 1, memory_order_relaxed);
    }
    return event_status(e);
}

static void emu_event_destroy(weft_gpu_device *dev, void *event) { event_unref(event); }

/* Loose failures between the count the last synchronize took and the marker's
 * (counts only grow; compared as sequence numbers, as `completed` is). */
static int emu_sync_status(weft_gpu_device *dev, void *stream, void *event, bool take) {
    emu_stream *s = stream;
    emu_event *e = event;
    int st = 0;
    weft__mutex_lock(&s->lock);
    if ((int32_t)(e->loose - s->reported) > 0) {
        weft__set_error_message("%s", e->loose_message);
        st = WEFT_EDEVICE;
        if (take) s->reported = e->loose;
    }
    weft__mutex_unlock(&s->lock);
    return st;
}

static int emu_stream_sync(weft_gpu_device *dev, void *stream) {
    emu_stream *s = stream;
    void *e;
    int st = emu_event_record(dev, s, &e);
    if (st) {
        /* No marker: wait all the same (destroy relies on it); the failures
         * stay for the next synchronize. */
        wait_for(s, current_seq(s));
        return st;
    }
    (void)emu_event_sync(dev, e);
    st = emu_sync_status(dev, s, e, true);
    emu_event_destroy(dev, e);
    return st;
}

static void emu_stream_drain(weft_gpu_device *dev, void *stream) { wait_for(stream, current_seq(stream)); }

static void emu_stream_destroy(weft_gpu_device *dev, void *stream) {
    emu_stream *s = stream;
    atomic_store_explicit(&s->stop, true, memory_order_release);
    atomic_fetch_add_explicit(&s->bell, 1, memory_order_seq_cst);
    weft__futex_wake(&s->bell, 1);
    weft__thread_join(s->thread);
    weft__mutex_destroy(&s->lock);
    weft__free(s, sizeof *s);
}

static int emu_kernel_create(weft_gpu_device *dev, const weft_gpu_kernel_source *src, void **kernel) {
    if (!src->host) {
        weft__set_error_message("emulator: kernel %s has no host function", src->name ? src->name : "(unnamed)");
        return WEFT_ENOENT;
    }
    emu_kernel *k = weft__calloc(sizeof *k);
    if (!k) return weft__fail("emulator", WEFT_ENOMEM, "no host memory for a kernel");
    k->fn = src->host;
    snprintf(k->name, sizeof k->name, "%s", src->name ? src->name : "(host)");
    *kernel = k;
    return 0;
}

static void emu_kernel_destroy(weft_gpu_device *dev, void *kernel) { weft__free(kernel, sizeof(emu_kernel)); }

static int emu_launch(weft_gpu_device *dev, void *stream, void *kernel, const weft_gpu_range *range,
                       const weft_gpu_arg *args, size_t nargs) {
    size_t group = 1, values = 0;
    /* Multiplied only while under the limit: the plain product could wrap
     * past it ({2^32, 2^32, 1} made 0, a launch accepted). */
    for (int i = 0; i < 3; i++) {
        size_t l = range->local[i] ? range->local[i] : 1;
        group = l <= EMU_MAX_GROUP / group ? group * l : (size_t)EMU_MAX_GROUP + 1;
    }
    if (group > EMU_MAX_GROUP) {
        weft__set_error_message("emulator: launch refused: a group of %zu x %zu x %zu work items is over the limit %d",
                                range->local[0], range->local[1], range->local[2], EMU_MAX_GROUP);
        return WEFT_EDEVICE;
    }
    /* The copies of the values, each rounded up to 16 bytes.  Sizes that add
     * up past PTRDIFF_MAX / 2 (more than any allocation gets) are refused
     * before the sum, which could wrap to a few bytes (a size near SIZE_MAX)
     * and let the copy below overrun the record. */
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].buffer) continue;
        if (args[i].size > (size_t)PTRDIFF_MAX / 2 - values) {
            values = SIZE_MAX;
            break;
        }
        values += (args[i].size + 15) & ~(size_t)15;
    }
    emu_op *op = values == SIZE_MAX ? NULL : new_op(values);
    if (!op) return weft__fail("weft_gpu_launch", WEFT_ENOMEM, "emulator: no memory for the copies of the values");
    op->launch = true;
    op->kernel = *(const emu_kernel *)kernel;
    op->range = *range;
    /* Work the thread queues on its scope's stream is the scope's. */
    weft__gpu_scope *sc = weft__gpu_scope_now;
    if (sc && sc->stream == stream) op->scope = sc;
    for (size_t i = 0, at = 0; i < nargs; i++) {
        if (args[i].buffer) {
            op->args[i] = (void *)(uintptr_t)args[i].buffer->h;
            continue;
        }
        memcpy(op->values + at, args[i].value, args[i].size);
        op->args[i] = op->values + at;
        at += (args[i].size + 15) & ~(size_t)15;
    }
    (void)push(stream, op);
    return 0;
}

const weft__gpu_ops weft__gpu_emulator_ops = {
    .kind = WEFT_GPU_EMULATOR,
    .open = emu_open,
    .close = emu_close,
    .mem_info = emu_mem_info,
    .alloc = emu_alloc,
    .free = emu_free,
    .host_alloc = weft__gpu_plain_host_alloc,
    .host_free = weft__gpu_plain_host_free,
    .upload = emu_upload,
    .download = emu_download,
    .stream_create = emu_stream_create,
    .stream_destroy = emu_stream_destroy,
    .stream_sync = emu_stream_sync,
    .stream_drain = emu_stream_drain,
    .event_record = emu_event_record,
    .event_query = emu_event_query,
    .event_sync = emu_event_sync,
    .event_destroy = emu_event_destroy,
    .sync_status = emu_sync_status,
    .scopes = true,
    .kernel_create = emu_kernel_create,
    .kernel_destroy = emu_kernel_destroy,
    .launch = emu_launch,
};
