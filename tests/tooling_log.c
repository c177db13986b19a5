/* Structured logging: weft_log_entry through a callback, the JSON-lines sink
 * (src/core/log.c, src/observe/log_json.c). */
#define _GNU_SOURCE
#include "obs_util.h"
#include "core/log.h"

static int log_from_task(weft_ctx *ctx, void *arg) {
    (void)ctx;
    weft__log(WEFT_LOG_WARN, "%s", (const char *)arg);
    return 0;
}

struct seen {
    int calls;
    weft_log_entry last;
    char message[128], task[64];
};

static void record(void *user, const weft_log_entry *e) {
    struct seen *s = user;
    s->calls++;
    s->last = *e;
    snprintf(s->message, sizeof s->message, "%s", e->message);
    snprintf(s->task, sizeof s->task, "%s", e->task ? e->task : "(null)");
}

/* Runs a one-task taskflow named `name` whose task logs `msg`; its run id. */
static uint64_t run_logger(weft_executor *ex, const char *name, const char *msg) {
    weft_taskflow *tf = make_taskflow("logging");
    ASSERT_OK(weft_task_set_name(must_emplace(tf, log_from_task, (void *)msg), name));
    weft_future *f = NULL;
    ASSERT_OK(weft_run(ex, tf, &f));
    ASSERT_OK(weft_future_wait(f));
    uint64_t id = weft_future_id(f);
    weft_future_destroy(f);
    weft_taskflow_destroy(tf);
    return id;
}

TEST(entry_callback_gets_the_worker_task_and_run) {
    struct seen s = { 0 };
    weft_log_set_level(WEFT_LOG_WARN);
    weft_log_set_entry_callback(record, &s);
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .metrics = true }, &err);
    ASSERT_NOT_NULL(ex);
    uint64_t run = run_logger(ex, "loader", "hello");
    ASSERT_EQ(s.calls, 1);
    ASSERT_STREQ(s.message, "hello");
    ASSERT_EQ(s.last.level, WEFT_LOG_WARN);
    ASSERT_TRUE(s.last.executor == ex);
    ASSERT_TRUE(s.last.worker == 0 || s.last.worker == 1);
    ASSERT_GT(s.last.executor_number, 0u);
    ASSERT_STREQ(s.task, "loader");
    ASSERT_EQ(s.last.run, run);
    ASSERT_GT(s.last.time_ns, (uint64_t)1600000000 * 1000000000u); /* wall clock, after 2020 */
    /* From a thread that is not a worker: no context. */
    weft__log(WEFT_LOG_ERROR, "outside");
    ASSERT_EQ(s.calls, 2);
    ASSERT_TRUE(s.last.executor == NULL && s.last.worker == -1 && s.last.task == NULL && s.last.run == 0);
    /* Levels as before: a debug entry is dropped at warn. */
    weft__log(WEFT_LOG_DEBUG, "dropped");
    ASSERT_EQ(s.calls, 2);
    /* A message callback replaces the entry callback. */
    weft_log_set_callback(NULL, NULL);
    weft__log(WEFT_LOG_ERROR, "to stderr");
    ASSERT_EQ(s.calls, 2);
    weft_executor_destroy(ex);
}

TEST(entry_without_metrics_names_the_worker_but_not_the_task) {
    struct seen s = { 0 };
    weft_log_set_entry_callback(record, &s);
    weft_executor *ex = make_executor(1);
    (void)run_logger(ex, "quiet", "no frames");
    ASSERT_EQ(s.calls, 1);
    ASSERT_EQ(s.last.worker, 0);
    ASSERT_TRUE(s.last.executor == ex);
    ASSERT_STREQ(s.task, "(null)");
    ASSERT_EQ(s.last.run, 0u);
    weft_log_set_callback(NULL, NULL);
    weft_executor_destroy(ex);
}

TEST(json_sink_writes_one_valid_object_per_entry) {
    char path[64];
    temp_path(path, sizeof path, ".jsonl");
    FILE *f = fopen(path, "w");
    ASSERT_NOT_NULL(f);
    ASSERT_OK(weft_log_set_json(f));
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2, .metrics = true }, &err);
    ASSERT_NOT_NULL(ex);
    uint64_t run = run_logger(ex, "saver \"1\"", "quote \" backslash \\ newline \n bad \xff byte");
    weft__log(WEFT_LOG_ERROR, "from main");
    ASSERT_OK(weft_log_set_json(NULL));
    weft_executor_destroy(ex);
    fclose(f);
    char *text = read_file(path);
    char *second = strchr(text, '\n');
    ASSERT_NOT_NULL(second);
    *second++ = 0;
    ASSERT_EQ(strncmp(text, "{\"time\":\"20", 11), 0);
    ASSERT_NOT_NULL(strstr(text, "\"level\":\"warn\""));
    ASSERT_NOT_NULL(strstr(text, "\"task\":\"saver \\\"1\\\"\""));
    char want[64];
    snprintf(want, sizeof want, "\"run\":%llu,", (unsigned long long)run);
    ASSERT_NOT_NULL(strstr(text, want));
    ASSERT_NOT_NULL(strstr(text, "\"worker\":"));
    ASSERT_NOT_NULL(strstr(text, "quote \\\" backslash \\\\ newline \\u000a bad \xef\xbf\xbd byte"));
    ASSERT_EQ(strncmp(second, "{\"time\":\"", 9), 0);
    ASSERT_NULL(strstr(second, "\"worker\"")); /* not logged on a worker */
    ASSERT_NOT_NULL(strstr(second, "\"level\":\"error\",\"message\":\"from main\"}\n"));
    free(text);
    if (have_program("python3")) { /* each line is one JSON object */
        char cmd[256];
        snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' %s", path);
        ASSERT_EQ(shell(cmd), 0);
    }
    unlink(path);
}
