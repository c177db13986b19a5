/* The state dump: what every worker is doing, read without any lock.
 *
 * Everything here is a relaxed atomic load of a field that lives as long as the
 * executor; the text goes through a buffer on the stack and write(2).  So it
 * neither blocks on a lock a stuck worker might hold nor allocates, and it can be
 * called from gdb (`call weft_executor_dump_fd(ex, 2)`) or a signal handler.  The
 * one thing it follows is the task a worker is running (when metrics are on): the
 * task and its run are alive while the worker is inside it, which is what a hang
 * looks like, but on a busy executor the run can finish between our loads; the
 * values are then stale, and a taskflow destroyed meanwhile may even have
 * given its node chunks back to the system (a fault: observe.h says so).
 * Making that safe needs either a hazard the run and taskflow frees check
 * (a load per run end) or a fault-proof read of another thread's memory
 * (a syscall per field); neither was taken (session 39). */
#include "observe/obs.h"
#include "graph/graph.h"
#include "core/error_detail.h"

#include <stdarg.h>
#include <string.h>

struct sink {
    int fd;
    weft_status st;
    char buf[1024];
    size_t len;
};

static void flush_sink(struct sink *s) {
    if (s->len && weft__write_fd(s->fd, s->buf, s->len) != 0) s->st = WEFT_ESYS;
    s->len = 0;
}

__attribute__((format(printf, 2, 3))) static void put(struct sink *s, const char *fmt, ...) {
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    /* Every format ends its line: a cut one keeps its newline, or the next
     * worker's line was glued to it. */
    if ((size_t)n >= sizeof line) line[len - 1] = '\n';
    if (s->len + len > sizeof s->buf) flush_sink(s);
    memcpy(s->buf + s->len, line, len);
    s->len += len;
}

static const char *state_name(int st) {
    switch (st) {
    case WEFT__WSTATE_RUNNING: return "running";
    case WEFT__WSTATE_PARKED: return "parked";
    default: return "searching";
    }
}

/* The innermost task the worker runs, if metrics are on and it runs one. */
static void put_current_task(struct sink *s, const struct weft__obs *o, unsigned i) {
    if (!o) return;
    weft__obs_worker *ow = (weft__obs_worker *)&o->w[i];
    unsigned d = atomic_load_explicit(&ow->depth, memory_order_relaxed);
    if (d == 0 || d > WEFT__OBS_DEPTH) return;
    const weft__node *n = atomic_load_explicit(&ow->frame[d - 1].node, memory_order_relaxed);
    const weft__run *r = atomic_load_explicit(&ow->frame[d - 1].run, memory_order_relaxed);
    if (!n) { /* other work: its kind (a span of that kind says how it is named) */
        if (atomic_load_explicit(&ow->frame[d - 1].work, memory_order_relaxed) == WEFT__WORK_RECORDING) {
            put(s, "    GPU recording (depth %u)\n", d); /* a GPU task's fn (gpu/task.c) */
            return;
        }
        weft__span k = { .kind = (uint8_t)(WEFT__SPAN_WORK + atomic_load_explicit(&ow->frame[d - 1].work,
                                                                                   memory_order_relaxed)) };
        char buf[24];
        put(s, "    %s (depth %u)\n", weft__span_label(o, i, &k, buf, sizeof buf), d);
        return;
    }
    if (!r) return;
    char buf[24], name[96];
    /* The name on one line, and short: a newline in it split the task's line
     * (a reader takes a line per worker and per task), and a long one cut the
     * line before its end. */
    const char *label = weft__node_label(n, buf, sizeof buf);
    size_t k = 0;
    for (; label[k] && k < sizeof name - 1; k++)
        name[k] = (unsigned char)label[k] < 0x20 || label[k] == 0x7f ? '?' : label[k];
    name[k] = '\0';
    if (label[k]) { /* cut: "..." at a UTF-8 character boundary (the dump stays valid UTF-8) */
        size_t c = sizeof name - 4;
        while (c > 0 && ((unsigned char)label[c] & 0xC0) == 0x80) c--;
        memcpy(name + c, "...", 4);
    }
    put(s, "    task '%s' (depth %u) of run %llu, %lld task(s) of that run pending\n",
        name, d, (unsigned long long)r->top->id,
        (long long)atomic_load_explicit((_Atomic int64_t *)&r->pending, memory_order_relaxed));
}

static void put_worker(struct sink *s, const weft_executor *ex, unsigned i) {
    weft__worker *w = &ex->workers[i];
    int64_t top = atomic_load_explicit(&w->deque.top, memory_order_relaxed);
    int64_t bottom = atomic_load_explicit(&w->deque.bottom, memory_order_relaxed);
    put(s, "  worker %u: %s, deque %lld job(s), steals %llu, failed steals %llu, parks %llu\n", i,
        state_name(atomic_load_explicit(&w->stats.state, memory_order_relaxed)),
        (long long)(bottom > top ? bottom - top : 0),
        (unsigned long long)weft__stat_read(&w->stats.steals), (unsigned long long)weft__stat_read(&w->stats.steal_fails),
        (unsigned long long)weft__stat_read(&w->stats.parks));
    put_current_task(s, weft__obs_state_get(ex), i);
}

weft_status weft_executor_dump_fd(const weft_executor *ex, int fd) {
    if (!ex || fd < 0) return weft__fail(__func__, WEFT_EINVAL, "invalid argument (!ex || fd < 0)");
    struct sink s = { .fd = fd, .st = WEFT_OK };
    weft_executor *e = (weft_executor *)ex;
    uint64_t sl = atomic_load_explicit(&e->sleep.state, memory_order_relaxed);
    put(&s, "weft executor %p: %u workers%s\n", (const void *)ex, ex->nworkers,
        atomic_load_explicit(&e->shutdown, memory_order_relaxed) ? ", shutting down" : "");
    put(&s, "  runs in flight %llu (waiters %u), runs submitted %llu\n",
        (unsigned long long)weft__runs_in_flight(ex),
        atomic_load_explicit(&e->quiet_waiters, memory_order_relaxed),
        (unsigned long long)atomic_load_explicit(&e->next_run_id, memory_order_relaxed));
    put(&s, "  sleep: %u searching, %u idle, %u wake tokens, epoch %u; injector %s\n", WEFT__SLEEP_SEARCHING(sl),
        WEFT__SLEEP_IDLE(sl), WEFT__SLEEP_TOKENS(sl), atomic_load_explicit(&e->sleep.epoch, memory_order_relaxed),
        weft__injector_empty(&e->injector) ? "empty" : "not empty");
    if (!weft__obs_state_get(e)) put(&s, "  (metrics off: running tasks are not shown)\n");
    for (unsigned i = 0; i < ex->nworkers; i++) put_worker(&s, ex, i);
    /* The submitter slots' queues (core/submitter.c): jobs that threads which
     * are no workers queued there (weft_silent_async from main, say) wait
     * in them, not in a worker's deque nor the injector; without these lines
     * a backlog of 10^6 such jobs behind a stuck worker did not show. */
    unsigned nsub = atomic_load_explicit(&e->nsubmitters, memory_order_relaxed);
    for (unsigned k = 0; k < nsub && k < WEFT__SUBMITTERS; k++) {
        weft__worker *w = &e->workers[ex->nworkers + k];
        int64_t top = atomic_load_explicit(&w->deque.top, memory_order_relaxed);
        int64_t bottom = atomic_load_explicit(&w->deque.bottom, memory_order_relaxed);
        put(&s, "  submitter slot %u: %s, queue %lld job(s)\n", k,
            atomic_load_explicit(&w->sub_owner, memory_order_relaxed) ? "claimed" : "free",
            (long long)(bottom > top ? bottom - top : 0));
    }
    flush_sink(&s);
    /* The message on the stack too (no allocation): core.h's rule for failures. */
    if (s.st != WEFT_OK) return weft__fail(__func__, s.st, "writing to file descriptor %d failed", fd);
    return WEFT_OK;
}

weft_status weft_executor_dump(const weft_executor *ex, FILE *out) {
    if (!ex || !out) return weft__fail(__func__, WEFT_EINVAL, "ex or out is NULL");
    if (fflush(out) != 0) return weft__fail(__func__, WEFT_ESYS, "out could not be flushed");
    int fd = fileno(out);
    return fd < 0 ? weft__fail(__func__, WEFT_EINVAL, "out has no file descriptor") : weft_executor_dump_fd(ex, fd);
}
