/* Helpers shared by the observability tests. */
#ifndef WEFT_OBS_UTIL_H
#define WEFT_OBS_UTIL_H

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* A taskflow of `n` tasks in `width` independent chains, every task bumping
 * *counter; tasks are named "t<i>" when `named`. */
static inline weft_taskflow *make_chains(size_t n, size_t width, atomic_int *counter, bool named) {
    weft_taskflow *tf = make_taskflow("chains");
    weft_task prev[64] = { { 0 } };
    for (size_t i = 0; i < n; i++) {
        weft_task t = must_emplace(tf, bump, counter);
        if (named) {
            char name[32];
            snprintf(name, sizeof name, "t%zu", i);
            ASSERT_OK(weft_task_set_name(t, name));
        }
        size_t c = i % width;
        if (!weft_task_is_null(prev[c])) ASSERT_OK(weft_precede(prev[c], t));
        prev[c] = t;
    }
    return tf;
}

static inline weft_executor *make_profiled(unsigned workers, size_t max_spans) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(
        &(weft_executor_config){ .workers = workers, .profile = true, .profile_max_spans = max_spans }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create failed: %s", weft_errname(err));
    return ex;
}

/* True when `cmd` (a program name) is on PATH. */
static inline bool have_program(const char *cmd) {
    char buf[256];
    snprintf(buf, sizeof buf, "command -v %s >/dev/null 2>&1", cmd);
    return system(buf) == 0;
}

/* A fresh temporary file path with the given suffix (the file is created). */
static inline void temp_path(char *buf, size_t len, const char *suffix) {
    snprintf(buf, len, "/tmp/weft-obs-XXXXXX%s", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0) TEST_FAIL_("mkstemps failed");
    close(fd);
}

/* Runs `cmd` through the shell; returns its exit status. */
static inline int shell(const char *cmd) {
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Runs a python3 program (text) with the given arguments; its exit status. */
static inline int run_python(const char *program, const char *args) {
    char script[64], cmd[2048];
    temp_path(script, sizeof script, ".py");
    FILE *f = fopen(script, "w");
    ASSERT_NOT_NULL(f);
    fputs(program, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 %s %s", script, args);
    int rc = shell(cmd);
    unlink(script);
    return rc;
}

/* A whole file as a malloc'ed string (the caller frees it). */
static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) TEST_FAIL_("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ASSERT_NOT_NULL(s);
    ASSERT_EQ(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

/* Writes weft_taskflow_dump_dot_profiled's output to path. */
static inline void write_profiled_dot(const weft_taskflow *tf, const weft_executor *ex, const char *path) {
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_taskflow_dump_dot_profiled(tf, ex, f));
    fclose(f);
}

/* weft_taskflow_dump_dot_profiled's text (malloc'ed; the caller frees it). */
static inline char *profiled_dot_text(const weft_taskflow *tf, const weft_executor *ex) {
    char path[64];
    temp_path(path, sizeof path, ".dot");
    write_profiled_dot(tf, ex, path);
    char *s = read_file(path);
    unlink(path);
    return s;
}

/* ---- metrics and profile agreement (obs_hunt40, cross_hunt43) ---- */

/* Counts a check wants; -1: not known exactly. */
typedef struct obs_want {
    int64_t tasks, failed, skipped;
} obs_want;

/* Checks every invariant of ex's metrics (per worker: tasks = succeeded +
 * failed, the histogram holds every task, busy + idle = wall; the per-worker
 * sums are the totals; busy <= wall x workers; wakeups <= parks) and the
 * counts in w.  Fills pw[0..*n) (pw holds 8).  Read after the workers are
 * idle (observe.h, Timing): the caller settles first. */
static inline weft_metrics obs_check_metrics(weft_executor *ex, obs_want w, weft_worker_metrics pw[8], unsigned *nout,
                                             const char *what) {
    weft_metrics m;
    unsigned n = weft_executor_workers(ex);
    ASSERT_TRUE(n <= 8);
    *nout = n;
    ASSERT_OK(weft_executor_metrics(ex, &m, pw, 8));
    weft_worker_metrics sum = { 0 };
    for (unsigned i = 0; i < n; i++) {
        const weft_worker_metrics *p = &pw[i];
        if (p->tasks != p->succeeded + p->failed)
            TEST_FAIL_("%s: worker %u tasks %llu != %llu + %llu", what, i, (unsigned long long)p->tasks,
                       (unsigned long long)p->succeeded, (unsigned long long)p->failed);
        uint64_t h = 0;
        for (unsigned b = 0; b < WEFT_METRICS_BUCKETS; b++) h += p->histogram[b];
        if (h != p->tasks)
            TEST_FAIL_("%s: worker %u histogram holds %llu of %llu tasks", what, i, (unsigned long long)h,
                       (unsigned long long)p->tasks);
        if (p->busy_ns + p->idle_ns != m.wall_ns) TEST_FAIL_("%s: worker %u busy + idle != wall", what, i);
        sum.tasks += p->tasks, sum.succeeded += p->succeeded, sum.failed += p->failed;
        sum.skipped += p->skipped, sum.steals += p->steals, sum.parks += p->parks, sum.wakeups += p->wakeups;
        sum.busy_ns += p->busy_ns;
    }
    if (sum.tasks != m.total.tasks || sum.succeeded != m.total.succeeded || sum.failed != m.total.failed ||
        sum.skipped != m.total.skipped || sum.steals != m.total.steals || sum.parks != m.total.parks ||
        sum.wakeups != m.total.wakeups || sum.busy_ns != m.total.busy_ns)
        TEST_FAIL_("%s: per-worker sums differ from the totals (tasks %llu of %llu)", what,
                   (unsigned long long)sum.tasks, (unsigned long long)m.total.tasks);
    if (m.total.busy_ns > m.wall_ns * n)
        TEST_FAIL_("%s: busy %llu > wall %llu * %u", what, (unsigned long long)m.total.busy_ns,
                   (unsigned long long)m.wall_ns, n);
    if (m.total.wakeups > m.total.parks)
        TEST_FAIL_("%s: %llu wakeups for %llu parks", what, (unsigned long long)m.total.wakeups,
                   (unsigned long long)m.total.parks);
    if (w.tasks >= 0 && m.total.tasks != (uint64_t)w.tasks)
        TEST_FAIL_("%s: metrics count %llu tasks, want %lld", what, (unsigned long long)m.total.tasks,
                   (long long)w.tasks);
    if (w.failed >= 0 && m.total.failed != (uint64_t)w.failed)
        TEST_FAIL_("%s: metrics count %llu failed, want %lld", what, (unsigned long long)m.total.failed,
                   (long long)w.failed);
    if (w.skipped >= 0 && m.total.skipped != (uint64_t)w.skipped)
        TEST_FAIL_("%s: metrics count %llu skipped, want %lld", what, (unsigned long long)m.total.skipped,
                   (long long)w.skipped);
    return m;
}

/* Checks that ex's profile agrees with metrics m, pw[0..n) just read: no span
 * dropped, one span per task, the entries' runs and failures sum to them, and
 * per worker the same runs and steals (parks: at most one more in the
 * metrics, the park a worker is in when they are read). */
static inline void obs_check_profile(weft_executor *ex, const weft_metrics *m, const weft_worker_metrics *pw, unsigned n,
                                     const char *what) {
    uint64_t spans = 0, dropped = 0;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(dropped, 0);
    if (spans != m->total.tasks)
        TEST_FAIL_("%s: %llu spans for %llu tasks", what, (unsigned long long)spans,
                   (unsigned long long)m->total.tasks);
    weft_profile *p = NULL;
    ASSERT_OK(weft_profile_get(ex, &p));
    ASSERT_EQ(p->spans, spans);
    uint64_t cnt = 0, failed = 0;
    for (size_t i = 0; i < p->ntasks; i++) cnt += p->tasks[i].count, failed += p->tasks[i].failed;
    if (cnt != spans || failed != m->total.failed)
        TEST_FAIL_("%s: profile entries count %llu runs (%llu failed), metrics %llu (%llu)", what,
                   (unsigned long long)cnt, (unsigned long long)failed, (unsigned long long)m->total.tasks,
                   (unsigned long long)m->total.failed);
    for (unsigned i = 0; i < n; i++) {
        if (p->per_worker[i].tasks != pw[i].tasks)
            TEST_FAIL_("%s: worker %u: profile %llu runs, metrics %llu", what, i,
                       (unsigned long long)p->per_worker[i].tasks, (unsigned long long)pw[i].tasks);
        if (p->per_worker[i].steals != pw[i].steals || p->per_worker[i].parks > pw[i].parks + 1)
            TEST_FAIL_("%s: worker %u: profile %llu steals %llu parks, metrics %llu steals %llu parks", what, i,
                       (unsigned long long)p->per_worker[i].steals, (unsigned long long)p->per_worker[i].parks,
                       (unsigned long long)pw[i].steals, (unsigned long long)pw[i].parks);
    }
    weft_profile_free(p);
}

#endif
