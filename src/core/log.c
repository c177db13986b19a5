/* Logging: a level, and stderr, a message callback or an entry callback (the
 * structured form: weft_log_entry, which observe/ uses for its JSON sink). */
#include "core/log.h"
#include "core/env.h"
#include "core/executor.h"
#include "platform/platform.h"
#include "platform/wallclock.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* DEBUG until WEFT_LOG has been read (then WEFT_LOG's level, or warn): the
 * macro's test lets every message through to weft__log_emit, which reads
 * WEFT_LOG and tests again.  Starting at warn dropped an info or debug message
 * logged before the first executor even under WEFT_LOG=debug. */
_Atomic int weft__log_level_ = WEFT_LOG_DEBUG;

/* The callback and its argument are set together by weft_log_set_callback before
 * work starts (documented), so two relaxed atomics suffice: no torn pointer. */
static _Atomic(weft_log_fn) log_fn;
static _Atomic(weft_log_entry_fn) entry_fn; /* at most one of the two is set */
static _Atomic(void *) log_user;
/* What a layer above knows of the calling thread's task (observe/: the
 * executor's number, the task's name and run), or NULL. */
static _Atomic(weft__log_context_fn) context_fn;

static const char *const level_names[] = { "off", "error", "warn", "info", "debug" };

/* WEFT_LOG is read once, on the first executor created (or the first
 * weft_log_get_level or message); a level the program set before that wins
 * over it.  0: not read, 1: being read, 2: read (the level is final). */
static _Atomic int env_read;
static _Thread_local bool reading_env; /* this thread reads it: its bad-value warning goes out */
static _Atomic int level_set_by_program;

static void store_level(weft_log_level level) {
    if ((int)level < WEFT_LOG_OFF) level = WEFT_LOG_OFF;
    if ((int)level > WEFT_LOG_DEBUG) level = WEFT_LOG_DEBUG;
    atomic_store_explicit(&weft__log_level_, (int)level, memory_order_relaxed);
}

void weft_log_set_level(weft_log_level level) {
    atomic_store_explicit(&level_set_by_program, 1, memory_order_relaxed);
    store_level(level);
}

weft_log_level weft_log_get_level(void) {
    weft__log_init_from_env(); /* the default it reports is WEFT_LOG's */
    return (weft_log_level)atomic_load_explicit(&weft__log_level_, memory_order_relaxed);
}

void weft_log_set_callback(weft_log_fn fn, void *user) {
    atomic_store_explicit(&entry_fn, NULL, memory_order_relaxed);
    atomic_store_explicit(&log_user, user, memory_order_relaxed);
    atomic_store_explicit(&log_fn, fn, memory_order_relaxed);
}

void weft_log_set_entry_callback(weft_log_entry_fn fn, void *user) {
    atomic_store_explicit(&log_fn, NULL, memory_order_relaxed);
    atomic_store_explicit(&log_user, user, memory_order_relaxed);
    atomic_store_explicit(&entry_fn, fn, memory_order_relaxed);
}

void weft__log_set_context(weft__log_context_fn fn) {
    atomic_store_explicit(&context_fn, fn, memory_order_relaxed);
}

/* The entry's context: the worker and executor from the task the calling
 * thread runs, then whatever the layer above adds. */
static void fill_context(weft_log_entry *e) {
    e->worker = -1;
    weft_ctx *cx = weft_current_ctx();
    if (!cx || !cx->worker) return;
    e->worker = (int)cx->worker->id;
    e->executor = cx->worker->ex;
    weft__log_context_fn more = atomic_load_explicit(&context_fn, memory_order_relaxed);
    if (more) more(cx->worker, e);
}

void weft__log_init_from_env(void) {
    int zero = 0;
    if (reading_env || atomic_load_explicit(&env_read, memory_order_acquire) == 2) return;
    if (!atomic_compare_exchange_strong_explicit(&env_read, &zero, 1, memory_order_relaxed, memory_order_relaxed)) {
        /* Another thread reads it: the level is final only when it is done. */
        while (atomic_load_explicit(&env_read, memory_order_acquire) != 2) weft__thread_yield();
        return;
    }
    /* The rule of every WEFT_* variable (core/env.h): any case, and an empty
     * or unknown value is warned about once and the default kept. */
    static const char *const words[] = { "off", "error", "warn", "info", "debug", NULL };
    _Static_assert(WEFT_LOG_OFF == 0 && WEFT_LOG_DEBUG == 4, "words[] follows weft_log_level");
    /* A bad value's warning, logged from here, goes out (reading_env). */
    reading_env = true;
    int i = weft__env_choice("WEFT_LOG", words, "warn");
    reading_env = false;
    if (!atomic_load_explicit(&level_set_by_program, memory_order_relaxed))
        store_level(i >= 0 ? (weft_log_level)i : WEFT_LOG_WARN);
    atomic_store_explicit(&env_read, 2, memory_order_release);
}

void weft__log_emit(weft_log_level level, const char *fmt, ...) {
    /* WEFT_LOG is read at the first executor's creation; a message logged
     * before one exists (a bad WEFT_TOPOLOGY in weft_topology_detect, a bad
     * WEFT_GPU in weft_gpu_open, a bad WEFT_BLOCK_CACHE_MB at a taskflow's
     * destroy) passed the default level and was printed under WEFT_LOG=off.
     * Read it now and look at the level again. */
    if (atomic_load_explicit(&env_read, memory_order_acquire) != 2) {
        weft__log_init_from_env();
        if ((int)level > atomic_load_explicit(&weft__log_level_, memory_order_relaxed)) return;
    }
    /* The stderr line is formatted here, "weft: <level>: " then the message,
     * and written with one fputs: fprintf to the unbuffered stderr formats
     * through an 8 KiB buffer on the stack (glibc's buffered_vfprintf), and a
     * warning logged while an executor was created on a thread with a 16 KiB
     * stack (the default executor made by its first weft_async(NULL, ...),
     * a bad WEFT_WORKERS) crashed there.  The callbacks get the message
     * alone (msg), as before. */
    char line[16 + 512 + 2];
    int pre = snprintf(line, 16, "weft: %s: ", level_names[level]);
    if (pre < 0 || pre >= 16) pre = 0;
    char *msg = line + pre;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, 512, fmt, ap);
    va_end(ap);
    weft_log_entry_fn efn = atomic_load_explicit(&entry_fn, memory_order_relaxed);
    if (efn) { /* the text as it is: a structured sink escapes it (JSON: \u000a) */
        weft_log_entry e = { .time_ns = weft__wall_ns(), .level = level, .message = msg };
        fill_context(&e);
        efn(atomic_load_explicit(&log_user, memory_order_relaxed), &e);
        return;
    }
    /* A message is one line (observe.h), but it may quote what a user gave:
     * an environment variable's value, a path.  A newline there split the
     * stderr line and reached message callbacks promised none: for those
     * two, control characters (tab aside) become '?'. */
    for (unsigned char *p = (unsigned char *)msg; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) *p = '?';
    weft_log_fn fn = atomic_load_explicit(&log_fn, memory_order_relaxed);
    if (fn) {
        fn(atomic_load_explicit(&log_user, memory_order_relaxed), level, msg);
        return;
    }
    /* One fputs: stdio locks the stream, so lines from threads do not interleave. */
    size_t n = strlen(line);
    line[n] = '\n';
    line[n + 1] = 0;
    fputs(line, stderr);
}
