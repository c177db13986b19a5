/* What the profiler writes stays usable (issue 15, item 10): the WEFT_PROFILE
 * file of an executor never destroyed is written at exit (or a warning says
 * why not), names that are not valid UTF-8 still give valid JSON, HTML and
 * DOT, and traces carry the process id and a range of tids per executor, so
 * that traces of several executors merge without collisions.  Files are
 * checked with python3 (skipped where it is missing). */
#define _GNU_SOURCE
#include "obs_util.h"

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

/* ---- the profile at exit ---- */

static int spin_until_exit(weft_ctx *ctx, void *arg) {
    (void)ctx;
    while (!atomic_load((atomic_int *)arg)) sleep_us(100);
    return 0;
}

/* The child's half, run by the tests below through this executable with
 * WEFT_OBS_EXIT_CHILD set; a plain run of it does nothing.  (Not a TEST(...)
 * line: ctest does not run it on its own.)  It creates an executor (profiled
 * through WEFT_PROFILE), runs 100 tasks and exits without destroying it:
 * idle ("idle") or with a task still running ("busy"). */
#define CHILD_TEST TEST
CHILD_TEST(obs_exit_child) {
    const char *mode = getenv("WEFT_OBS_EXIT_CHILD");
    if (!mode) return;
    weft_executor *ex = make_executor(2);
    atomic_int count = 0;
    static atomic_int never;
    weft_taskflow *tf = make_chains(100, 4, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    if (strcmp(mode, "busy") == 0) ASSERT_OK(weft_silent_async(ex, spin_until_exit, &never));
    exit(0); /* neither the executor nor the taskflow is destroyed */
}

/* Runs the child in `mode` with WEFT_PROFILE=json, its stderr into err. */
static void run_child(const char *mode, const char *json, const char *err) {
    char exe[512], cmd[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT_TRUE(n > 0);
    exe[n] = 0;
    /* The child leaks its executor on purpose: no leak report from ASan. */
    snprintf(cmd, sizeof cmd,
             "WEFT_PROFILE=%s WEFT_OBS_EXIT_CHILD=%s WEFT_LOG=warn ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" "
             "%s obs_exit_child 2>%s",
             json, mode, exe, err);
    ASSERT_EQ(shell(cmd), 0);
}

TEST(a_program_that_exits_without_destroying_its_executor_still_writes_its_profile) {
    if (!have_program("python3")) SKIP("python3 not installed");
    char json[64], err[64], args[256];
    temp_path(json, sizeof json, ".json");
    temp_path(err, sizeof err, ".txt");
    unlink(json);
    run_child("idle", json, err);
    ASSERT_TRUE(file_exists(json));
    snprintf(args, sizeof args, "%s", json);
    ASSERT_EQ(run_python("import json,sys\n"
                     "d=json.load(open(sys.argv[1],encoding='utf-8'))\n"
                     "ev=[e for e in d['traceEvents'] if e.get('cat')=='task']\n"
                     "assert len(ev)==100, len(ev)\n",
                     args),
              0);
    unlink(json);
    unlink(err);
}

TEST(exit_with_a_run_in_flight_warns_that_the_profile_is_not_written) {
    char json[64], err[64];
    temp_path(json, sizeof json, ".json");
    temp_path(err, sizeof err, ".txt");
    unlink(json);
    run_child("busy", json, err);
    ASSERT_FALSE(file_exists(json));
    char *text = read_file(err);
    if (!strstr(text, "weft: warn:") || !strstr(text, json))
        TEST_FAIL_("no warning naming the profile at exit; stderr was:\n%s", text);
    free(text);
    unlink(err);
}

/* ---- names that are not UTF-8 ---- */

TEST(names_that_are_not_utf8_still_give_valid_json_html_and_dot) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *ex = make_profiled(1, 0);
    weft_taskflow *tf = make_taskflow("bad\xff name");
    atomic_int count = 0;
    /* A stray continuation byte, a truncated sequence, an overlong '/', a
     * surrogate, a control character, a quote and a backslash. */
    static const char *const names[] = { "a\x80z", "b\xc3", "c\xc0\xaf", "d\xed\xa0\x80", "e\x01\x1f\x7f",
                                         "f\"\\<&>", "ok \xc3\xa9t\xc3\xa9" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        weft_task t = must_emplace(tf, bump, &count);
        ASSERT_OK(weft_task_set_name(t, names[i]));
    }
    ASSERT_OK(weft_run_and_wait(ex, tf));
    char json[64], html[64], dot[64], args[256];
    temp_path(json, sizeof json, ".json");
    temp_path(html, sizeof html, ".html");
    temp_path(dot, sizeof dot, ".dot");
    ASSERT_OK(weft_profiler_save(ex, json));
    ASSERT_OK(weft_profiler_save(ex, html));
    FILE *f = fopen(dot, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_taskflow_dump_dot_profiled(tf, ex, f));
    fclose(f);
    snprintf(args, sizeof args, "%s %s %s", json, html, dot);
    ASSERT_EQ(run_python("import json,sys\n"
                     /* Strict UTF-8 decoding of all three files. */
                     "t=[open(p,encoding='utf-8',errors='strict').read() for p in sys.argv[1:4]]\n"
                     "d=json.loads(t[0])\n"
                     "names={e['name'] for e in d['traceEvents'] if e.get('cat')=='task'}\n"
                     "assert len(names)==7, names\n"
                     "assert 'a\\ufffdz' in names and 'b\\ufffd' in names, names\n"
                     "assert 'e\\x01\\x1f\\x7f' in names and 'f\"\\\\<&>' in names, names\n"
                     "assert 'ok \\u00e9t\\u00e9' in names, names\n"
                     "assert all(c not in t[1] for c in '\\x01\\x1f')\n",
                     args),
              0);
    unlink(json), unlink(html), unlink(dot);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* ---- trace ids ---- */

TEST(traces_of_two_executors_merge_without_colliding_tracks) {
    if (!have_program("python3")) SKIP("python3 not installed");
    weft_executor *a = make_profiled(2, 0), *b = make_profiled(2, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(200, 4, &count, false);
    ASSERT_OK(weft_run_and_wait(a, tf));
    ASSERT_OK(weft_run_and_wait(b, tf));
    ASSERT_OK(weft_executor_wait_all(a));
    ASSERT_OK(weft_executor_wait_all(b));
    char ja[64], jb[64], args[256];
    temp_path(ja, sizeof ja, ".json");
    temp_path(jb, sizeof jb, ".json");
    ASSERT_OK(weft_profiler_save(a, ja));
    ASSERT_OK(weft_profiler_save(b, jb));
    snprintf(args, sizeof args, "%s %s %d", ja, jb, (int)getpid());
    ASSERT_EQ(run_python("import json,sys\n"
                     "tracks=[]\n"
                     "for p in sys.argv[1:3]:\n"
                     "  ev=json.load(open(p))['traceEvents']\n"
                     "  assert all(e['pid']==int(sys.argv[3]) for e in ev), 'pid is not the process id'\n"
                     "  x={(e['pid'],e['tid']) for e in ev if e.get('ph')=='X'}\n"
                     "  named={(e['pid'],e['tid']) for e in ev if e.get('name')=='thread_name'}\n"
                     "  assert x and x<=named, (x, named)\n"
                     "  tracks.append(named)\n"
                     "assert not (tracks[0] & tracks[1]), 'two executors share a track'\n",
                     args),
              0);
    unlink(ja), unlink(jb);
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(a);
    weft_executor_destroy(b);
}

/* A save that cannot write its file (a full disk: /dev/full) fails with
 * WEFT_ESYS and a message naming the path the caller gave, in each format:
 * it used to say "weft_profiler_write_*: writing to out failed". */
TEST(a_save_that_cannot_write_names_the_file) {
    if (access("/dev/full", W_OK) != 0) SKIP("no writable /dev/full");
    weft_executor *ex = make_profiled(1, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(2000, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    const char *formats[] = { ".json", ".html", ".folded", ".svg" };
    for (int i = 0; i < 4; i++) {
        /* /dev/full whatever the ending: a symlink with that ending. */
        char link[64];
        temp_path(link, sizeof link, formats[i]);
        unlink(link);
        ASSERT_EQ(symlink("/dev/full", link), 0);
        ASSERT_STATUS(weft_profiler_save(ex, link), WEFT_ESYS);
        const char *msg = weft_last_error_message();
        if (!strstr(msg, link)) TEST_FAIL_("the message '%s' does not name %s", msg, link);
        unlink(link);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}

/* The ending picks the format in any case: "RUN.HTML" is the HTML report, as a
 * file manager would open it (it was written as the JSON trace). */
TEST(a_save_picks_the_format_by_its_ending_in_any_case) {
    weft_executor *ex = make_profiled(1, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(100, 1, &count, true);
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    const char *endings[] = { ".HTML", ".Htm", ".SVG", ".json" };
    const char *starts[] = { "<!DOCTYPE html>", "<!DOCTYPE html>", "<svg", "{" };
    for (int i = 0; i < 4; i++) {
        char path[64];
        temp_path(path, sizeof path, endings[i]);
        ASSERT_OK(weft_profiler_save(ex, path));
        char *text = read_file(path);
        ASSERT_NOT_NULL(text);
        if (strncmp(text, starts[i], strlen(starts[i])) != 0)
            TEST_FAIL_("%s starts with '%.20s', want '%s'", endings[i], text, starts[i]);
        free(text);
        unlink(path);
    }
    ASSERT_OK(weft_taskflow_destroy(tf));
    weft_executor_destroy(ex);
}
