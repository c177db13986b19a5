/* Session-39 hunt on the profiler and its exports, from weft/observe.h's
 * contract: every kind of work in one profile, tiny span limits, stopping
 * while runs are in flight, files that cannot be written, WEFT_PROFILE and
 * WEFT_LOG values. */
#define _GNU_SOURCE
#include <sys/stat.h>

#include "obs_util.h"
#include "weft/gpu.h"

/* ---- a program with every kind of work ---- */

/* How many times each named task ran, by name: name i is "k<i>". */
enum { NAMES = 64 };
static atomic_int runs_of[NAMES];

static int named(weft_ctx *cx, void *arg) {
    (void)cx;
    atomic_fetch_add(&runs_of[(intptr_t)arg], 1);
    return 0;
}

static atomic_int loops;
static int loop_cond(weft_ctx *cx, void *arg) {
    named(cx, arg);
    return atomic_fetch_add(&loops, 1) < 3 ? 0 : 1; /* back to the body 3 times, then on */
}

static int make_subflow(weft_ctx *cx, weft_subflow *sf, void *arg) {
    named(cx, arg);
    weft_taskflow *g = weft_subflow_graph(sf);
    for (intptr_t i = 40; i < 45; i++) {
        weft_task t = weft_emplace(g, named, (void *)i);
        char name[16];
        snprintf(name, sizeof name, "k%d", (int)i);
        if (weft_task_set_name(t, name) != WEFT_OK) return -1;
    }
    return 0;
}

static int gpu_work(weft_ctx *cx, weft_gpu_stream *s, void *arg) {
    (void)s;
    return named(cx, arg);
}

static int stage(weft_pipeflow *pf, void *arg) {
    (void)arg;
    if (weft_pipeflow_stage(pf) == 0 && weft_pipeflow_token(pf) == 9) weft_pipeflow_stop(pf);
    return 0;
}

static void index_body(size_t i, void *arg) { (void)i, (void)arg; }

static int cmp_int(const void *a, const void *b, void *arg) {
    (void)arg;
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int child(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    return 0;
}

static int root(weft_ctx *cx, void *arg) {
    (void)arg;
    for (int i = 0; i < 8; i++)
        if (weft_spawn(cx, child, NULL) != WEFT_OK) return -1;
    int st = weft_sync(cx);
    if (st) return st;
    static int v[5000];
    for (int i = 0; i < 5000; i++) v[i] = (i * 7919) % 5000;
    weft_executor *ex = weft_ctx_executor(cx);
    if (weft_parallel_for(ex, 0, 1000, 1, index_body, NULL, NULL) != WEFT_OK) return -2;
    return weft_parallel_sort(ex, v, 5000, sizeof *v, cmp_int, NULL, NULL) == WEFT_OK ? 0 : -3;
}

static void name_task(weft_task t, int i) {
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    ASSERT_OK(weft_task_set_name(t, name));
}

/* The python check of a trace: argv[1] the JSON, argv[2] the worker count,
 * argv[3] "name=count,..." the task runs expected, argv[4] the run spans in
 * all (tasks and other work). */
static const char *const CHECK = "import json,sys,collections\n"
                                 "d=json.load(open(sys.argv[1]))\n"
                                 "ev=d['traceEvents']\n"
                                 "W=int(sys.argv[2])\n"
                                 /* a GPU task's recording is busy time, not a run (observe.h) */
                                 "runs=[e for e in ev if e.get('ph')=='X' and e.get('cat') not in ('park','gpu recording')]\n"
                                 "for e in ev:\n"
                                 "  if e.get('ph') in ('X','i','I'):\n"
                                 "    assert 0<=e['tid']%10000<W, ('worker out of range', e)\n"
                                 "    assert e['ts']>=0, e\n"
                                 "  if e.get('ph')=='X': assert e['dur']>=0, ('end before begin', e)\n"
                                 "want=dict((kv.split('=')[0],int(kv.split('=')[1])) for kv in sys.argv[3].split(','))\n"
                                 "got=collections.Counter(e['name'] for e in runs if e['cat']=='task')\n"
                                 "for k,v in want.items(): assert got[k]==v, ('task',k,got[k],v)\n"
                                 "assert len(runs)==int(sys.argv[4]), (len(runs), sys.argv[4], collections.Counter(e['cat'] for e in runs))\n"
                                 "cats=set(e['cat'] for e in runs)\n"
                                 "for c in ('task','async','forkjoin','algo','pipeline'): assert c in cats, (c, cats)\n";

static void run_py(const char *script_text, const char *args) {
    char script[64], cmd[4096];
    temp_path(script, sizeof script, ".py");
    FILE *f = fopen(script, "w");
    ASSERT_NOT_NULL(f);
    fputs(script_text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 %s %s", script, args);
    int rc = shell(cmd);
    unlink(script);
    if (rc != 0) TEST_FAIL_("check failed: %s", cmd);
}

TEST(a_profile_of_every_kind_of_work_is_well_formed_and_counts_each_run_once) {
    if (!have_program("python3")) SKIP("python3 not installed");
    memset(runs_of, 0, sizeof runs_of);
    atomic_store(&loops, 0);
    weft_executor *ex = make_profiled(3, 0);
    weft_status err;
    weft_gpu_device *dev = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR}, &err);
    ASSERT_NOT_NULL(dev);

    /* Graph: a -> cond loop over body -> subflow -> module -> gpu -> pipeline. */
    weft_taskflow *body = make_taskflow("body");
    for (int i = 50; i < 54; i++) name_task(weft_emplace(body, named, (void *)(intptr_t)i), i);
    weft_stage st[2] = {{WEFT_STAGE_SERIAL, stage, NULL, "s0"}, {WEFT_STAGE_PARALLEL, stage, NULL, "s1"}};
    weft_pipeline *p = weft_pipeline_create(2, st, 2, &err);
    ASSERT_NOT_NULL(p);
    weft_taskflow *tf = make_taskflow("all");
    weft_task a = weft_emplace(tf, named, (void *)(intptr_t)0);
    weft_task lb = weft_emplace(tf, named, (void *)(intptr_t)1);
    weft_task c = weft_emplace_condition(tf, loop_cond, (void *)(intptr_t)2);
    weft_task sf = weft_emplace_subflow(tf, make_subflow, (void *)(intptr_t)3);
    weft_task mod = weft_emplace_module(tf, body);
    weft_task gpu = weft_emplace_gpu(tf, dev, gpu_work, (void *)(intptr_t)4);
    weft_task pipe = weft_pipeline_emplace(tf, p);
    name_task(a, 0), name_task(lb, 1), name_task(c, 2), name_task(sf, 3), name_task(gpu, 4);
    ASSERT_OK(weft_task_set_name(mod, "mod"));
    ASSERT_OK(weft_task_set_name(pipe, "pipe"));
    ASSERT_OK(weft_precede(a, lb));
    ASSERT_OK(weft_precede(lb, c));
    ASSERT_OK(weft_precede(c, lb)); /* successor 0: loop */
    ASSERT_OK(weft_precede(c, sf)); /* successor 1: on */
    ASSERT_OK(weft_precede(sf, mod));
    ASSERT_OK(weft_precede(mod, gpu));
    ASSERT_OK(weft_precede(gpu, pipe));
    ASSERT_OK(weft_run_and_wait(ex, tf));

    /* Async with dependencies, silent async, fork-join with algorithms. */
    weft_future *f1 = NULL, *f2 = NULL, *f3 = NULL;
    ASSERT_OK(weft_async(ex, named, (void *)(intptr_t)60, &f1));
    ASSERT_OK(weft_async(ex, named, (void *)(intptr_t)61, &f2));
    weft_future *deps[2] = {f1, f2};
    ASSERT_OK(weft_dependent_async(ex, named, (void *)(intptr_t)62, deps, 2, &f3));
    ASSERT_OK(weft_silent_async(ex, named, (void *)(intptr_t)63));
    ASSERT_OK(weft_future_wait(f3));
    ASSERT_EQ(weft_run_root(ex, root, NULL), 0);
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_future_destroy(f1), weft_future_destroy(f2), weft_future_destroy(f3);

    /* Every task function ran as the graph says. */
    ASSERT_EQ(atomic_load(&runs_of[1]), 4);
    ASSERT_EQ(atomic_load(&runs_of[2]), 4);
    uint64_t spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(dropped, 0);
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    ASSERT_EQ(m.total.tasks, spans); /* the metrics and the trace count the same work */

    char json[64], args[1024];
    temp_path(json, sizeof json, ".json");
    ASSERT_OK(weft_profiler_save(ex, json));
    snprintf(args, sizeof args,
             "%s 3 k0=1,k1=4,k2=4,k3=1,k40=1,k44=1,k50=1,k53=1,k4=1,pipe=1 %llu", json,
             (unsigned long long)spans);
    run_py(CHECK, args);
    unlink(json);

    /* The other exports: an SVG that parses as XML, folded lines
     * "frames weight", an HTML page that ends. */
    char svg[64], tl[64], folded[64], html[64];
    temp_path(svg, sizeof svg, ".svg");
    temp_path(folded, sizeof folded, ".folded");
    temp_path(html, sizeof html, ".html");
    temp_path(tl, sizeof tl, ".svg");
    ASSERT_OK(weft_profiler_save(ex, svg));
    ASSERT_OK(weft_profiler_save(ex, folded));
    ASSERT_OK(weft_profiler_save(ex, html));
    FILE *f = fopen(tl, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_profiler_write_timeline_svg(ex, f));
    fclose(f);
    snprintf(args, sizeof args, "%s %s %s %s", svg, tl, folded, html);
    run_py("import sys,re\n"
           "import xml.etree.ElementTree as ET\n"
           "ET.parse(sys.argv[1]); ET.parse(sys.argv[2])\n"
           "n=0\n"
           "for line in open(sys.argv[3]):\n"
           "  stack,w=line.rstrip('\\n').rsplit(' ',1)\n"
           "  assert int(w)>=1 and stack, line\n"
           "  n+=1\n"
           "assert n>0\n"
           "h=open(sys.argv[4]).read()\n"
           "assert h.rstrip().endswith('</html>'), h[-100:]\n",
           args);
    unlink(svg), unlink(tl), unlink(folded), unlink(html);

    weft_profile *prof;
    ASSERT_OK(weft_profile_get(ex, &prof));
    ASSERT_EQ(prof->spans, spans);
    uint64_t sum = 0;
    for (size_t i = 0; i < prof->ntasks; i++) {
        sum += prof->tasks[i].count;
        ASSERT_LE(prof->tasks[i].min_ns, prof->tasks[i].max_ns);
    }
    ASSERT_EQ(sum, spans);
    weft_profile_free(prof);

    ASSERT_OK(weft_taskflow_destroy(tf));
    ASSERT_OK(weft_taskflow_destroy(body));
    ASSERT_OK(weft_pipeline_destroy(p));
    weft_executor_destroy(ex);
    weft_gpu_close(dev);
}

/* ---- tiny span limits ---- */

TEST(span_limits_of_one_and_two_keep_that_many_and_count_the_rest_as_dropped) {
    for (size_t max = 1; max <= 2; max++)
        for (unsigned workers = 1; workers <= 2; workers++)
            for (int exact = 0; exact <= 1; exact++) {
                weft_status err;
                weft_executor *ex = weft_executor_create(
                    &(weft_executor_config){
                        .workers = workers, .profile = true, .profile_max_spans = max, .profile_exact = exact},
                    &err);
                ASSERT_NOT_NULL(ex);
                atomic_int count = 0;
                weft_taskflow *tf = make_chains(500, 1, &count, true);
                ASSERT_OK(weft_run_and_wait(ex, tf));
                for (int i = 0; i < 20; i++) ASSERT_OK(weft_silent_async(ex, bump, &count));
                ASSERT_OK(weft_executor_wait_all(ex));
                ASSERT_EQ(atomic_load(&count), 520);
                uint64_t spans, dropped;
                ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
                if (spans > max * workers || spans + dropped != 520)
                    TEST_FAIL_("max %zu, %u workers, exact %d: %llu spans, %llu dropped", max, workers, exact,
                               (unsigned long long)spans, (unsigned long long)dropped);
                weft_profile *prof;
                ASSERT_OK(weft_profile_get(ex, &prof));
                ASSERT_EQ(prof->spans, spans);
                ASSERT_EQ(prof->dropped, dropped);
                weft_profile_free(prof);
                /* The exports hold what was kept. */
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                ASSERT_OK(weft_profiler_write_json(ex, f));
                fclose(f);
                size_t n = 0;
                for (char *s = buf; (s = strstr(s, "\"cat\":\"task\"")) != NULL; s++) n++;
                for (char *s = buf; (s = strstr(s, "\"cat\":\"async\"")) != NULL; s++) n++;
                ASSERT_EQ(n, spans);
                free(buf);
                ASSERT_OK(weft_taskflow_destroy(tf));
                weft_executor_destroy(ex);
            }
}

/* ---- stopping while runs are in flight ---- */

static atomic_int gate;
static int wait_gate(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    while (!atomic_load(&gate)) sleep_us(100);
    return 0;
}

static int stop_from_task(weft_ctx *cx, void *arg) {
    (void)arg;
    return weft_profiler_stop(weft_ctx_executor(cx)) == WEFT_OK ? 0 : 1;
}

TEST(stopping_the_profiler_while_runs_are_in_flight_keeps_a_well_formed_trace) {
    weft_executor *ex = make_profiled(2, 0);
    atomic_store(&gate, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(2000, 4, &count, true);
    weft_future *held = NULL, *run = NULL;
    ASSERT_OK(weft_async(ex, wait_gate, NULL, &held));
    ASSERT_OK(weft_run(ex, tf, &run));
    sleep_us(1000);
    ASSERT_OK(weft_profiler_stop(ex)); /* any thread, runs in flight */
    atomic_store(&gate, 1);
    ASSERT_OK(weft_future_wait(run));
    ASSERT_OK(weft_future_wait(held));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_future_destroy(run), weft_future_destroy(held);
    uint64_t spans_after_stop, spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans_after_stop, &dropped));
    ASSERT_LE(spans_after_stop, 2001);
    /* Nothing more is recorded after the stop. */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(spans, spans_after_stop);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ASSERT_OK(weft_profiler_write_json(ex, f));
    fclose(f);
    ASSERT_NOT_NULL(strstr(buf, "traceEvents"));
    free(buf);

    /* Started again between runs and stopped by a task of the run. */
    ASSERT_OK(weft_profiler_start(ex));
    weft_taskflow *tf2 = make_taskflow("stopper");
    weft_task s = must_emplace(tf2, stop_from_task, NULL);
    weft_task after = must_emplace(tf2, bump, &count);
    ASSERT_OK(weft_precede(s, after));
    ASSERT_OK(weft_run_and_wait(ex, tf2));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_LE(spans, 1); /* at most the stopping task's own; none after it */
    ASSERT_OK(weft_taskflow_destroy(tf2));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- files that cannot be written ---- */

TEST(exports_to_unwritable_places_fail_with_esys_and_a_message) {
    weft_executor *ex = make_profiled(1, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(10, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    const char *paths[] = {"/nonexistent-dir/x.json", "/nonexistent-dir/x.html", "/nonexistent-dir/x.svg",
                           "/nonexistent-dir/x.folded", "/", "/tmp", ""};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        weft_status st = weft_profiler_save(ex, paths[i]);
        if (st != WEFT_ESYS && !(st == WEFT_EINVAL && !*paths[i]))
            TEST_FAIL_("save to '%s': %s", paths[i], weft_errname(st));
        ASSERT_TRUE(*weft_last_error_message());
    }
    ASSERT_STATUS(weft_profiler_save(ex, NULL), WEFT_EINVAL);
    /* A device that is full: every writer reports the failed write. */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        ASSERT_STATUS(weft_profiler_write_json(ex, full), WEFT_ESYS);
        clearerr(full);
        ASSERT_STATUS(weft_profiler_write_html(ex, full), WEFT_ESYS);
        clearerr(full);
        ASSERT_STATUS(weft_profiler_write_timeline_svg(ex, full), WEFT_ESYS);
        clearerr(full);
        ASSERT_STATUS(weft_profiler_write_folded(ex, NULL, full), WEFT_ESYS);
        clearerr(full);
        ASSERT_STATUS(weft_profiler_write_flame_svg(ex, NULL, full), WEFT_ESYS);
        clearerr(full);
        ASSERT_STATUS(weft_taskflow_dump_dot_profiled(tf, ex, full), WEFT_ESYS);
        fclose(full);
        ASSERT_STATUS(weft_profiler_save(ex, "/dev/full"), WEFT_ESYS);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* observe.h: ntaskflows counts entries of taskflows; a count with no array
 * is refused (WEFT_EINVAL, naming the field), not taken as "no names". */
TEST(folded_options_with_a_count_and_no_taskflows_are_einval) {
    weft_executor *ex = make_profiled(1, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(4, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    FILE *out = tmpfile();
    ASSERT_NOT_NULL(out);
    weft_folded_options bad = {.taskflows = NULL, .ntaskflows = 2};
    ASSERT_STATUS(weft_profiler_write_folded(ex, &bad, out), WEFT_EINVAL);
    ASSERT_TRUE(strstr(weft_last_error_message(), "ntaskflows") != NULL);
    ASSERT_STATUS(weft_profiler_write_flame_svg(ex, &bad, out), WEFT_EINVAL);
    const weft_taskflow *named[] = {tf};
    ASSERT_OK(weft_profiler_write_folded(ex, &(weft_folded_options){.taskflows = named, .ntaskflows = 1}, out));
    fclose(out);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* WEFT_PROFILE naming a place that cannot be written: the destroy logs an
 * error naming it, and neither crashes nor hangs. */
static atomic_int errors_logged;
static char last_error[512];
static void keep_error(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_ERROR) {
        atomic_fetch_add(&errors_logged, 1);
        snprintf(last_error, sizeof last_error, "%s", message);
    }
}

TEST(weft_profile_to_an_unwritable_path_logs_an_error_at_destroy) {
    setenv("WEFT_PROFILE", "/nonexistent-dir/run.json", 1);
    weft_log_set_callback(keep_error, NULL);
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &err);
    ASSERT_NOT_NULL(ex);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(10, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    weft_executor_destroy(ex);
    ASSERT_EQ(atomic_load(&errors_logged), 1);
    ASSERT_NOT_NULL(strstr(last_error, "/nonexistent-dir/run.json"));
    weft_log_set_callback(NULL, NULL);
    unsetenv("WEFT_PROFILE");
    ASSERT_OK(weft_taskflow_destroy(tf));
}

/* WEFT_PROFILE with each ending writes that format at destroy (each in a
 * process of its own: a second executor of a process writes NAME.1.ext). */
TEST(weft_profile_writes_each_format_by_its_ending) {
    const char *ends[] = {".json", ".html", ".HTM", ".svg", ".folded", ".trace"};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        char path[64];
        temp_path(path, sizeof path, ends[i]);
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            setenv("WEFT_PROFILE", path, 1);
            weft_status err;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &err);
            atomic_int count = 0;
            weft_taskflow *tf = make_chains(20, 2, &count, true);
            weft_status st = weft_run_and_wait(ex, tf);
            weft_executor_destroy(ex);
            (void)weft_taskflow_destroy(tf);
            _exit(st == WEFT_OK ? 0 : 1);
        }
        int status = wait_child(pid, 10, "child hung");
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        char *text = read_file(path);
        const char *want = i == 0 || i == 5 ? "traceEvents" : i <= 2 ? "</html>" : i == 3 ? "</svg>" : "t19";
        if (!strstr(text, want)) TEST_FAIL_("WEFT_PROFILE=%s lacks %s", path, want);
        free(text);
        unlink(path);
    }
}

/* ---- WEFT_LOG ---- */

static atomic_int warns_about_log;
static void count_log_warning(void *user, weft_log_level level, const char *message) {
    (void)user;
    if (level == WEFT_LOG_WARN && strstr(message, "WEFT_LOG")) atomic_fetch_add(&warns_about_log, 1);
}

TEST(a_bad_weft_log_value_is_warned_about_once_and_means_warn) {
    const char *bad[] = {"verbose", "", "2", "warning ", "DEBUG"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            setenv("WEFT_LOG", bad[i], 1);
            weft_log_set_callback(count_log_warning, NULL);
            weft_log_level lv = weft_log_get_level();
            weft_status err;
            weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &err);
            weft_executor_destroy(ex);
            ex = weft_executor_create(&(weft_executor_config){.workers = 1}, &err);
            weft_executor_destroy(ex);
            bool upper_ok = strcmp(bad[i], "DEBUG") == 0 ? lv == WEFT_LOG_DEBUG : lv == WEFT_LOG_WARN;
            int warned = atomic_load(&warns_about_log);
            bool warn_ok = strcmp(bad[i], "DEBUG") == 0 ? warned == 0 : warned == 1;
            if (!upper_ok || !warn_ok) fprintf(stderr, "WEFT_LOG='%s': level %d, %d warnings\n", bad[i], lv, warned);
            _exit(upper_ok && warn_ok ? 0 : 1);
        }
        int status = wait_child(pid, 10, "child hung");
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) TEST_FAIL_("WEFT_LOG='%s' misbehaved", bad[i]);
    }
}

/* ---- live statistics: two publishers of one path ---- */

/* Two executors (or two runs of one program with the same WEFT_STATS) given
 * the same path: the second's start truncated the first's mapped file, so the
 * first's refresh thread wrote past the file's end and died of SIGBUS (as
 * soon as its block spanned more pages than the second's; in the window
 * between the truncation and the resize, for any sizes). */
TEST(a_second_publisher_of_the_same_path_never_crashes_the_first) {
    char path[64];
    temp_path(path, sizeof path, ".stats");
    weft_status err;
    weft_executor *a = weft_executor_create(&(weft_executor_config){.workers = 70}, &err);
    ASSERT_NOT_NULL(a);
    weft_executor *b = weft_executor_create(&(weft_executor_config){.workers = 1}, &err);
    ASSERT_NOT_NULL(b);
    ASSERT_OK(weft_stats_start(a, &(weft_stats_config){.path = path, .interval_ms = 1}));
    ASSERT_OK(weft_stats_start(b, &(weft_stats_config){.path = path, .interval_ms = 1}));
    sleep_us(50000); /* a refreshes its block some 50 times */
    /* The path holds the second publisher's block. */
    FILE *f = fopen(path, "rb");
    ASSERT_NOT_NULL(f);
    uint64_t head[WEFT_STATS_HEADER_WORDS];
    ASSERT_EQ(fread(head, sizeof head, 1, f), 1);
    fclose(f);
    ASSERT_EQ(head[WEFT_STATS_H_MAGIC], WEFT_STATS_MAGIC);
    ASSERT_EQ(head[WEFT_STATS_H_WORKERS], 1);
    /* The first one stopping leaves the second's file alone. */
    ASSERT_OK(weft_stats_stop(a));
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_OK(weft_stats_stop(b));
    ASSERT_NE(stat(path, &st), 0);
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}
