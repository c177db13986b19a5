/* Distributed work pool (weft_mpi_pool): independent tasks balanced across
 * ranks by stealing batches (seed 003, §6.5: over a network, steal whole
 * batches, the inputs with them).
 *
 * Each rank's submitted tasks are a static array, claimed from both ends by
 * one atomic word (head | tail << 32): this rank's workers take one task at a
 * time from the head, the progress thread (the caller of weft_mpi_pool_run,
 * the only thread that calls MPI) takes a batch from the tail for a thief.
 * Every task is claimed exactly once.  A stolen batch runs on the thief's
 * workers, which write the outputs straight into the reply message; the last
 * to finish hands the batch to the progress thread, which sends it back.
 * Stolen tasks are never stolen again, so pools only shrink and a victim that
 * once answers "nothing left" is never asked again.
 *
 * Termination: a rank enters an MPI_Ibarrier when its own tasks are done (run
 * here or their results back), its stolen batches are answered, it has no
 * steal request outstanding, and every other rank has answered "nothing
 * left" (or a task failed).  Inside the barrier it still answers requests.
 * When the barrier completes every rank is past that point, so every message
 * was received.  docs/guide-mpi.md, "Work pools". */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mpi/dist.h"
#include "platform/wait_inline.h" /* header-only: libweft.so hides weft__futex_* */
#include "weft/async.h"

enum { TAG_REQ = 1, TAG_BATCH = 2, TAG_RESULT = 3 };
enum {
    DEFAULT_BATCH_MAX = 1024,
    BATCH_BYTES_MAX = 16 << 20, /* a batch stops growing here (it has one task at least) */
    POOL_IO_MAX = 1 << 30,      /* a task's input and output together at most */
    ALIGN = 16,                 /* inputs and outputs inside messages */
};

static size_t pad16(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

typedef struct pool_task {
    uint32_t fn, in_size, out_size;
    size_t in_off; /* into arena */
    void *out;     /* the submitter's buffer */
} pool_task;

/* A batch message: a header, a record per task, the outputs' room, then the
 * inputs.  The thief sends back everything before the inputs (results_len
 * bytes): the records with each task's code, and the outputs.  Offsets are
 * from the message's start; everything is 16-byte aligned. */
typedef struct batch_hdr {
    uint32_t count, results_len, pad_[2];
} batch_hdr;
typedef struct batch_rec {
    uint32_t id;              /* the task's index on its submitter */
    uint32_t fn, in_size, out_size;
    int32_t rc;               /* set by the thief */
    uint32_t ran;             /* set by the thief: 0 when skipped after a failure */
    uint32_t out_off, in_off;
} batch_rec;

/* A batch stolen from rank `from`, in one allocation with its message (so
 * that, once received, nothing can fail for lack of memory). */
typedef struct pool_batch {
    weft_mpi_pool *pool;
    struct pool_batch *next_active; /* the progress thread's list */
    struct pool_batch *next_done;   /* the done stack (workers push) */
    int from;
    uint32_t count, spawn_left;
    _Atomic uint32_t claimed;
    _Atomic uint32_t live; /* runners not yet done with it, spawned or still owed */
    char *msg; /* just after this struct */
    size_t bytes; /* the whole allocation's, for weft_mem_free */
} pool_batch;

/* A send in flight and what to free when it completes (`bytes` long). */
typedef struct pool_req {
    MPI_Request r;
    void *owned;
    size_t bytes;
} pool_req;

struct weft_mpi_pool {
    MPI_Comm comm;
    int rank, size;
    weft_mpi_pool_fn *fns;
    uint32_t nfns, batch_max;
    bool no_steal;
    void *arg;
    pool_task *tasks;
    uint32_t ntasks, captasks;
    char *arena; /* the inputs, in 16-byte units */
    uint32_t arena_len, arena_cap;

    /* One run. */
    weft_executor *ex;
    unsigned nworkers;
    _Atomic uint64_t claim;   /* head | tail << 32 over tasks */
    _Atomic uint32_t runners; /* runner jobs alive */
    _Atomic uint64_t tasks_run;
    _Atomic(pool_batch *) done; /* finished stolen batches (MPSC stack) */
    _Atomic uint32_t signal;    /* the progress thread naps on it; workers bump it */
    _Atomic int failed;
    char fail[200];             /* the first failure, written by its recorder */
    uint32_t own_spawn_left;
    pool_batch *active;         /* stolen batches not yet answered */
    uint32_t given, returned;   /* own tasks stolen, and those answered */
    bool req_out;               /* a steal request of ours awaits its answer */
    int victim;
    bool *exhausted;            /* [size]: that rank answered "nothing left" */
    int nexhausted;
    pool_req *reqs;             /* sends in flight */
    uint32_t nreq, capreq;
    weft_mpi_pool_figures stats;
    char errmsg[256];
};

/* ---- claiming ------------------------------------------------------------------- */

#define HEAD(w) ((uint32_t)(w))
#define TAIL(w) ((uint32_t)((w) >> 32))
#define CLAIM(h, t) ((uint64_t)(h) | (uint64_t)(t) << 32)

/* A worker takes the task at the head.  Lock-free.  The relaxed orders
 * suffice: the tasks array was written before the run's jobs were submitted
 * (the executor's submission publishes it), and the word only arbitrates. */
static bool claim_head(weft_mpi_pool *p, uint32_t *i) {
    uint64_t w = atomic_load_explicit(&p->claim, memory_order_relaxed);
    do {
        if (HEAD(w) >= TAIL(w)) return false;
    } while (!atomic_compare_exchange_weak_explicit(&p->claim, &w, CLAIM(HEAD(w) + 1, TAIL(w)),
                                                    memory_order_relaxed, memory_order_relaxed));
    *i = HEAD(w);
    return true;
}

static bool own_exhausted(weft_mpi_pool *p) {
    uint64_t w = atomic_load_explicit(&p->claim, memory_order_relaxed);
    return HEAD(w) >= TAIL(w);
}

/* ---- workers -------------------------------------------------------------------- */

/* Any thread: the first failure wins and writes its text, read after the run
 * (after the runners' release below, or on the progress thread itself). */
static void record_failure(weft_mpi_pool *p, int owner, uint32_t id, int where, int code) {
    if (atomic_exchange_explicit(&p->failed, 1, memory_order_relaxed) == 0)
        snprintf(p->fail, sizeof p->fail, "pool task #%u submitted on rank %d failed on rank %d with code %d", id,
                 owner, where, code);
}

static bool skipping(weft_mpi_pool *p) { return atomic_load_explicit(&p->failed, memory_order_relaxed) != 0; }

/* The progress thread may be napping: make it look again. */
static void nudge(_Atomic uint32_t *signal) {
    atomic_fetch_add_explicit(signal, 1, memory_order_release);
    weft__word_wake(signal);
}

/* A runner leaves.  Its release pairs with the progress thread's acquire load
 * of `runners`, publishing the outputs it wrote and the failure text.  The
 * bump comes first: once runners reads 0 the pool may be freed, and the
 * wake-up only names the word's address. */
static void runner_exit(weft_mpi_pool *p) {
    _Atomic uint32_t *signal = &p->signal;
    atomic_fetch_add_explicit(signal, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&p->runners, 1, memory_order_release);
    weft__word_wake(signal);
}

static int run_own(weft_ctx *cx, void *arg) {
    weft_mpi_pool *p = arg;
    uint64_t ran = 0;
    for (uint32_t i; claim_head(p, &i);) {
        if (skipping(p)) continue;
        const pool_task *t = &p->tasks[i];
        int rc = p->fns[t->fn](cx, p->arena + t->in_off, t->in_size, t->out, t->out_size, p->arg);
        ran++;
        if (rc != 0) record_failure(p, p->rank, i, p->rank, rc);
    }
    atomic_fetch_add_explicit(&p->tasks_run, ran, memory_order_relaxed);
    runner_exit(p);
    return 0;
}

/* Pushes b on the done stack; the release pairs with answer_done's acquire
 * exchange, publishing the records and outputs written into b->msg. */
static void push_done(weft_mpi_pool *p, pool_batch *b) {
    pool_batch *head = atomic_load_explicit(&p->done, memory_order_relaxed);
    do b->next_done = head;
    while (!atomic_compare_exchange_weak_explicit(&p->done, &head, b, memory_order_release,
                                                  memory_order_relaxed));
    nudge(&p->signal);
}

static int run_batch(weft_ctx *cx, void *arg) {
    pool_batch *b = arg;
    weft_mpi_pool *p = b->pool;
    uint64_t ran = 0;
    for (;;) {
        uint32_t i = atomic_fetch_add_explicit(&b->claimed, 1, memory_order_relaxed);
        if (i >= b->count) break;
        batch_rec *r = (batch_rec *)(b->msg + sizeof(batch_hdr)) + i;
        r->rc = 0;
        r->ran = !skipping(p);
        if (r->ran) {
            r->rc = p->fns[r->fn](cx, b->msg + r->in_off, r->in_size, b->msg + r->out_off, r->out_size, p->arg);
            ran++;
            if (r->rc != 0) record_failure(p, b->from, r->id, p->rank, r->rc);
        }
    }
    /* The batch is done when its last runner leaves (every runner finishes
     * what it claimed first; the count includes runners not yet started, so
     * none can still come).  acq_rel: the last one's push publishes every
     * runner's records; nothing here touches b after the push. */
    if (atomic_fetch_sub_explicit(&b->live, 1, memory_order_acq_rel) == 1) push_done(p, b);
    atomic_fetch_add_explicit(&p->tasks_run, ran, memory_order_relaxed);
    runner_exit(p);
    return 0;
}

/* ---- the progress thread ----------------------------------------------------------- */

/* Starts the runners still owed, counting each before it may exit; returns
 * how many started (submission fails only without memory: tried again). */
static int spawn_pending(weft_mpi_pool *p) {
    int n = 0;
    for (; p->own_spawn_left > 0; p->own_spawn_left--, n++) {
        atomic_fetch_add_explicit(&p->runners, 1, memory_order_relaxed);
        if (weft_silent_async(p->ex, run_own, p) != WEFT_OK) {
            atomic_fetch_sub_explicit(&p->runners, 1, memory_order_relaxed);
            return n;
        }
    }
    for (pool_batch *b = p->active; b; b = b->next_active)
        for (; b->spawn_left > 0; b->spawn_left--, n++) {
            atomic_fetch_add_explicit(&p->runners, 1, memory_order_relaxed);
            if (weft_silent_async(p->ex, run_batch, b) != WEFT_OK) {
                atomic_fetch_sub_explicit(&p->runners, 1, memory_order_relaxed);
                return n;
            }
        }
    return n;
}

/* Sends len bytes at buf to `to`; `owned` (or NULL), a block of `bytes`, is
 * freed when the send completes.  Without memory to track the request it
 * sends blocking (the receiver's progress thread is polling).  0 or
 * WEFT_ESYS. */
static int send(weft_mpi_pool *p, const void *buf, size_t len, int to, int tag, void *owned, size_t bytes) {
    p->stats.messages_sent++;
    p->stats.bytes_sent += len;
    if (weft__mpi_reserve((void **)&p->reqs, &p->capreq, p->nreq + 1, sizeof *p->reqs)) {
        int rc = MPI_Send(buf, (int)len, MPI_BYTE, to, tag, p->comm);
        weft_mem_free(owned, bytes);
        return rc == MPI_SUCCESS ? WEFT_OK : WEFT_ESYS;
    }
    pool_req *q = &p->reqs[p->nreq];
    if (MPI_Isend(buf, (int)len, MPI_BYTE, to, tag, p->comm, &q->r) != MPI_SUCCESS) {
        weft_mem_free(owned, bytes);
        return WEFT_ESYS;
    }
    q->owned = owned;
    q->bytes = bytes;
    p->nreq++;
    return WEFT_OK;
}

/* Completes the sends that are done; returns how many, or WEFT_ESYS. */
static int test_sends(weft_mpi_pool *p) {
    int done = 0;
    for (uint32_t i = 0; i < p->nreq;) {
        int flag = 0;
        if (MPI_Test(&p->reqs[i].r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return WEFT_ESYS;
        if (!flag) {
            i++;
            continue;
        }
        weft_mem_free(p->reqs[i].owned, p->reqs[i].bytes);
        p->reqs[i] = p->reqs[--p->nreq];
        done++;
    }
    return done;
}

/* How many of the k tasks below `tail` fit a batch: one at least, then as
 * long as the message stays under BATCH_BYTES_MAX.  *len: its size. */
static uint32_t fit(const weft_mpi_pool *p, uint32_t tail, uint32_t k, size_t *len) {
    size_t sz = sizeof(batch_hdr);
    uint32_t n = 0;
    for (; n < k; n++) {
        const pool_task *t = &p->tasks[tail - 1 - n];
        size_t add = sizeof(batch_rec) + pad16(t->in_size) + pad16(t->out_size);
        if (n > 0 && sz + add > BATCH_BYTES_MAX) break;
        sz += add;
    }
    *len = sz;
    return n;
}

/* The progress thread takes a batch from the tail for a thief: a share of
 * what is left (ceil(left / ranks), at most batch_max, within the byte cap).
 * Returns how many, the first being *first, the message's size in *len. */
static uint32_t claim_tail(weft_mpi_pool *p, uint32_t *first, size_t *len) {
    uint64_t w = atomic_load_explicit(&p->claim, memory_order_relaxed);
    uint32_t k;
    do {
        if (HEAD(w) >= TAIL(w)) return 0;
        uint32_t left = TAIL(w) - HEAD(w);
        k = left / (uint32_t)p->size + (left % (uint32_t)p->size != 0);
        if (k > p->batch_max) k = p->batch_max;
        k = fit(p, TAIL(w), k, len);
    } while (!atomic_compare_exchange_weak_explicit(&p->claim, &w, CLAIM(HEAD(w), TAIL(w) - k),
                                                    memory_order_relaxed, memory_order_relaxed));
    *first = TAIL(w) - k;
    return k;
}

/* A thief asks: answer with a batch, or with a header alone ("nothing
 * left", also what a rank without memory for the batch says). */
static int serve(weft_mpi_pool *p, int thief) {
    static const batch_hdr none;
    uint32_t first = 0, k = 0;
    size_t len = 0;
    if (!skipping(p) && !p->no_steal) k = claim_tail(p, &first, &len);
    char *msg = k ? weft_mem_calloc(len) : NULL;
    if (!msg) {
        /* Give the tasks back: only this thread moves the tail, and the
         * workers' head stops at `first`.  The runners may all have found
         * the head at `first` meanwhile and left: one more runner is owed,
         * or nobody would run what came back (the run never ended). */
        atomic_fetch_add_explicit(&p->claim, (uint64_t)k << 32, memory_order_relaxed);
        if (k && p->own_spawn_left == 0) p->own_spawn_left = 1;
        return send(p, &none, sizeof none, thief, TAG_BATCH, NULL, 0);
    }
    batch_rec *rec = (batch_rec *)(msg + sizeof(batch_hdr));
    size_t out_at = sizeof(batch_hdr) + k * sizeof *rec, in_at = out_at;
    for (uint32_t j = 0; j < k; j++) in_at += pad16(p->tasks[first + j].out_size);
    *(batch_hdr *)msg = (batch_hdr){ .count = k, .results_len = (uint32_t)in_at };
    for (uint32_t j = 0; j < k; j++) {
        const pool_task *t = &p->tasks[first + j];
        rec[j] = (batch_rec){ .id = first + j, .fn = t->fn, .in_size = t->in_size, .out_size = t->out_size,
                              .out_off = (uint32_t)out_at, .in_off = (uint32_t)in_at };
        if (t->in_size) memcpy(msg + in_at, p->arena + t->in_off, t->in_size);
        out_at += pad16(t->out_size);
        in_at += pad16(t->in_size);
    }
    p->given += k;
    p->stats.tasks_given += k;
    return send(p, msg, len, thief, TAG_BATCH, msg, len);
}

/* The answer to our steal request, received into b's message. */
static void take_batch(weft_mpi_pool *p, int victim, pool_batch *b) {
    p->req_out = false;
    const batch_hdr *h = (const batch_hdr *)b->msg;
    if (h->count == 0) {
        weft_mem_free(b, b->bytes);
        if (!p->exhausted[victim]) p->nexhausted++;
        p->exhausted[victim] = true;
        p->stats.steals_empty++;
        return;
    }
    b->pool = p;
    b->from = victim;
    b->count = h->count;
    b->spawn_left = b->count < p->nworkers ? b->count : p->nworkers;
    atomic_init(&b->claimed, 0);
    atomic_init(&b->live, b->spawn_left);
    b->next_active = p->active;
    p->active = b;
    p->stats.tasks_stolen += b->count;
}

/* Outputs of our tasks, back from a thief (the front of the batch we sent). */
static void take_results(weft_mpi_pool *p, int thief, const char *msg) {
    const batch_hdr *h = (const batch_hdr *)msg;
    const batch_rec *rec = (const batch_rec *)(msg + sizeof *h);
    for (uint32_t j = 0; j < h->count; j++) {
        const pool_task *t = &p->tasks[rec[j].id];
        if (rec[j].ran && rec[j].rc == 0 && t->out_size) memcpy(t->out, msg + rec[j].out_off, t->out_size);
        if (rec[j].ran && rec[j].rc != 0) record_failure(p, p->rank, rec[j].id, thief, rec[j].rc);
    }
    p->returned += h->count;
}

/* Receives and handles every message that has arrived; returns how many, or
 * WEFT_ESYS.  A message stays queued in MPI until there is memory for it. */
static int receive(weft_mpi_pool *p) {
    enum { BATCH_AT = (sizeof(pool_batch) + ALIGN - 1) / ALIGN * ALIGN };
    for (int n = 0;; n++) {
        int flag = 0, len = 0;
        MPI_Status s;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &flag, &s) != MPI_SUCCESS) return WEFT_ESYS;
        if (!flag) return n;
        MPI_Get_count(&s, MPI_BYTE, &len);
        size_t at = s.MPI_TAG == TAG_BATCH ? BATCH_AT : 0;
        size_t bytes = at + (size_t)len + 1;
        char *mem = weft_mem_alloc(bytes);
        if (!mem) return n;
        if (MPI_Recv(mem + at, len, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, p->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            weft_mem_free(mem, bytes);
            return WEFT_ESYS;
        }
        p->stats.messages_received++;
        p->stats.bytes_received += (uint64_t)len;
        if (s.MPI_TAG == TAG_BATCH) {
            pool_batch *b = (pool_batch *)mem;
            b->msg = mem + at;
            b->bytes = bytes;
            take_batch(p, s.MPI_SOURCE, b);
            continue;
        }
        if (s.MPI_TAG == TAG_RESULT) take_results(p, s.MPI_SOURCE, mem);
        weft_mem_free(mem, bytes);
        if (s.MPI_TAG == TAG_REQ && serve(p, s.MPI_SOURCE) != WEFT_OK) return WEFT_ESYS;
    }
}

/* Sends back the stolen batches the workers finished; returns how many, or
 * WEFT_ESYS. */
static int answer_done(weft_mpi_pool *p) {
    int n = 0;
    for (pool_batch *b = atomic_exchange_explicit(&p->done, NULL, memory_order_acquire), *next; b; b = next, n++) {
        next = b->next_done;
        pool_batch **pp = &p->active;
        while (*pp != b) pp = &(*pp)->next_active;
        *pp = b->next_active;
        const batch_hdr *h = (const batch_hdr *)b->msg;
        if (send(p, b->msg, h->results_len, b->from, TAG_RESULT, b, b->bytes) != WEFT_OK) return WEFT_ESYS;
    }
    return n;
}

/* Asks another rank for work when this one is about to run out: its own
 * tasks all taken and fewer stolen ones left to start than it has workers.
 * Victims in turn from the next rank up, skipping those with nothing left. */
static int maybe_steal(weft_mpi_pool *p) {
    static const char nothing;
    if (p->req_out || p->no_steal || skipping(p) || p->nexhausted >= p->size - 1 || !own_exhausted(p)) return 0;
    uint32_t unclaimed = 0;
    for (const pool_batch *b = p->active; b; b = b->next_active) {
        uint32_t c = atomic_load_explicit(&b->claimed, memory_order_relaxed);
        if (c < b->count) unclaimed += b->count - c;
    }
    if (unclaimed >= p->nworkers) return 0;
    while (p->victim == p->rank || p->exhausted[p->victim]) p->victim = (p->victim + 1) % p->size;
    p->req_out = true;
    p->stats.steal_requests++;
    return send(p, &nothing, 0, p->victim, TAG_REQ, NULL, 0) == WEFT_OK ? 1 : WEFT_ESYS;
}

/* This rank's part is over (see the top of the file). */
static bool finished_here(weft_mpi_pool *p) {
    return own_exhausted(p) && p->own_spawn_left == 0 && !p->active && p->given == p->returned && !p->req_out &&
           (p->no_steal || skipping(p) || p->nexhausted >= p->size - 1) &&
           atomic_load_explicit(&p->runners, memory_order_acquire) == 0;
}

/* Nothing happened this round: poll (yielding) for WEFT__MPI_POLL_S after the
 * last event, then nap on the signal word, which workers bump when a batch is
 * done or a runner leaves.  Steal requests can only be seen by polling, so
 * the naps stay short (at most 1 ms). */
static void idle(weft_mpi_pool *p, double *since, unsigned *naps) {
    double now = MPI_Wtime();
    if (*since < 0) *since = now;
    if (now - *since < WEFT__MPI_POLL_S) {
        weft__yield_now();
        return;
    }
    uint32_t seen = atomic_load_explicit(&p->signal, memory_order_acquire);
    if (!atomic_load_explicit(&p->done, memory_order_relaxed))
        (void)weft__word_wait(&p->signal, seen, weft__mpi_nap_ns((*naps)++));
}

/* One round of the progress loop: how many things happened, or WEFT_ESYS. */
static int round_once(weft_mpi_pool *p) {
    int did = spawn_pending(p), r;
    if ((r = receive(p)) < 0) return r;
    did += r;
    if ((r = answer_done(p)) < 0) return r;
    did += r;
    if ((r = test_sends(p)) < 0) return r;
    did += r;
    if ((r = maybe_steal(p)) < 0) return r;
    return did + r;
}

/* After an MPI error: the tasks left are skipped, the runners awaited, what
 * is in flight dropped (the run's result is lost: WEFT_ESYS). */
static void abandon(weft_mpi_pool *p) {
    atomic_store_explicit(&p->failed, 1, memory_order_relaxed);
    while (atomic_load_explicit(&p->runners, memory_order_acquire) != 0) weft__yield_now();
    for (pool_batch *b = p->active, *next; b; b = next) {
        next = b->next_active;
        weft_mem_free(b, b->bytes);
    }
    p->active = NULL;
    atomic_store_explicit(&p->done, NULL, memory_order_relaxed);
    for (uint32_t i = 0; i < p->nreq; i++) {
        MPI_Cancel(&p->reqs[i].r);
        MPI_Request_free(&p->reqs[i].r);
        weft_mem_free(p->reqs[i].owned, p->reqs[i].bytes);
    }
    p->nreq = 0;
}

static int progress(weft_mpi_pool *p) {
    MPI_Request barrier = MPI_REQUEST_NULL;
    double since = -1;
    unsigned naps = 0;
    for (;;) {
        int did = round_once(p), flag = 0;
        if (did < 0) break;
        if (barrier == MPI_REQUEST_NULL && finished_here(p)) {
            if (MPI_Ibarrier(p->comm, &barrier) != MPI_SUCCESS) break;
            did++;
        }
        if (barrier != MPI_REQUEST_NULL) {
            if (MPI_Test(&barrier, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
            if (flag) {
                /* Every message was received: our sends complete at once. */
                while (p->nreq > 0)
                    if (test_sends(p) < 0) break;
                if (p->nreq == 0) return WEFT_OK;
                break;
            }
        }
        if (did > 0) {
            since = -1;
            naps = 0;
        } else {
            idle(p, &since, &naps);
        }
    }
    abandon(p);
    return WEFT_ESYS;
}

/* ---- the API ------------------------------------------------------------------------ */

weft_mpi_pool *weft_mpi_pool_create(MPI_Comm comm, const weft_mpi_pool_config *cfg, weft_status *err) {
    const char *why = NULL;
    weft_status st = WEFT_EINVAL;
    weft_mpi_pool *p = NULL;
    if (weft__mpi_check_thread(&why) != WEFT_OK) {
        weft__mpi_set_create_error("weft_mpi_pool_create: %s", why);
        goto fail;
    }
    bool fns_ok = cfg && cfg->fns && cfg->nfns > 0 && cfg->nfns < UINT32_MAX;
    for (size_t i = 0; fns_ok && i < cfg->nfns; i++) fns_ok = cfg->fns[i] != NULL;
    if (weft__mpi_check_comm(comm, &why) != WEFT_OK || !fns_ok) {
        weft__mpi_set_create_error("weft_mpi_pool_create: %s", why ? why : "cfg must name one function at least, none NULL");
        goto fail;
    }
    st = WEFT_ENOMEM;
    if (!(p = weft_mem_calloc(sizeof *p)) || !(p->fns = weft_mem_alloc(cfg->nfns * sizeof *p->fns))) {
        weft__mpi_set_create_error("weft_mpi_pool_create: out of memory");
        goto fail;
    }
    memcpy(p->fns, cfg->fns, cfg->nfns * sizeof *p->fns);
    p->nfns = (uint32_t)cfg->nfns; /* from here on, fns is freed by its length */
    p->batch_max = cfg->batch_max == 0 || cfg->batch_max > DEFAULT_BATCH_MAX ? DEFAULT_BATCH_MAX : (uint32_t)cfg->batch_max;
    p->no_steal = cfg->no_steal;
    p->arg = cfg->arg;
    st = WEFT_ESYS;
    if (MPI_Comm_dup(comm, &p->comm) != MPI_SUCCESS) { /* collective */
        weft__mpi_set_create_error("weft_mpi_pool_create: MPI_Comm_dup failed");
        goto fail;
    }
    MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(p->comm, &p->rank);
    MPI_Comm_size(p->comm, &p->size);
    if (!(p->exhausted = weft_mem_calloc((size_t)p->size * sizeof *p->exhausted))) {
        MPI_Comm_free(&p->comm);
        st = WEFT_ENOMEM;
        weft__mpi_set_create_error("weft_mpi_pool_create: out of memory");
        goto fail;
    }
    if (err) *err = WEFT_OK;
    return p;
fail:
    if (p) weft_mem_free(p->fns, (size_t)p->nfns * sizeof *p->fns);
    weft_mem_free(p, sizeof *p);
    if (err) *err = st;
    return NULL;
}

weft_status weft_mpi_pool_destroy(weft_mpi_pool *p) {
    if (!p) return WEFT_OK;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&p->comm);
    weft_mem_free(p->fns, (size_t)p->nfns * sizeof *p->fns);
    weft_mem_free(p->tasks, (size_t)p->captasks * sizeof *p->tasks);
    weft_mem_free(p->arena, (size_t)p->arena_cap * ALIGN);
    weft_mem_free(p->exhausted, (size_t)p->size * sizeof *p->exhausted);
    weft_mem_free(p->reqs, (size_t)p->capreq * sizeof *p->reqs);
    weft_mem_free(p, sizeof *p);
    return WEFT_OK;
}

weft_status weft_mpi_pool_submit(weft_mpi_pool *p, weft_mpi_pool_fn fn, const void *in, size_t in_size, void *out,
                                 size_t out_size) {
    if (!p || !fn || (in_size && !in) || (out_size && !out) || in_size > POOL_IO_MAX ||
        out_size > POOL_IO_MAX - in_size)
        return WEFT_EINVAL;
    uint32_t k = 0;
    while (k < p->nfns && p->fns[k] != fn) k++;
    if (k == p->nfns) return WEFT_EINVAL;
    uint32_t units = (uint32_t)(pad16(in_size) / ALIGN);
    if (p->ntasks >= UINT32_MAX - 1 || p->arena_len > UINT32_MAX - units ||
        weft__mpi_reserve((void **)&p->tasks, &p->captasks, p->ntasks + 1, sizeof *p->tasks) ||
        weft__mpi_reserve((void **)&p->arena, &p->arena_cap, p->arena_len + units, ALIGN))
        return WEFT_ENOMEM;
    p->tasks[p->ntasks++] = (pool_task){ .fn = k, .in_size = (uint32_t)in_size, .out_size = (uint32_t)out_size,
                                         .in_off = (size_t)p->arena_len * ALIGN, .out = out };
    if (in_size) memcpy(p->arena + (size_t)p->arena_len * ALIGN, in, in_size);
    p->arena_len += units;
    return WEFT_OK;
}

static void start(weft_mpi_pool *p, weft_executor *ex) {
    p->ex = ex;
    p->nworkers = weft_executor_workers(ex) ? weft_executor_workers(ex) : 1;
    atomic_store_explicit(&p->claim, CLAIM(0, p->ntasks), memory_order_relaxed);
    atomic_store_explicit(&p->runners, 0, memory_order_relaxed);
    atomic_store_explicit(&p->tasks_run, 0, memory_order_relaxed);
    atomic_store_explicit(&p->done, NULL, memory_order_relaxed);
    atomic_store_explicit(&p->failed, 0, memory_order_relaxed);
    p->fail[0] = '\0';
    p->own_spawn_left = p->ntasks < p->nworkers ? p->ntasks : p->nworkers;
    p->active = NULL;
    p->given = p->returned = 0;
    p->req_out = false;
    p->victim = (p->rank + 1) % p->size;
    memset(p->exhausted, 0, (size_t)p->size * sizeof *p->exhausted);
    p->nexhausted = 0;
    uint64_t runs = p->stats.runs;
    p->stats = (weft_mpi_pool_figures){ .runs = runs, .tasks_submitted = p->ntasks };
}

weft_status weft_mpi_pool_run(weft_executor *ex, weft_mpi_pool *p) {
    if (!p) return WEFT_EINVAL;
    p->errmsg[0] = '\0';
    if (!ex && !(ex = weft_default_executor())) return WEFT_ENOMEM;
    int st = weft__mpi_check_caller(ex, "weft_mpi_pool_run", p->errmsg, sizeof p->errmsg);
    if (st != WEFT_OK) return (weft_status)st;
    /* The ranks agree on the functions' table (its length: MIN of it and of
     * its complement gives both extremes). */
    unsigned in[2] = { p->nfns, ~p->nfns }, out[2];
    if (weft__mpi_allreduce_min(p->comm, in, out, 2, MPI_UNSIGNED, &p->signal) != WEFT_OK) return WEFT_ESYS;
    if (out[0] != ~out[1]) {
        snprintf(p->errmsg, sizeof p->errmsg,
                 "weft_mpi_pool_run: the ranks' pools name different numbers of functions (%u to %u; this rank, "
                 "%d: %u)", out[0], ~out[1], p->rank, p->nfns);
        return WEFT_EINVAL;
    }
    start(p, ex);
    int err = progress(p);
    p->stats.tasks_run = atomic_load_explicit(&p->tasks_run, memory_order_relaxed);
    p->stats.runs++;
    int failed = atomic_load_explicit(&p->failed, memory_order_relaxed) && err == WEFT_OK;
    st = weft__mpi_agree_outcome(p->comm, p->rank, failed ? p->fail : NULL, err, p->errmsg, sizeof p->errmsg,
                                 &p->signal);
    if (st == WEFT_ESYS) snprintf(p->errmsg, sizeof p->errmsg, "weft_mpi_pool_run: an MPI call failed on some rank");
    p->ntasks = 0;
    p->arena_len = 0;
    return (weft_status)st;
}

const char *weft_mpi_pool_error_message(const weft_mpi_pool *p) { return p ? p->errmsg : ""; }

weft_status weft_mpi_pool_stats(const weft_mpi_pool *p, weft_mpi_pool_figures *out) {
    if (!p || !out) return WEFT_EINVAL;
    *out = p->stats;
    return WEFT_OK;
}
