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

#endif
