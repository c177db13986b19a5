/* Distributed flows: one run.  The calling thread is the progress engine (the
 * only thread of weft that calls MPI: MPI_THREAD_FUNNELED suffices); workers
 * run the compute nodes as silent async tasks and hand the send and receive
 * nodes they make ready to it through a lock-free stack.  A worker never
 * calls MPI, so it never blocks in it.  Between rounds with nothing to do the
 * progress thread sleeps (see "Sleeping").  docs/guide-mpi.md, "How it works". */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mpi/dist.h"
#include "platform/platform.h"  /* weft__cpu_relax: a macro, nothing linked */
#include "platform/wait_inline.h" /* header-only: libweft.so hides weft__futex_* */
#include "weft/async.h"

/* ---- sleeping ------------------------------------------------------------------
 * The progress thread sleeps on f->signal when a round found nothing to do.
 * Two things need it: a node handed over by a worker (it posts the message),
 * and a request completing inside MPI, which it only learns by asking.  The
 * first wakes it: queue_push, after its push, sees `sleeping` (Dekker: each
 * side stores, then a seq_cst fence, then loads the other's flag, so at least
 * one of them sees the other) and bumps the signal word.  The second cannot:
 * with requests in flight it polls, yielding the CPU between polls, for
 * WEFT__MPI_POLL_S after the last event (a large message's rendezvous needs
 * both sides to answer at once), then naps for growing times.  The end of the
 * run is bit 0 of the same word, set by whoever finishes the last node; a
 * worker then wakes it, after the store, with a call that does not touch the
 * flow (the thread may return and the flow be freed at once).
 * Measured on the 2-core dev VM (docs/guide-mpi.md, "Progress"): a 1 ms window
 * lost ~50% on an 8x8-tile Cholesky against 5 ms; naps alone (no window), 60%. */
enum {
    PROGRESS_NAP_MIN_NS = 20000,   /* then nap this long; doubles */
    PROGRESS_NAP_MAX_NS = 1000000, /* up to this while nothing completes */
    PROGRESS_IDLE_NS = 20000000,   /* no request in flight: wake-ups come; a bound anyway */
};

uint64_t weft__mpi_nap_ns(unsigned naps) {
    return naps >= 6 ? PROGRESS_NAP_MAX_NS : (uint64_t)PROGRESS_NAP_MIN_NS << naps;
}

static void wake_progress(weft_mpi_flow *f) {
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&f->sleeping, memory_order_relaxed) ||
        !atomic_exchange_explicit(&f->sleeping, 0, memory_order_relaxed))
        return;
    atomic_fetch_add_explicit(&f->signal, 2, memory_order_release);
    weft__word_wake(&f->signal);
}

/* ---- the progress queue ------------------------------------------------------- */

/* Any thread: hands n to the progress thread.  The release pairs with the
 * acquire exchange in take_queue, publishing n->qnext. */
static void queue_push(weft_mpi_flow *f, weft__mpi_node *n) {
    weft__mpi_node *head = atomic_load_explicit(&f->queue, memory_order_relaxed);
    do n->qnext = head;
    while (!atomic_compare_exchange_weak_explicit(&f->queue, &head, n, memory_order_release,
                                                  memory_order_relaxed));
    wake_progress(f);
}

static weft__mpi_node *take_queue(weft_mpi_flow *f) {
    return atomic_exchange_explicit(&f->queue, NULL, memory_order_acquire);
}

/* ---- nodes -------------------------------------------------------------------- */

static int run_compute(weft_ctx *cx, void *arg);

/* A compute node is ready: to a worker (any thread).  Without memory for the
 * async record, the progress thread tries again later. */
static void submit(weft_mpi_flow *f, weft__mpi_node *n) {
    if (weft_silent_async(f->ex, run_compute, n) != WEFT_OK) queue_push(f, n);
}

/* n is done: its successors lose a predecessor; those that reach zero are
 * started.  On a worker (`next` not NULL) the first ready compute successor is
 * returned in *next to run on the same worker at once.  The count of done
 * nodes goes up last, and whoever finishes the last node sets the end bit:
 * the progress thread may end the run as soon as it sees that bit (the
 * release pairs with its acquire load), so nothing of the flow is touched
 * after it (the wake-up only names the word's address). */
static void finish(weft_mpi_flow *f, weft__mpi_node *n, weft__mpi_node **next) {
    weft__mpi_node **succ = f->succ + n->succ_first;
    for (uint32_t i = 0; i < n->nsucc; i++) {
        weft__mpi_node *s = succ[i];
        if (atomic_fetch_sub_explicit(&s->pending, 1, memory_order_acq_rel) != 1) continue;
        if (s->kind != WEFT__MPI_COMPUTE) queue_push(f, s);
        else if (next && !*next) *next = s;
        else submit(f, s);
    }
    uint32_t total = f->nnodes;
    _Atomic uint32_t *signal = &f->signal;
    if (atomic_fetch_add_explicit(&f->done, 1, memory_order_acq_rel) + 1 != total) return;
    atomic_fetch_or_explicit(signal, 1, memory_order_release);
    if (next) weft__word_wake(signal); /* a worker: the progress thread may sleep */
}

static void record_failure(weft_mpi_flow *f, const weft__mpi_node *n, int code) {
    /* The first failure wins; its fields are read after the run (the done
     * count's release/acquire orders them). */
    if (atomic_exchange_explicit(&f->failed, 1, memory_order_relaxed) == 0) {
        f->fail_code = code;
        f->fail_task = n->ref;
    }
}

/* A compute node, and the chain of ready successors it hands on. */
static int run_compute(weft_ctx *cx, void *arg) {
    weft__mpi_node *n = arg;
    weft_mpi_flow *f = n->flow;
    while (n) {
        const weft__mpi_task *t = &f->tasks[n->ref];
        /* After a failure the rank's remaining tasks are skipped, but their
         * nodes still finish: the messages they order still flow, so every
         * rank reaches the end of the run. */
        if (!atomic_load_explicit(&f->failed, memory_order_relaxed)) {
            int rc = t->fn(cx, f->bufs + t->first_acc, t->arg);
            atomic_fetch_add_explicit(&f->tasks_run, 1, memory_order_relaxed);
            if (rc != 0) record_failure(f, n, rc);
        }
        weft__mpi_node *next = NULL;
        finish(f, n, &next);
        n = next;
    }
    return 0;
}

/* ---- MPI requests (progress thread only) ----------------------------------------- */

static int post(weft_mpi_flow *f, weft__mpi_node *n) {
    weft__mpi_handle *h = &f->handles[n->ref];
    MPI_Request *r = &f->reqs[f->nreq];
    int rc = n->kind == WEFT__MPI_SEND
                 ? MPI_Isend(h->buf, h->size, MPI_BYTE, n->peer, n->tag, f->comm, r)
                 : MPI_Irecv(h->buf, h->size, MPI_BYTE, n->peer, n->tag, f->comm, r);
    if (rc != MPI_SUCCESS) return WEFT_ESYS;
    f->req_node[f->nreq++] = n;
    if (n->kind == WEFT__MPI_SEND) {
        f->stats.messages_sent++;
        f->stats.bytes_sent += (uint64_t)h->size;
    } else {
        f->stats.messages_received++;
        f->stats.bytes_received += (uint64_t)h->size;
    }
    return WEFT_OK;
}

/* Completes the requests that are done; returns how many, or WEFT_ESYS. */
static int test_requests(weft_mpi_flow *f) {
    if (f->nreq == 0) return 0;
    int outcount = 0;
    if (MPI_Testsome(f->nreq, f->reqs, &outcount, f->req_done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return WEFT_ESYS;
    if (outcount == MPI_UNDEFINED || outcount == 0) return 0;
    for (int i = 0; i < outcount; i++) finish(f, f->req_node[f->req_done[i]], NULL);
    /* Compact: completed requests were set to MPI_REQUEST_NULL. */
    int k = 0;
    for (int i = 0; i < f->nreq; i++) {
        if (f->reqs[i] == MPI_REQUEST_NULL) continue;
        f->reqs[k] = f->reqs[i];
        f->req_node[k++] = f->req_node[i];
    }
    f->nreq = k;
    return outcount;
}

/* After an MPI error: the requests in flight are dropped and their nodes
 * finished, so that the run drains (its result is lost: WEFT_ESYS). */
static void abandon_requests(weft_mpi_flow *f) {
    for (int i = 0; i < f->nreq; i++) {
        MPI_Cancel(&f->reqs[i]);
        MPI_Request_free(&f->reqs[i]);
        finish(f, f->req_node[i], NULL);
    }
    f->nreq = 0;
}

/* Posts or resubmits what the workers handed over; returns how many.  Once
 * MPI has failed (*err set), send and receive nodes finish unposted. */
static int drain_queue(weft_mpi_flow *f, int *err) {
    int count = 0;
    for (weft__mpi_node *n = take_queue(f), *next; n; n = next, count++) {
        next = n->qnext;
        if (n->kind == WEFT__MPI_COMPUTE) {
            submit(f, n);
        } else if (*err || post(f, n) != WEFT_OK) {
            *err = WEFT_ESYS;
            finish(f, n, NULL);
        }
    }
    return count;
}

/* The progress thread's idle state: when something last happened, and how
 * many naps in a row found nothing. */
typedef struct idle_state {
    double since; /* MPI_Wtime of the last round that did something; < 0: none yet */
    unsigned naps;
} idle_state;

/* One idle round ("Sleeping" above).  With requests in flight: poll, giving
 * the CPU away between polls, for WEFT__MPI_POLL_S after the last event (a
 * message's rendezvous needs both sides to answer quickly), then nap, longer
 * each time.  Without: sleep until a worker wakes it. */
static void idle_round(weft_mpi_flow *f, idle_state *is) {
    uint64_t ns = PROGRESS_IDLE_NS;
    if (f->nreq > 0) {
        double now = MPI_Wtime();
        if (is->since < 0) is->since = now;
        if (now - is->since < WEFT__MPI_POLL_S) {
            weft__yield_now();
            return;
        }
        ns = weft__mpi_nap_ns(is->naps++);
    }
    uint32_t seen = atomic_load_explicit(&f->signal, memory_order_acquire);
    atomic_store_explicit(&f->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!(seen & 1) && !atomic_load_explicit(&f->queue, memory_order_relaxed))
        (void)weft__word_wait(&f->signal, seen, ns);
    atomic_store_explicit(&f->sleeping, 0, memory_order_relaxed);
}

/* Drives the run until every local node is done (the end bit). */
static int progress(weft_mpi_flow *f) {
    int err = WEFT_OK;
    idle_state is = { .since = -1 };
    while (!(atomic_load_explicit(&f->signal, memory_order_acquire) & 1)) {
        int did = drain_queue(f, &err);
        int t = err ? 0 : test_requests(f);
        if (t < 0) {
            err = WEFT_ESYS;
            abandon_requests(f);
            t = 0;
        }
        if (did + t > 0) {
            is = (idle_state){ .since = -1 };
            continue;
        }
        idle_round(f, &is);
    }
    return err;
}

/* ---- a run ------------------------------------------------------------------------ */

/* Completes r, a collective: the other ranks may arrive late (the end of a
 * run waits for the slowest rank), so it is waited for as the progress loop
 * waits, not in a blocking MPI call (Open MPI's spin at full speed, unless
 * told to yield, on every rank that is early).  0 or WEFT_ESYS. */
int weft__mpi_wait(MPI_Request *r, _Atomic uint32_t *word) {
    double since = MPI_Wtime();
    for (unsigned naps = 0;;) {
        int flag = 0;
        if (MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) return WEFT_ESYS;
        if (flag) return WEFT_OK;
        if (MPI_Wtime() - since < WEFT__MPI_POLL_S) {
            weft__yield_now();
            continue;
        }
        /* Nothing wakes this wait (the word rests): a timed sleep. */
        (void)weft__word_wait(word, atomic_load_explicit(word, memory_order_relaxed), weft__mpi_nap_ns(naps++));
    }
}

int weft__mpi_allreduce_min(MPI_Comm comm, const void *in, void *out, int n, MPI_Datatype type,
                            _Atomic uint32_t *word) {
    MPI_Request r;
    if (MPI_Iallreduce(in, out, n, type, MPI_MIN, comm, &r) != MPI_SUCCESS) return WEFT_ESYS;
    return weft__mpi_wait(&r, word);
}

static int allreduce(weft_mpi_flow *f, const void *in, void *out, int n, MPI_Datatype type) {
    return weft__mpi_allreduce_min(f->comm, in, out, n, type, &f->signal);
}

/* The ranks compare their graphs (and whether each could prepare its run):
 * one MPI_Iallreduce of the fingerprints, their complements (MIN of both gives
 * both the smallest and the largest) and a readiness bit. */
static int agree(weft_mpi_flow *f, int local) {
    unsigned long long in[5] = { f->fingerprint, ~f->fingerprint, f->ntasks, ~f->ntasks, local == WEFT_OK };
    unsigned long long out[5];
    if (allreduce(f, in, out, 5, MPI_UNSIGNED_LONG_LONG) != WEFT_OK) return WEFT_ESYS;
    if (out[0] != ~out[1] || out[2] != ~out[3]) {
        /* The same text on every rank (mpi.h): only what the reduction gave. */
        snprintf(f->errmsg, sizeof f->errmsg,
                 "weft_mpi_run: the ranks built different graphs (from %llu to %llu tasks, or the same count "
                 "with different tasks): every rank must make the same calls in the same order",
                 out[2], ~out[3]);
        return WEFT_EINVAL;
    }
    if (!out[4]) {
        snprintf(f->errmsg, sizeof f->errmsg, "weft_mpi_run: a rank ran out of memory preparing the run");
        return WEFT_ENOMEM;
    }
    return WEFT_OK;
}

/* Every rank learns the lowest-numbered rank with a failure, and its message,
 * and whether MPI failed anywhere: one MPI_Iallreduce (MIN of the failed rank
 * and of an all-well bit) and, after a failure, one MPI_Bcast from that rank. */
int weft__mpi_agree_outcome(MPI_Comm comm, int rank, const char *fail, int local_err, char *errmsg,
                            size_t cap, _Atomic uint32_t *word) {
    int in[2] = { fail ? rank : INT_MAX, local_err == WEFT_OK }, out[2];
    if (weft__mpi_allreduce_min(comm, in, out, 2, MPI_INT, word) != WEFT_OK) return WEFT_ESYS;
    if (out[0] != INT_MAX) {
        char msg[256] = { 0 };
        if (out[0] == rank) snprintf(msg, sizeof msg, "%s", fail);
        if (MPI_Bcast(msg, (int)sizeof msg, MPI_BYTE, out[0], comm) != MPI_SUCCESS) return WEFT_ESYS;
        msg[sizeof msg - 1] = '\0';
        snprintf(errmsg, cap, "%s", msg);
        return WEFT_ETASK;
    }
    return out[1] ? WEFT_OK : WEFT_ESYS;
}

/* The flow's outcome: a failed task is named by its name, or its position. */
static int agree_outcome(weft_mpi_flow *f, int local_err) {
    char fail[200];
    if (atomic_load_explicit(&f->failed, memory_order_relaxed)) {
        const weft__mpi_task *t = &f->tasks[f->fail_task];
        char idx[32];
        snprintf(idx, sizeof idx, "#%llu", (unsigned long long)t->global_index);
        /* "" names no task: its position does ("task '' failed" did not). */
        snprintf(fail, sizeof fail, "task '%.127s' failed on rank %d with code %d", t->name && *t->name ? t->name : idx, f->rank,
                 f->fail_code);
    }
    int st = weft__mpi_agree_outcome(f->comm, f->rank, atomic_load_explicit(&f->failed, memory_order_relaxed) ? fail : NULL,
                                     local_err, f->errmsg, sizeof f->errmsg, &f->signal);
    if (st == WEFT_ESYS)
        snprintf(f->errmsg, sizeof f->errmsg, "weft_mpi_run: an MPI call failed on some rank");
    return st;
}

static void start(weft_mpi_flow *f, weft_executor *ex) {
    f->ex = ex;
    atomic_store_explicit(&f->queue, NULL, memory_order_relaxed);
    atomic_store_explicit(&f->done, 0, memory_order_relaxed);
    atomic_store_explicit(&f->signal, f->nnodes == 0, memory_order_relaxed);
    atomic_store_explicit(&f->sleeping, 0, memory_order_relaxed);
    atomic_store_explicit(&f->failed, 0, memory_order_relaxed);
    atomic_store_explicit(&f->tasks_run, 0, memory_order_relaxed);
    uint64_t runs = f->stats.runs;
    f->stats = (weft_mpi_stats){ .runs = runs };
    f->nreq = 0;
    for (uint32_t i = 0; i < f->nnodes; i++)
        atomic_store_explicit(&f->nodes[i].pending, f->nodes[i].npred, memory_order_relaxed);
    /* Receives first: posted before any data can be sent to this rank. */
    for (uint32_t i = 0; i < f->nnodes; i++)
        if (f->nodes[i].npred == 0 && f->nodes[i].kind == WEFT__MPI_RECV) queue_push(f, &f->nodes[i]);
    for (uint32_t i = 0; i < f->nnodes; i++) {
        weft__mpi_node *n = &f->nodes[i];
        if (n->npred != 0 || n->kind == WEFT__MPI_RECV) continue;
        if (n->kind == WEFT__MPI_SEND) queue_push(f, n);
        else submit(f, n);
    }
}

int weft__mpi_check_caller(weft_executor *ex, const char *fn, char *errmsg, size_t cap) {
    /* A worker first: at MPI_THREAD_FUNNELED a worker is never MPI's main
     * thread either, and the thread check would hide the status mpi.h
     * documents for this mistake (WEFT_EDEADLK) behind WEFT_EINVAL. */
    if (weft_executor_worker_id(ex) >= 0) {
        snprintf(errmsg, cap, "%s: called from a worker of its executor (the caller drives MPI and would block it)",
                 fn);
        return WEFT_EDEADLK;
    }
    const char *why = NULL;
    if (weft__mpi_check_thread(&why) != WEFT_OK) {
        snprintf(errmsg, cap, "%s: %s", fn, why);
        return WEFT_EINVAL;
    }
    return WEFT_OK;
}

weft_status weft_mpi_run(weft_executor *ex, weft_mpi_flow *f) {
    if (!f) return WEFT_EINVAL;
    f->errmsg[0] = '\0';
    if (!ex && !(ex = weft_default_executor())) return WEFT_ENOMEM;
    int st = weft__mpi_check_caller(ex, "weft_mpi_run", f->errmsg, sizeof f->errmsg);
    if (st != WEFT_OK) return (weft_status)st;
    int local = f->sealed ? WEFT_OK : weft__mpi_seal(f);
    if ((st = agree(f, local)) != WEFT_OK) return (weft_status)st;
    start(f, ex);
    int err = progress(f);
    f->stats.tasks_run = atomic_load_explicit(&f->tasks_run, memory_order_relaxed);
    f->stats.runs++;
    return (weft_status)agree_outcome(f, err);
}
