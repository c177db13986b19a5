/* Scheduling, in one small program:
 *   1. priorities and a handle on the default (work-stealing) executor: a
 *      CRITICAL task overtakes queued LOW ones, a queued task is re-prioritised
 *      and another removed;
 *   2. a user policy, earliest deadline first: each priority level is a
 *      relative deadline, and the worker always takes the job due soonest.
 * Build: part of the examples (make examples); run: ./sched_edf */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <weft.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the user policy: a binary heap of (deadline, item) under a mutex ---- */

typedef struct edf_entry {
    uint64_t deadline;
    weft_sched_item *item;
} edf_entry;

typedef struct edf {
    pthread_mutex_t lock;
    edf_entry *heap;
    size_t n, cap;
} edf;

/* Relative deadline of each level, LOW .. CRITICAL. */
static const uint64_t budget_ns[4] = {50000000, 10000000, 2000000, 100000};

static int edf_push(void *state, weft_sched_item *item, weft_priority p, int worker) {
    (void)worker;
    edf *q = state;
    edf_entry e = {now_ns() + budget_ns[p + 1], item};
    pthread_mutex_lock(&q->lock);
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        edf_entry *h = realloc(q->heap, cap * sizeof *h);
        if (!h) {
            pthread_mutex_unlock(&q->lock);
            return -1; /* weft runs the job on the caller's deque instead */
        }
        q->heap = h, q->cap = cap;
    }
    size_t i = q->n++;
    for (; i > 0 && q->heap[(i - 1) / 2].deadline > e.deadline; i = (i - 1) / 2) q->heap[i] = q->heap[(i - 1) / 2];
    q->heap[i] = e;
    pthread_mutex_unlock(&q->lock);
    return 0;
}

static weft_sched_item *edf_pop(void *state, int worker) {
    (void)worker;
    edf *q = state;
    pthread_mutex_lock(&q->lock);
    weft_sched_item *top = NULL;
    if (q->n) {
        top = q->heap[0].item;
        edf_entry last = q->heap[--q->n];
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= q->n) break;
            if (c + 1 < q->n && q->heap[c + 1].deadline < q->heap[c].deadline) c++;
            if (q->heap[c].deadline >= last.deadline) break;
            q->heap[i] = q->heap[c];
            i = c;
        }
        if (q->n) q->heap[i] = last;
    }
    pthread_mutex_unlock(&q->lock);
    return top;
}

static void edf_destroy(void *state) {
    edf *q = state;
    free(q->heap);
    pthread_mutex_destroy(&q->lock);
}

/* ---- tasks ---- */

typedef struct job {
    const char *name;
} job;

static int record(weft_ctx *cx, void *arg) {
    (void)cx;
    job *j = arg;
    printf("  ran %s\n", j->name);
    return 0;
}

/* Holds the only worker until main opens the gate, so every job below is
 * still queued when we look at (and change) the queue.  A timed hold would not
 * do: on a loaded machine main may take longer than the hold to queue.  The
 * gate is 0 while main waits for the hold to start, 1 while it holds, 2 once
 * main opens it. */
static int hold(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_int *gate = arg;
    int closed = 0;
    (void)atomic_compare_exchange_strong(gate, &closed, 1);
    while (atomic_load_explicit(gate, memory_order_acquire) != 2) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void wait_held(atomic_int *gate) {
    while (atomic_load(gate) == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
}

/* Opens the gate and destroys the executor (which waits for its tasks: the
 * jobs point into main's frame), then says why we stopped. */
static int fail(weft_executor *ex, atomic_int *gate, const char *what, weft_status st) {
    fprintf(stderr, "sched_edf: %s: %s\n", what, weft_strerror(st));
    atomic_store(gate, 2);
    weft_executor_destroy(ex);
    return 1;
}

static void queue(weft_executor *ex, job *j, weft_priority p, weft_sched_handle *h) {
    weft_status st = weft_async_with(ex, record, j, &(weft_async_options){.priority = p, .handle = h}, NULL);
    if (st != WEFT_OK) printf("weft_async_with: %s\n", weft_strerror(st));
}

int main(void) {
    weft_status st;
    /* 1. One worker, held busy while we queue, so the order shows. */
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &st);
    if (!ex) return 1;
    atomic_int gate = 0;
    if ((st = weft_silent_async(ex, hold, &gate)) != WEFT_OK) return fail(ex, &gate, "weft_silent_async", st);
    wait_held(&gate); /* a NORMAL job with a handle would go before the hold (weft/sched.h) */
    job jobs[] = {{"low-1"}, {"low-2"}, {"normal (re-prioritised to high)"}, {"low (removed)"}, {"critical"}};
    weft_sched_handle h[5];
    queue(ex, &jobs[0], WEFT_PRIORITY_LOW, &h[0]);
    queue(ex, &jobs[1], WEFT_PRIORITY_LOW, &h[1]);
    queue(ex, &jobs[2], WEFT_PRIORITY_NORMAL, &h[2]);
    queue(ex, &jobs[3], WEFT_PRIORITY_LOW, &h[3]);
    queue(ex, &jobs[4], WEFT_PRIORITY_CRITICAL, &h[4]);
    if ((st = weft_sched_reprioritize(ex, h[2], WEFT_PRIORITY_HIGH)) != WEFT_OK)
        return fail(ex, &gate, "weft_sched_reprioritize", st);
    if ((st = weft_sched_remove(ex, h[3])) != WEFT_OK) return fail(ex, &gate, "weft_sched_remove", st);
    weft_sched_entry snap[8];
    size_t n = 0;
    if ((st = weft_sched_snapshot(ex, snap, 8, &n)) != WEFT_OK) return fail(ex, &gate, "weft_sched_snapshot", st);
    printf("work stealing + priorities: %zu queued, will run as:", n);
    for (size_t i = 0; i < n && i < 8; i++) printf(" %s", weft_priority_name(snap[i].priority));
    printf("\n");
    atomic_store(&gate, 2);
    (void)weft_executor_wait_all(ex);
    printf("  removed handle now: %s\n", weft_errname(weft_sched_remove(ex, h[3])));
    weft_executor_destroy(ex);

    /* 2. The same jobs under earliest-deadline-first. */
    edf q = {0};
    pthread_mutex_init(&q.lock, NULL);
    weft_sched_policy policy = {.state = &q, .push = edf_push, .pop = edf_pop, .destroy = edf_destroy};
    weft_sched_config sc = {.kind = WEFT_SCHED_CUSTOM, .policy = &policy};
    ex = weft_executor_create(&(weft_executor_config){.workers = 1, .sched = &sc}, &st);
    if (!ex) return 1;
    atomic_store(&gate, 0);
    if ((st = weft_silent_async(ex, hold, &gate)) != WEFT_OK) return fail(ex, &gate, "weft_silent_async", st);
    wait_held(&gate);
    printf("earliest deadline first (deadline = submission + 50/10/2/0.1 ms by level):\n");
    static job edf_jobs[] = {{"low (due in 50 ms)"}, {"normal (due in 10 ms)"}, {"high (due in 2 ms)"},
                             {"critical (due in 0.1 ms)"}};
    for (int i = 0; i < 4; i++)
        if ((st = weft_async_with(ex, record, &edf_jobs[i],
                                  &(weft_async_options){.priority = (weft_priority)(i - 1)}, NULL)) != WEFT_OK)
            return fail(ex, &gate, "weft_async_with", st);
    atomic_store(&gate, 2);
    (void)weft_executor_wait_all(ex);
    weft_sched_stats stats;
    if (weft_sched_get_stats(ex, &stats) == WEFT_OK)
        printf("  policy errors detected: %llu\n", (unsigned long long)stats.policy_errors);
    weft_executor_destroy(ex);
    return 0;
}
