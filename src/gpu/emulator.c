/* The emulator backend: "device" memory is host memory (counted against a limit,
 * so running out is testable), each stream is a thread that runs its queue of
 * copies and host-function kernels in order.  Streams are really asynchronous
 * and ordered, as on a GPU: a test that forgets to wait reads stale data here
 * too.
 *
 * A stream's protocol: submitters append under `lock`, bump `bell` and wake
 * the thread if it said it sleeps; the thread bumps `completed` after each op
 * and wakes waiters if any registered.  Both are store-then-load handshakes
 * with seq_cst on both sides (the thread's `sleeping` against a submitter's
 * `bell`; a waiter's `waiters` against the thread's `completed`), so no wake-up
 * is lost. */
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

typedef struct emu_op {
    struct emu_op *next;
    size_t bytes;        /* of this record */
    const emu_kernel *kernel; /* NULL: a copy */
    void *dst;
    const void *src;
    size_t n;
    weft_gpu_range range;
    void *args[WEFT_GPU_MAX_ARGS];
    _Alignas(16) unsigned char values[]; /* copies of value arguments */
} emu_op;

typedef struct emu_stream {
    weft__mutex lock; /* queue and message */
    emu_op *head, *tail;
    uint32_t submitted; /* under lock */
    _Atomic uint32_t bell, sleeping, completed, waiters;
    _Atomic int error; /* a failed kernel not yet reported; 0 if none */
    char message[160]; /* its text, under lock */
    _Atomic bool stop;
    weft__thread thread;
} emu_stream;

typedef struct emu_event {
    emu_stream *s;
    uint32_t seq; /* done when completed has reached it */
} emu_event;

static bool reached(uint32_t completed, uint32_t seq) { return (int32_t)(completed - seq) >= 0; }

/* ---- the stream thread ------------------------------------------------------ */

static void run_op(emu_stream *s, emu_op *op) {
    if (!op->kernel) {
        memcpy(op->dst, op->src, op->n);
        return;
    }
    int rc = op->kernel->fn(&op->range, op->args);
    if (rc == 0) return;
    weft__mutex_lock(&s->lock);
    if (atomic_load_explicit(&s->error, memory_order_relaxed) == 0) {
        snprintf(s->message, sizeof s->message, "emulator: kernel %s failed (returned %d)", op->kernel->name, rc);
        atomic_store_explicit(&s->error, WEFT_EDEVICE, memory_order_relaxed);
    }
    weft__mutex_unlock(&s->lock);
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
            run_op(s, op);
            weft__free(op, op->bytes);
            /* seq_cst store, then the load of waiters: see the file comment. */
            atomic_fetch_add_explicit(&s->completed, 1, memory_order_seq_cst);
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

static void push(emu_stream *s, emu_op *op) {
    op->next = NULL;
    weft__mutex_lock(&s->lock);
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    s->submitted++;
    weft__mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&s->bell, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&s->sleeping, memory_order_seq_cst)) weft__futex_wake(&s->bell, 1);
}

static emu_op *new_op(size_t extra) {
    size_t bytes = sizeof(emu_op) + extra;
    emu_op *op = weft__calloc(bytes);
    if (op) op->bytes = bytes;
    return op;
}

/* ---- the table -------------------------------------------------------------- */

static int emu_open(weft_gpu_device *dev, const weft_gpu_config *cfg) {
    if (cfg->index != 0) return WEFT_ENOENT;
    emu_device *sd = weft__calloc(sizeof *sd);
    if (!sd) return WEFT_ENOMEM;
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
    if (!op) return WEFT_ENOMEM;
    op->dst = dst;
    op->src = src;
    op->n = n;
    push(stream, op);
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
    if (!s) return WEFT_ENOMEM;
    if (weft__mutex_init(&s->lock) != 0) goto fail;
    int st = weft__thread_start(&s->thread, stream_main, s, 0);
    if (st == 0) {
        *stream = s;
        return 0;
    }
    weft__mutex_destroy(&s->lock);
fail:
    weft__free(s, sizeof *s);
    return WEFT_ENOMEM;
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

/* The failure of a kernel the stream ran, reported once (then cleared). */
static int take_error(emu_stream *s) {
    if (atomic_load_explicit(&s->error, memory_order_relaxed) == 0) return 0;
    weft__mutex_lock(&s->lock);
    int err = atomic_exchange_explicit(&s->error, 0, memory_order_relaxed);
    if (err) weft__set_error_message("%s", s->message);
    weft__mutex_unlock(&s->lock);
    return err;
}

static uint32_t current_seq(emu_stream *s) {
    weft__mutex_lock(&s->lock);
    uint32_t seq = s->submitted;
    weft__mutex_unlock(&s->lock);
    return seq;
}

static int emu_stream_sync(weft_gpu_device *dev, void *stream) {
    emu_stream *s = stream;
    wait_for(s, current_seq(s));
    return take_error(s);
}

static void emu_stream_destroy(weft_gpu_device *dev, void *stream) {
    emu_stream *s = stream;
    atomic_store_explicit(&s->stop, true, memory_order_release);
    atomic_fetch_add_explicit(&s->bell, 1, memory_order_seq_cst);
    weft__futex_wake(&s->bell, 1);
    weft__thread_join(s->thread);
    weft__mutex_destroy(&s->lock);
    weft__free(s, sizeof *s);
}

static int emu_event_record(weft_gpu_device *dev, void *stream, void **event) {
    emu_event *e = weft__alloc(sizeof *e);
    if (!e) return WEFT_ENOMEM;
    e->s = stream;
    e->seq = current_seq(stream);
    *event = e;
    return 0;
}

static int emu_event_query(weft_gpu_device *dev, void *event) {
    emu_event *e = event;
    if (!reached(atomic_load_explicit(&e->s->completed, memory_order_acquire), e->seq)) return WEFT_EAGAIN;
    return take_error(e->s);
}

static int emu_event_sync(weft_gpu_device *dev, void *event) {
    emu_event *e = event;
    wait_for(e->s, e->seq);
    return take_error(e->s);
}

static void emu_event_destroy(weft_gpu_device *dev, void *event) { weft__free(event, sizeof(emu_event)); }

static int emu_kernel_create(weft_gpu_device *dev, const weft_gpu_kernel_source *src, void **kernel) {
    if (!src->host) {
        weft__set_error_message("emulator: kernel %s has no host function", src->name ? src->name : "(unnamed)");
        return WEFT_ENOENT;
    }
    emu_kernel *k = weft__calloc(sizeof *k);
    if (!k) return WEFT_ENOMEM;
    k->fn = src->host;
    snprintf(k->name, sizeof k->name, "%s", src->name ? src->name : "(host)");
    *kernel = k;
    return 0;
}

static void emu_kernel_destroy(weft_gpu_device *dev, void *kernel) { weft__free(kernel, sizeof(emu_kernel)); }

static int emu_launch(weft_gpu_device *dev, void *stream, void *kernel, const weft_gpu_range *range,
                       const weft_gpu_arg *args, size_t nargs) {
    size_t group = 1, values = 0;
    for (int i = 0; i < 3; i++) group *= range->local[i] ? range->local[i] : 1;
    if (group > EMU_MAX_GROUP) {
        weft__set_error_message("emulator: launch refused: a group of %zu work items is over the limit %d", group,
                                EMU_MAX_GROUP);
        return WEFT_EDEVICE;
    }
    for (size_t i = 0; i < nargs; i++)
        if (!args[i].buffer) values += (args[i].size + 15) & ~(size_t)15;
    emu_op *op = new_op(values);
    if (!op) return WEFT_ENOMEM;
    op->kernel = kernel;
    op->range = *range;
    for (size_t i = 0, at = 0; i < nargs; i++) {
        if (args[i].buffer) {
            op->args[i] = (void *)(uintptr_t)args[i].buffer->h;
            continue;
        }
        memcpy(op->values + at, args[i].value, args[i].size);
        op->args[i] = op->values + at;
        at += (args[i].size + 15) & ~(size_t)15;
    }
    push(stream, op);
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
    .event_record = emu_event_record,
    .event_query = emu_event_query,
    .event_sync = emu_event_sync,
    .event_destroy = emu_event_destroy,
    .kernel_create = emu_kernel_create,
    .kernel_destroy = emu_kernel_destroy,
    .launch = emu_launch,
};
