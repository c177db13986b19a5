/* The profiler and its exports: Chrome trace JSON, HTML report, profiled DOT. */
#define _GNU_SOURCE
#include "obs_util.h"

static void save_or_fail(weft_executor *ex, const char *path) {
    ASSERT_OK(weft_profiler_save(ex, path));
}

/* A python3 check of the trace: valid JSON, exactly one complete task event per
 * (run, index), `expect` of them, tids within the executor's range and the
 * worker count, the pid this process's. */
static const char *const CHECK_TRACE =
    "import json,sys,collections\n"
    "d=json.load(open(sys.argv[1]))\n"
    "ev=[e for e in d['traceEvents'] if e.get('cat')=='task']\n"
    "assert all(e['ph']=='X' and e['dur']>=0 and e['ts']>=0 for e in ev)\n"
    "c=collections.Counter((e['args']['run'],e['args']['index']) for e in ev)\n"
    "assert len(ev)==int(sys.argv[2]), (len(ev), sys.argv[2])\n"
    "assert all(v==1 for v in c.values()), 'duplicate event'\n"
    /* Tracks: this executor's range of tids, in this process. */
    "assert all(0<=e['tid']%10000<int(sys.argv[3]) for e in ev)\n"
    "assert all(e['pid']==int(sys.argv[5]) for e in d['traceEvents'])\n"
    "assert len({e['args']['run'] for e in ev})==int(sys.argv[4])\n"
    "names={m['args']['name'] for m in d['traceEvents'] if m.get('name')=='thread_name'}\n"
    "assert len(names)==int(sys.argv[3])\n"
    /* On one track, spans (tasks and parks) nest or follow each other: no two
     * overlap in part, which viewers would draw as a false nesting. */
    "by=collections.defaultdict(list)\n"
    "for e in d['traceEvents']:\n"
    "  if e.get('ph')=='X': by[e['tid']].append(e)\n"
    "for es in by.values():\n"
    "  es.sort(key=lambda e:(e['ts'],-e['dur']))\n"
    "  st=[]\n"
    "  for e in es:\n"
    "    while st and st[-1]<=e['ts']+1e-6: st.pop()\n"
    "    end=e['ts']+e['dur']\n"
    "    assert not st or end<=st[-1]+1e-6, ('partial overlap', e)\n"
    "    st.append(end)\n";

/* Saves ex's trace and runs CHECK_TRACE on it: `tasks` task events over
 * `workers` tracks from `runs` runs. */
static void check_trace(weft_executor *ex, int tasks, unsigned workers, int runs) {
    char json[64], script[64], cmd[512];
    temp_path(json, sizeof json, ".json");
    temp_path(script, sizeof script, ".py");
    save_or_fail(ex, json);
    FILE *f = fopen(script, "w");
    ASSERT_NOT_NULL(f);
    fputs(CHECK_TRACE, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "python3 %s %s %d %u %d %d", script, json, tasks, workers, runs, (int)getpid());
    ASSERT_EQ(shell(cmd), 0);
    unlink(json);
    unlink(script);
}

TEST(trace_json_parses_and_holds_one_complete_event_per_task_run) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(4, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(500, 8, &count, true);
    for (int k = 0; k < 3; k++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(spans, 1500);
    ASSERT_EQ(dropped, 0);
    check_trace(ex, 1500, 4, 3);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(a_trace_started_while_workers_sleep_keeps_parks_off_the_tasks) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_executor(2);
    sleep_us(20000); /* the workers park before the profiler starts */
    ASSERT_OK(weft_profiler_start(ex));
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(400, 2, &count, false);
    for (int k = 0; k < 2; k++) {
        ASSERT_OK(weft_run_and_wait(ex, tf));
        sleep_us(5000);
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    check_trace(ex, 800, 2, 2);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(profiler_drops_spans_past_the_limit_and_counts_them) {
    weft_executor *ex = make_profiled(1, 100);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(1000, 1, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_LE(spans, 100);
    ASSERT_GE(spans, 90); /* a few slots may hold park / steal events */
    ASSERT_EQ(spans + dropped, 1000);
    ASSERT_EQ(atomic_load(&count), 1000);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* The cap of the config holds for a profiler started by hand later (the
 * usual way), not only for one on from the start: it was ignored, and the
 * default 2^20 spans per worker applied. */
TEST(profile_max_spans_holds_for_a_profiler_started_later) {
    weft_status err;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 1, .profile_max_spans = 100}, &err);
    ASSERT_NOT_NULL(ex);
    ASSERT_OK(weft_profiler_start(ex));
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(1000, 1, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    ASSERT_OK(weft_profiler_stop(ex));
    uint64_t spans, dropped;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_LE(spans, 100);
    ASSERT_EQ(spans + dropped, 1000);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

TEST(profiler_start_clears_spans_and_stop_keeps_them) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(64, 4, &count, false);
    uint64_t spans;
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
    ASSERT_EQ(spans, 0);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
    ASSERT_EQ(spans, 64);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
    ASSERT_EQ(spans, 0);
    ASSERT_OK(weft_profiler_stop(ex));
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* Profiles a small named graph and writes the HTML report to `path`. */
static void write_report(const char *path, size_t tasks) {
    weft_executor *ex = make_profiled(2, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(tasks, 4, &count, tasks <= 1000);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    save_or_fail(ex, path);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* The text of the HTML report of a run of `tasks` tasks (caller frees). */
static char *report_text(size_t tasks) {
    char path[64];
    temp_path(path, sizeof path, ".html");
    write_report(path, tasks);
    char *s = read_file(path);
    unlink(path);
    return s;
}

TEST(html_report_is_self_contained_and_holds_the_svg_timeline) {
    char *s = report_text(40);
    ASSERT_NOT_NULL(strstr(s, "<svg id=\"timeline\""));
    ASSERT_NOT_NULL(strstr(s, "<svg id=\"histogram\""));
    ASSERT_NOT_NULL(strstr(s, "Slowest tasks"));
    ASSERT_NOT_NULL(strstr(s, "Utilisation"));
    ASSERT_NOT_NULL(strstr(s, "<title>t0 (run"));
    ASSERT_NOT_NULL(strstr(s, "</html>"));
    ASSERT_NULL(strstr(s, "<script"));
    ASSERT_NULL(strstr(s, "src="));
    ASSERT_NULL(strstr(s, "href="));
    free(s);
}

TEST(html_report_of_many_spans_draws_occupancy_per_pixel) {
    char *s = report_text(30000);
    ASSERT_NOT_NULL(strstr(s, "<svg id=\"timeline\""));
    ASSERT_NOT_NULL(strstr(s, "each pixel column"));
    ASSERT_LT(strlen(s), 2000000);
    free(s);
}

TEST(html_report_renders_in_headless_chromium) {
    const char *exe = have_program("chromium") ? "chromium" : have_program("chromium-browser") ? "chromium-browser" : NULL;
    if (!exe) SKIP("chromium not installed");
    char path[64], dom[64], cmd[512];
    temp_path(path, sizeof path, ".html");
    temp_path(dom, sizeof dom, ".dom");
    write_report(path, 200);
    /* A private profile directory, and a few tries: a browser start can fail for
     * reasons of its own on a loaded machine (seen once under TSan's load). */
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && timeout 90 %s --headless --no-sandbox --disable-gpu --user-data-dir=$d "
             "--dump-dom file://%s > %s 2>/dev/null; rc=$?; rm -rf $d; exit $rc", exe, path, dom);
    int rc = -1;
    for (int attempt = 0; attempt < 3 && rc != 0; attempt++) rc = shell(cmd);
    ASSERT_EQ(rc, 0);
    char *s = read_file(dom);
    ASSERT_NOT_NULL(strstr(s, "id=\"timeline\""));
    ASSERT_NOT_NULL(strstr(s, "worker 1"));
    free(s);
    unlink(path);
    unlink(dom);
}

TEST(profiled_dot_annotates_times_and_parses_with_graphviz) {
    weft_executor *ex = make_profiled(2, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(12, 3, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    /* A task that never ran: drawn grey.  (A placeholder that runs is a
     * task that ran, with a span: observe.h.) */
    weft_task never = weft_placeholder(tf);
    ASSERT_FALSE(weft_task_is_null(never));
    char path[64], cmd[512];
    temp_path(path, sizeof path, ".dot");
    write_profiled_dot(tf, ex, path);
    char *s = read_file(path);
    ASSERT_NOT_NULL(strstr(s, "digraph \"chains\""));
    ASSERT_NOT_NULL(strstr(s, "\"t0\" + \"\\n2 runs, "));
    ASSERT_NOT_NULL(strstr(s, "n0 -> n3;"));
    ASSERT_NOT_NULL(strstr(s, "\"#12\", style=\"filled,dashed\""));
    free(s);
    if (have_program("dot")) {
        snprintf(cmd, sizeof cmd, "dot -Tsvg %s -o /dev/null", path);
        ASSERT_EQ(shell(cmd), 0);
    }
    unlink(path);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
    if (!have_program("dot")) SKIP("graphviz (dot) not installed: text checked, not parsed");
}

TEST(weft_profile_env_profiles_an_unchanged_program_at_destroy) {
    char path[64];
    temp_path(path, sizeof path, ".json");
    unlink(path);
    setenv("WEFT_PROFILE", path, 1);
    weft_executor *ex = make_executor(2);
    unsetenv("WEFT_PROFILE");
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(30, 2, &count, false);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_taskflow_destroy(tf)); /* before the executor: names were copied */
    weft_executor_destroy(ex);
    char *s = read_file(path);
    ASSERT_EQ(strncmp(s, "{\"traceEvents\":[", 16), 0);
    ASSERT_NOT_NULL(strstr(s, "\"task_spans\":30,"));
    free(s);
    unlink(path);
}

/* An executor that never profiled writes an empty but complete report. */
TEST(html_report_of_an_executor_that_never_profiled_is_empty_and_complete) {
    weft_executor *ex = make_executor(2);
    char path[64];
    temp_path(path, sizeof path, ".html");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_profiler_write_html(ex, f));
    ASSERT_EQ(fclose(f), 0);
    char *s = read_file(path);
    unlink(path);
    ASSERT_NOT_NULL(strstr(s, "<svg id=\"timeline\""));
    ASSERT_NOT_NULL(strstr(s, "</html>"));
    free(s);
    uint64_t spans = 1, dropped = 1;
    ASSERT_OK(weft_profiler_count(ex, &spans, &dropped));
    ASSERT_EQ(spans, 0);
    ASSERT_EQ(dropped, 0);
    weft_executor_destroy(ex);
}

/* Starting the profiler again between runs resets the span buffers while idle
 * workers may still be recording steal and park spans (they do at any time, not
 * only during runs): start stops them first.  Many short runs, each followed at
 * once by a start, so workers are going to sleep while it clears. */
static int nothing_task(weft_ctx *ctx, void *arg) { return 0; }

TEST(profiler_start_between_runs_never_races_idle_workers) {
    weft_executor *ex = make_executor(3);
    weft_taskflow *tf = make_taskflow("restart");
    for (int i = 0; i < 4; i++) must_emplace(tf, nothing_task, NULL);
    int rounds = (int)test_scale(2000);
    for (int r = 0; r < rounds; r++) {
        ASSERT_OK(weft_profiler_start(ex));
        ASSERT_OK(weft_run_and_wait(ex, tf));
    }
    ASSERT_OK(weft_executor_wait_all(ex));
    uint64_t spans = 0;
    ASSERT_OK(weft_profiler_count(ex, &spans, NULL));
    ASSERT_EQ(spans, 4); /* the last run's tasks only: every start cleared */
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

static uint64_t tasks_counted(weft_executor *ex) {
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    return m.total.tasks;
}

/* A profiled section costs nothing after it: the metrics weft_profiler_start
 * switched on go off at stop (found by weft-bench: a pipeline run after a
 * profiled benchmark on the same executor took 10x as long); metrics the user
 * enabled stay on. */
TEST(profiler_stop_turns_off_the_metrics_its_start_turned_on) {
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(64, 4, &count, false);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    uint64_t after_profile = tasks_counted(ex);
    ASSERT_EQ(after_profile, 64u); /* readable after the stop */
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(tasks_counted(ex), after_profile); /* nothing counted any more */

    ASSERT_OK(weft_metrics_enable(ex, true)); /* the user's own: kept through a profile */
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_profiler_stop(ex));
    uint64_t before = tasks_counted(ex);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_EQ(tasks_counted(ex), before + 64);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
