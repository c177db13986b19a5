/* Live statistics: weft_stats_start / WEFT_STATS (src/observe/live.c), the
 * block's documented layout, the Prometheus textfile. */
#define _GNU_SOURCE
#include "obs_util.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

/* A reader's view of a live block: the file mapped read-only, as weft-top does. */
struct view {
    const _Atomic uint64_t *w;
    size_t len;
};

static struct view map_block(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) TEST_FAIL_("cannot open %s", path);
    struct stat st;
    ASSERT_EQ(fstat(fd, &st), 0);
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    ASSERT_TRUE(p != MAP_FAILED);
    return (struct view){ p, (size_t)st.st_size };
}

static uint64_t hw(struct view v, unsigned k) { return atomic_load_explicit(&v.w[k], memory_order_relaxed); }
static uint64_t ww(struct view v, unsigned worker, unsigned k) {
    return hw(v, WEFT_STATS_HEADER_WORDS + worker * WEFT_STATS_WORKER_WORDS + k);
}

static void sleep_ms(long ms) { nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL); }

/* Waits until the block has had `more` refreshes after now (5 s at most). */
static void wait_refreshes(struct view v, uint64_t more) {
    uint64_t until = hw(v, WEFT_STATS_H_UPDATES) + more;
    for (int i = 0; i < 5000 && hw(v, WEFT_STATS_H_UPDATES) < until; i++) sleep_ms(1);
    ASSERT_GE(hw(v, WEFT_STATS_H_UPDATES), until);
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

static weft_executor *executor_with(unsigned workers, bool metrics) {
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = workers, .metrics = metrics }, &err);
    if (!ex) TEST_FAIL_("weft_executor_create: %s", weft_errname(err));
    return ex;
}

TEST(live_block_has_the_documented_layout_and_the_executors_counts) {
    char path[64];
    temp_path(path, sizeof path, ".stats");
    weft_executor *ex = executor_with(2, true);
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .path = path, .interval_ms = 10 }));
    struct view v = map_block(path);
    ASSERT_EQ(v.len, (size_t)(WEFT_STATS_HEADER_WORDS + 2 * WEFT_STATS_WORKER_WORDS) * 8);
    ASSERT_EQ(hw(v, WEFT_STATS_H_MAGIC), WEFT_STATS_MAGIC);
    ASSERT_EQ(memcmp((const void *)v.w, "WEFTSTAT", 8), 0);
    ASSERT_EQ(hw(v, WEFT_STATS_H_VERSION), 1u);
    ASSERT_EQ(hw(v, WEFT_STATS_H_HEADER_WORDS), WEFT_STATS_HEADER_WORDS);
    ASSERT_EQ(hw(v, WEFT_STATS_H_WORKER_WORDS), WEFT_STATS_WORKER_WORDS);
    ASSERT_EQ(hw(v, WEFT_STATS_H_WORKERS), 2u);
    ASSERT_EQ(hw(v, WEFT_STATS_H_PID), (uint64_t)getpid());
    ASSERT_EQ(hw(v, WEFT_STATS_H_INTERVAL_NS), 10000000u);
    ASSERT_GE(hw(v, WEFT_STATS_H_UPDATES), 1u); /* written once before start returns */
    ASSERT_TRUE(hw(v, WEFT_STATS_H_FLAGS) & WEFT_STATS_F_TASKS);

    atomic_int counter = 0;
    weft_taskflow *tf = make_chains(500, 8, &counter, false);
    for (int r = 0; r < 4; r++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t t0 = hw(v, WEFT_STATS_H_NOW_NS);
    /* Workers still searching after wait_all count failed steals and then a
     * park: compare only across a refresh during which no count moved (on a
     * loaded machine a worker's search can outlast a refresh or two). */
    weft_metrics m;
    weft_worker_metrics per[2], before[2];
    for (int tries = 0;; tries++) {
        ASSERT_OK(weft_executor_metrics(ex, &m, before, 2));
        wait_refreshes(v, 2);
        ASSERT_OK(weft_executor_metrics(ex, &m, per, 2));
        bool still = false;
        for (unsigned i = 0; i < 2; i++)
            still |= before[i].steal_fails != per[i].steal_fails || before[i].parks != per[i].parks ||
                     before[i].steals != per[i].steals;
        if (!still) break;
        if (tries == 500) TEST_FAIL_("the workers' counts kept moving for 500 refreshes of an idle executor");
    }
    ASSERT_GT(hw(v, WEFT_STATS_H_NOW_NS), t0);
    ASSERT_EQ(m.total.tasks, 2000u);
    uint64_t busy = 0;
    for (unsigned i = 0; i < 2; i++) { /* quiet now: the block holds the same counts */
        ASSERT_EQ(ww(v, i, WEFT_STATS_W_TASKS), per[i].tasks);
        ASSERT_EQ(ww(v, i, WEFT_STATS_W_STEALS), per[i].steals);
        ASSERT_EQ(ww(v, i, WEFT_STATS_W_PARKS), per[i].parks);
        ASSERT_EQ(ww(v, i, WEFT_STATS_W_STEAL_FAILS), per[i].steal_fails);
        ASSERT_EQ(ww(v, i, WEFT_STATS_W_DEQUE), 0u);
        ASSERT_LE(ww(v, i, WEFT_STATS_W_STATE), (uint64_t)WEFT_STATS_PARKED);
        ASSERT_LE(ww(v, i, WEFT_STATS_W_BUSY_NS), per[i].busy_ns + 1); /* exact: the metrics' figure */
        busy += ww(v, i, WEFT_STATS_W_BUSY_NS);
    }
    ASSERT_GT(busy, 0u);
    ASSERT_EQ(hw(v, WEFT_STATS_H_RUNS_IN_FLIGHT), 0u);
    ASSERT_EQ(hw(v, WEFT_STATS_H_INJECTOR), 0u);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    munmap((void *)v.w, v.len);
}

TEST(stop_marks_the_block_closed_and_removes_the_files) {
    char path[64], prom[64];
    temp_path(path, sizeof path, ".stats");
    temp_path(prom, sizeof prom, ".prom");
    weft_executor *ex = executor_with(1, false);
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .path = path, .prom_path = prom }));
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .path = path }), WEFT_EBUSY);
    struct view v = map_block(path);
    ASSERT_FALSE(hw(v, WEFT_STATS_H_FLAGS) & WEFT_STATS_F_CLOSED);
    ASSERT_FALSE(hw(v, WEFT_STATS_H_FLAGS) & WEFT_STATS_F_TASKS); /* metrics off */
    ASSERT_OK(weft_stats_stop(ex));
    ASSERT_TRUE(hw(v, WEFT_STATS_H_FLAGS) & WEFT_STATS_F_CLOSED);
    ASSERT_FALSE(exists(path));
    ASSERT_FALSE(exists(prom));
    ASSERT_OK(weft_stats_stop(ex)); /* not publishing: fine */
    /* Again, then the executor's destroy stops it. */
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .prom_path = prom, .interval_ms = 5 }));
    ASSERT_TRUE(exists(prom));
    weft_executor_destroy(ex);
    ASSERT_FALSE(exists(prom));
    munmap((void *)v.w, v.len);
}

TEST(stats_start_rejects_bad_arguments) {
    weft_executor *ex = executor_with(1, false);
    ASSERT_STATUS(weft_stats_start(NULL, &(weft_stats_config){ .path = "/tmp/x" }), WEFT_EINVAL);
    ASSERT_STATUS(weft_stats_start(ex, NULL), WEFT_EINVAL);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .interval_ms = 5 }), WEFT_EINVAL);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .path = "/nonexistent-dir/live.stats" }), WEFT_ESYS);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .prom_path = "/nonexistent-dir/w.prom" }), WEFT_ESYS);
    ASSERT_STATUS(weft_stats_stop(NULL), WEFT_EINVAL);
    /* A failed start leaves nothing running: a good one works after it. */
    char path[64];
    temp_path(path, sizeof path, ".stats");
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .path = path }));
    weft_executor_destroy(ex);
    ASSERT_FALSE(exists(path));
}

/* A start that fails removes only what it made: a textfile it never wrote
 * (the block failed first) stays, and the message names the file. */
TEST(a_failed_stats_start_keeps_a_textfile_it_never_wrote_and_names_the_file) {
    weft_executor *ex = executor_with(1, false);
    char prom[64];
    temp_path(prom, sizeof prom, ".prom");
    FILE *f = fopen(prom, "w");
    ASSERT_NOT_NULL(f);
    fputs("mine\n", f);
    fclose(f);
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .path = "/nonexistent-dir/live.stats", .prom_path = prom }),
                  WEFT_ESYS);
    ASSERT_TRUE(strstr(weft_last_error_message(), "/nonexistent-dir/live.stats") != NULL);
    ASSERT_TRUE(exists(prom));
    /* The block made before the textfile failed is taken back. */
    char path[64];
    temp_path(path, sizeof path, ".stats");
    ASSERT_STATUS(weft_stats_start(ex, &(weft_stats_config){ .path = path, .prom_path = "/nonexistent-dir/w.prom" }),
                  WEFT_ESYS);
    ASSERT_TRUE(strstr(weft_last_error_message(), "/nonexistent-dir/w.prom") != NULL);
    ASSERT_FALSE(exists(path));
    unlink(prom);
    weft_executor_destroy(ex);
}

static int spin_ms(weft_ctx *ctx, void *arg) {
    (void)ctx;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < (long)(intptr_t)arg);
    return 0;
}

TEST(busy_time_is_sampled_without_task_metrics) {
    char path[64];
    temp_path(path, sizeof path, ".stats");
    weft_executor *ex = executor_with(1, false);
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .path = path, .interval_ms = 20 }));
    struct view v = map_block(path);
    weft_taskflow *tf = make_taskflow("long");
    must_emplace(tf, spin_ms, (void *)(intptr_t)400);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    wait_refreshes(v, 2);
    uint64_t busy = ww(v, 0, WEFT_STATS_W_BUSY_NS);
    ASSERT_GE(busy, 200000000u); /* 400 ms running, seen by samples every 10 ms */
    ASSERT_LE(busy, 2000000000u);
    ASSERT_EQ(ww(v, 0, WEFT_STATS_W_TASKS), 0u); /* not counted without metrics */
    /* Idle now: the sampled time stops growing. */
    sleep_ms(100);
    uint64_t later = ww(v, 0, WEFT_STATS_W_BUSY_NS);
    ASSERT_LE(later - busy, 30000000u);
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
    munmap((void *)v.w, v.len);
}

/* Checks Prometheus text format 0.0.4 line by line: every sample's family has
 * a TYPE line before it, names and labels are well formed, values are numbers.
 * Returns the value of the sample that starts with `want` (or -1). */
static double check_prom(const char *text, const char *want) {
    double found = -1;
    char typed[64][96];
    int ntyped = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        ASSERT_NOT_NULL(eol);
        char line[512];
        size_t n = (size_t)(eol - p);
        ASSERT_LT(n, sizeof line);
        memcpy(line, p, n), line[n] = 0;
        p = eol + 1;
        if (strncmp(line, "# TYPE ", 7) == 0) {
            char name[96], type[32];
            ASSERT_EQ(sscanf(line + 7, "%95s %31s", name, type), 2);
            ASSERT_TRUE(strcmp(type, "counter") == 0 || strcmp(type, "gauge") == 0);
            if (strcmp(type, "counter") == 0) ASSERT_NOT_NULL(strstr(name, "_total"));
            ASSERT_LT(ntyped, 64);
            strcpy(typed[ntyped++], name);
            continue;
        }
        if (line[0] == '#') { ASSERT_EQ(strncmp(line, "# HELP ", 7), 0); continue; }
        size_t name_len = strspn(line, "abcdefghijklmnopqrstuvwxyz_");
        ASSERT_GT(name_len, 0u);
        ASSERT_EQ(line[name_len], '{');
        bool known = false;
        for (int i = 0; i < ntyped; i++) known |= strlen(typed[i]) == name_len && !strncmp(typed[i], line, name_len);
        ASSERT_TRUE(known);
        /* labels: name="value" pairs separated by commas */
        const char *q = line + name_len + 1;
        while (*q != '}') {
            size_t ln = strspn(q, "abcdefghijklmnopqrstuvwxyz_");
            ASSERT_GT(ln, 0u);
            ASSERT_EQ(q[ln], '=');
            ASSERT_EQ(q[ln + 1], '"');
            const char *close = strchr(q + ln + 2, '"');
            ASSERT_NOT_NULL(close);
            q = close + 1;
            if (*q == ',') q++;
        }
        ASSERT_EQ(q[1], ' ');
        char *end;
        double val = strtod(q + 2, &end);
        ASSERT_TRUE(*end == 0 && end > q + 2);
        if (want && found < 0 && strncmp(line, want, strlen(want)) == 0) found = val;
    }
    return found;
}

TEST(prom_textfile_is_valid_and_counts_the_tasks) {
    char prom[64];
    temp_path(prom, sizeof prom, ".prom");
    weft_executor *ex = executor_with(2, true);
    ASSERT_OK(weft_stats_start(ex, &(weft_stats_config){ .prom_path = prom, .interval_ms = 10 }));
    atomic_int counter = 0;
    weft_taskflow *tf = make_chains(300, 4, &counter, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    double tasks = -1;
    for (int i = 0; i < 2000 && tasks < 300; i++) { /* until a refresh saw the run's end */
        sleep_ms(2);
        char *t = read_file(prom);
        double w0 = check_prom(t, "weft_worker_tasks_total{");
        const char *w1 = strstr(t, "worker=\"1\"} ");
        ASSERT_NOT_NULL(w1);
        char *second = strstr(strstr(t, "weft_worker_tasks_total{"), "\nweft_worker_tasks_total{");
        ASSERT_NOT_NULL(second);
        tasks = w0 + strtod(strstr(second, "} ") + 2, NULL);
        ASSERT_NOT_NULL(strstr(t, "# TYPE weft_worker_busy_seconds_total counter\n"));
        ASSERT_NOT_NULL(strstr(t, "state=\"parked\"}"));
        free(t);
    }
    ASSERT_EQ(tasks, 300.0);
    /* Replaced whole through a temporary file: none is left beside it. */
    char tmp[96];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", prom, (int)getpid());
    ASSERT_FALSE(exists(tmp));
    weft_taskflow_destroy(tf);
    weft_executor_destroy(ex);
}

TEST(weft_stats_env_publishes_each_executor_at_its_own_path) {
    char dir[] = "/tmp/weft-live-XXXXXX";
    ASSERT_NOT_NULL(mkdtemp(dir));
    char env[256], a[128], a1[128], p[128], p1[128];
    snprintf(env, sizeof env, "%s/run.stats,%s/run.prom", dir, dir);
    snprintf(a, sizeof a, "%s/run.stats", dir), snprintf(a1, sizeof a1, "%s/run.1.stats", dir);
    snprintf(p, sizeof p, "%s/run.prom", dir), snprintf(p1, sizeof p1, "%s/run.1.prom", dir);
    setenv("WEFT_STATS", env, 1);
    weft_executor *e1 = executor_with(1, false), *e2 = executor_with(1, false);
    ASSERT_TRUE(exists(a) && exists(a1) && exists(p) && exists(p1));
    struct view v = map_block(a1);
    ASSERT_EQ(hw(v, WEFT_STATS_H_EXECUTOR) , hw(map_block(a), WEFT_STATS_H_EXECUTOR) + 1);
    weft_executor_destroy(e2);
    weft_executor_destroy(e1);
    ASSERT_FALSE(exists(a) || exists(a1) || exists(p) || exists(p1));
    /* A path that cannot be written is warned about; the executor still starts. */
    setenv("WEFT_STATS", "/nonexistent-dir/x.stats", 1);
    weft_executor *e3 = executor_with(1, false);
    weft_executor_destroy(e3);
    unsetenv("WEFT_STATS");
    rmdir(dir);
}
