/* Flame graphs: weft_profiler_write_folded (src/observe/flame.c). */
#define _GNU_SOURCE
#include "obs_util.h"

typedef weft_status (*writer_fn)(const weft_executor *, const weft_folded_options *, FILE *);

/* What `write` gives for ex, as a string (the caller frees it), through a
 * temporary file; its path in `keep` (which the caller unlinks) if not NULL. */
static char *export_text(const weft_executor *ex, const weft_folded_options *opt, writer_fn write, char *keep) {
    char path[64];
    temp_path(path, sizeof path, ".out");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(write(ex, opt, f));
    fclose(f);
    char *s = read_file(path);
    if (keep) strcpy(keep, path);
    else unlink(path);
    return s;
}

/* The folded output of ex as a string (the caller frees it). */
static char *folded(const weft_executor *ex, const weft_folded_options *opt) {
    return export_text(ex, opt, weft_profiler_write_folded, NULL);
}

/* Sums the weights of the lines; checks each line is "stack <integer>" with
 * no empty frame, and counts the lines whose stack ends with `leaf` (NULL: none). */
static uint64_t sum_weights(const char *text, const char *leaf, int *leaf_lines) {
    uint64_t sum = 0;
    int n = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        ASSERT_NOT_NULL(eol);
        const char *sp = eol;
        while (sp > p && sp[-1] != ' ') sp--;
        ASSERT_GT(sp - p, 1);
        char *end;
        unsigned long long w = strtoull(sp, &end, 10);
        ASSERT_TRUE(end == eol && w > 0);
        sum += w;
        size_t stack_len = (size_t)(sp - 1 - p);
        ASSERT_TRUE(memmem(p, stack_len, ";;", 2) == NULL && p[0] != ';' && p[stack_len - 1] != ';');
        size_t ll = leaf ? strlen(leaf) : 0;
        if (leaf && stack_len >= ll + 1 && p[stack_len - ll - 1] == ';' && memcmp(p + stack_len - ll, leaf, ll) == 0)
            n++;
        p = eol + 1;
    }
    if (leaf_lines) *leaf_lines = n;
    return sum;
}

/* Destroys two taskflows (b may be NULL) and the executor. */
static void tear_down(weft_executor *ex, weft_taskflow *a, weft_taskflow *b) {
    ASSERT_OK(weft_taskflow_destroy(a));
    ASSERT_OK(weft_taskflow_destroy(b));
    weft_executor_destroy(ex);
}

static int spin_20us(weft_ctx *ctx, void *arg) {
    uint64_t t = now_ns();
    while (now_ns() - t < 20000) {
    }
    return 0;
}

TEST(folded_weights_add_up_to_the_busy_time) {
    weft_executor *ex = make_profiled(4, 0);
    weft_taskflow *tf = make_taskflow("work");
    weft_task prev[8] = { { 0 } };
    for (int i = 0; i < 200; i++) {
        weft_task t = must_emplace(tf, spin_20us, NULL);
        ASSERT_OK(weft_task_set_name(t, i % 2 ? "odd" : "even"));
        if (!weft_task_is_null(prev[i % 8])) ASSERT_OK(weft_precede(prev[i % 8], t));
        prev[i % 8] = t;
    }
    for (int r = 0; r < 3; r++) ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    char *text = folded(ex, NULL);
    int odd_lines;
    uint64_t sum = sum_weights(text, "odd", &odd_lines);
    /* Every line is one distinct stack: the 300 "odd" runs merge into one. */
    ASSERT_EQ(odd_lines, 1);
    ASSERT_TRUE(strstr(text, "executor ") == text);
    ASSERT_NOT_NULL(strstr(text, ";taskflow 1;even "));
    /* The weights are the spans' times, which are the busy time: equal up to
     * rounding (each span's time is converted to ns on its own). */
    double diff = (double)sum - (double)m.total.busy_ns;
    if (diff < 0) diff = -diff;
    if (diff > 0.001 * (double)m.total.busy_ns + 1000.0)
        TEST_FAIL_("folded total %" PRIu64 " ns, busy time %" PRIu64 " ns", sum, m.total.busy_ns);
    ASSERT_GE(sum, 600u * 20000u); /* 600 tasks of at least 20 us */
    free(text);
    tear_down(ex, tf, NULL);
}

static int run_inner(weft_ctx *ctx, void *arg) { return weft_run_and_wait(weft_ctx_executor(ctx), arg) == WEFT_OK ? 0 : 1; }

TEST(folded_stacks_put_nested_runs_on_the_task_that_waited) {
    weft_executor *ex = make_profiled(1, 0); /* one worker: the waiter runs the inner tasks */
    weft_taskflow *inner = make_taskflow("inner");
    atomic_int count = 0;
    for (int i = 0; i < 3; i++) ASSERT_OK(weft_task_set_name(must_emplace(inner, bump, &count), "leaf"));
    weft_taskflow *outer = make_taskflow("outer");
    ASSERT_OK(weft_task_set_name(must_emplace(outer, run_inner, inner), "waiter"));
    ASSERT_OK(weft_run_and_wait(ex, outer));
    ASSERT_EQ(atomic_load(&count), 3);
    const weft_taskflow *names[] = { outer, inner };
    char *text = folded(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 2 });
    ASSERT_NOT_NULL(strstr(text, ";taskflow outer;waiter;taskflow inner;leaf "));
    ASSERT_NOT_NULL(strstr(text, ";taskflow outer;waiter "));
    /* The waiter's line holds its own time only: the lines still add up. */
    weft_metrics m;
    ASSERT_OK(weft_executor_metrics(ex, &m, NULL, 0));
    double sum = (double)sum_weights(text, NULL, NULL), busy = (double)m.total.busy_ns;
    if (sum > busy * 1.001 + 1000.0 || sum < busy * 0.999 - 1000.0)
        TEST_FAIL_("folded total %.0f ns, busy time %.0f ns", sum, busy);
    /* Without names: numbered in order of appearance, outer first. */
    free(text);
    text = folded(ex, NULL);
    ASSERT_NOT_NULL(strstr(text, ";taskflow 1;waiter;taskflow 2;leaf "));
    free(text);
    tear_down(ex, outer, inner);
}

TEST(folded_stacks_show_a_module_under_its_taskflow) {
    weft_executor *ex = make_profiled(2, 0);
    atomic_int count = 0;
    weft_taskflow *body = make_taskflow("body");
    ASSERT_OK(weft_task_set_name(must_emplace(body, bump, &count), "in_body"));
    weft_taskflow *main_tf = make_taskflow("main");
    weft_task first = must_emplace(main_tf, bump, &count);
    ASSERT_OK(weft_task_set_name(first, "first"));
    weft_task mod = weft_emplace_module(main_tf, body);
    ASSERT_FALSE(weft_task_is_null(mod));
    ASSERT_OK(weft_precede(first, mod));
    ASSERT_OK(weft_run_and_wait(ex, main_tf));
    ASSERT_EQ(atomic_load(&count), 2);
    const weft_taskflow *names[] = { main_tf, body };
    char *text = folded(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 2, .per_worker = true });
    ASSERT_NOT_NULL(strstr(text, ";taskflow main;subflow/module body;in_body "));
    ASSERT_NOT_NULL(strstr(text, ";worker "));
    free(text);
    tear_down(ex, main_tf, body);
}

TEST(folded_frames_never_hold_a_separator_or_a_line_break) {
    weft_executor *ex = make_profiled(1, 0);
    weft_taskflow *tf = make_taskflow("t;f");
    atomic_int count = 0;
    ASSERT_OK(weft_task_set_name(must_emplace(tf, bump, &count), "a;b\nc d"));
    ASSERT_OK(weft_task_set_name(must_emplace(tf, bump, &count), "bad\xff"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    const weft_taskflow *names[] = { tf };
    char *text = folded(ex, &(weft_folded_options){ .taskflows = names, .ntaskflows = 1 });
    ASSERT_NOT_NULL(strstr(text, ";taskflow t?f;a?b?c d "));
    ASSERT_NOT_NULL(strstr(text, ";bad\xef\xbf\xbd ")); /* U+FFFD */
    sum_weights(text, NULL, NULL);                       /* every line well formed */
    free(text);
    tear_down(ex, tf, NULL);
}

TEST(folded_output_of_bad_arguments_and_of_no_profile) {
    weft_executor *ex = make_executor(1);
    ASSERT_STATUS(weft_profiler_write_folded(NULL, NULL, stdout), WEFT_EINVAL);
    ASSERT_STATUS(weft_profiler_write_folded(ex, NULL, NULL), WEFT_EINVAL);
    char *text = folded(ex, NULL); /* never profiled: nothing */
    ASSERT_STREQ(text, "");
    free(text);
    weft_executor_destroy(ex);
}

/* A profile that ran and recorded nothing (started, stopped, no task): both
 * writers give an empty graph.  They used to qsort(NULL, 0, ...), which UBSan
 * aborts on (the sanitizer build of any program with WEFT_PROFILE=x.svg whose
 * executor ran nothing). */
TEST(folded_and_svg_of_a_profile_without_spans_are_empty_not_undefined) {
    weft_executor *ex = make_executor(2);
    ASSERT_OK(weft_profiler_start(ex));
    ASSERT_OK(weft_profiler_stop(ex));
    char *text = folded(ex, NULL);
    ASSERT_STREQ(text, "");
    free(text);
    text = export_text(ex, NULL, weft_profiler_write_flame_svg, NULL);
    ASSERT_TRUE(strstr(text, "<svg") != NULL);
    free(text);
    weft_executor_destroy(ex);
}

/* Long enough for its frame to be drawn whatever else the run's busy time
 * holds (frames under 0.1 px are left out: a 64-task run under ASan on a
 * loaded machine once left a plain task's frame below that). */
static int busy_2ms(weft_ctx *ctx, void *arg) {
    (void)ctx;
    sleep_us(2000);
    atomic_fetch_add((atomic_int *)arg, 1);
    return 0;
}

TEST(flame_svg_is_well_formed_and_its_base_spans_the_busy_time) {
    weft_executor *ex = make_profiled(2, 0);
    atomic_int count = 0;
    weft_taskflow *tf = make_chains(64, 4, &count, true);
    ASSERT_OK(weft_task_set_name(must_emplace(tf, busy_2ms, &count), "<&\"odd\">"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    char path[64];
    char *svg = export_text(ex, NULL, weft_profiler_write_flame_svg, path);
    ASSERT_TRUE(strncmp(svg, "<svg ", 5) == 0);
    ASSERT_NOT_NULL(strstr(svg, "</svg>\n"));
    /* The executor's frame is the base: the whole width. */
    const char *base = strstr(svg, "<title>executor 1 (");
    ASSERT_NOT_NULL(base);
    ASSERT_TRUE(strstr(base, "width=\"1200.00\"") == strstr(base, "width="));
    ASSERT_NOT_NULL(strstr(svg, "&lt;&amp;&quot;odd&quot;&gt;"));
    ASSERT_NULL(strstr(svg, "<&"));
    free(svg);
    if (have_program("python3")) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "python3 -c \"import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])\" %s", path);
        ASSERT_EQ(shell(cmd), 0);
    }
    unlink(path);
    tear_down(ex, tf, NULL);
}

/* weft_profiler_save (and so WEFT_PROFILE) picks the flame formats by ending. */
TEST(profiler_save_writes_folded_stacks_and_a_flame_svg_by_the_path_ending) {
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("saved");
    for (int i = 0; i < 20; i++) ASSERT_OK(weft_task_set_name(must_emplace(tf, spin_20us, NULL), "leaf"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    char path[64];
    temp_path(path, sizeof path, ".folded");
    ASSERT_OK(weft_profiler_save(ex, path));
    char *text = read_file(path);
    int lines;
    ASSERT_GE(sum_weights(text, "leaf", &lines), 20u * 20000u);
    ASSERT_EQ(lines, 1);
    free(text);
    unlink(path);
    temp_path(path, sizeof path, ".svg");
    ASSERT_OK(weft_profiler_save(ex, path));
    text = read_file(path);
    ASSERT_NOT_NULL(strstr(text, "<svg"));
    ASSERT_NOT_NULL(strstr(text, "leaf"));
    free(text);
    unlink(path);
    tear_down(ex, tf, NULL);
}

/* The HTML report carries the flame graph inline (issue 23: "a self-contained
 * SVG flame graph in the HTML report"). */
TEST(html_report_embeds_the_flame_graph) {
    weft_executor *ex = make_profiled(2, 0);
    weft_taskflow *tf = make_taskflow("report");
    for (int i = 0; i < 10; i++) ASSERT_OK(weft_task_set_name(must_emplace(tf, spin_20us, NULL), "flamed"));
    ASSERT_OK(weft_run_and_wait(ex, tf));
    ASSERT_OK(weft_executor_wait_all(ex));
    char path[64];
    temp_path(path, sizeof path, ".html");
    ASSERT_OK(weft_profiler_save(ex, path));
    char *text = read_file(path);
    const char *h = strstr(text, "<h2>Flame graph</h2>");
    ASSERT_NOT_NULL(h);
    ASSERT_NOT_NULL(strstr(h, "<svg"));
    ASSERT_NOT_NULL(strstr(h, "flamed"));
    ASSERT_NOT_NULL(strstr(h, "</body></html>"));
    free(text);
    unlink(path);
    tear_down(ex, tf, NULL);
}
