/* A tiny program built against an installed weft: a two-task graph whose second
 * task checks that the first ran before it, run on an executor of its own and on
 * the default executor.  Prints "consumer ok" and exits 0 on success. */
#include <weft.h>

#include <stdio.h>
#include <string.h>

static int first(weft_ctx *ctx, void *arg) {
    (void)ctx;
    *(int *)arg = 1;
    return 0;
}

static int second(weft_ctx *ctx, void *arg) {
    int *v = arg;
    (void)ctx;
    if (*v != 1) return 1; /* ran too early */
    *v = 2;
    return 0;
}

int main(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", WEFT_VERSION_MAJOR, WEFT_VERSION_MINOR,
             WEFT_VERSION_PATCH);
    if (strcmp(weft_version(), want) != 0 || weft_version_number() != WEFT_VERSION) {
        fprintf(stderr, "version mismatch: header %s, library %s\n", want, weft_version());
        return 1;
    }
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){ .workers = 2 }, &err);
    if (!ex) {
        fprintf(stderr, "weft_executor_create: %s\n", weft_strerror(err));
        return 1;
    }
    weft_taskflow *tf = weft_taskflow_create("consumer", &err);
    if (!tf) {
        fprintf(stderr, "weft_taskflow_create: %s\n", weft_strerror(err));
        weft_executor_destroy(ex);
        return 1;
    }
    int value = 0;
    weft_task a = weft_emplace(tf, first, &value);
    weft_task b = weft_emplace(tf, second, &value);
    weft_status st = WEFT_EINVAL;
    if (!weft_task_is_null(a) && !weft_task_is_null(b) && weft_precede(a, b) == WEFT_OK)
        st = weft_run_and_wait(ex, tf);
    int ok = st == WEFT_OK && value == 2;
    if (!ok) fprintf(stderr, "run: %s, value %d\n", weft_errname(st), value);
    /* Again on the default executor (NULL), which exit destroys. */
    value = 0;
    st = weft_run_and_wait(NULL, tf);
    if (st != WEFT_OK || value != 2) {
        fprintf(stderr, "run on the default executor: %s, value %d\n", weft_errname(st), value);
        ok = 0;
    }
    if (weft_taskflow_destroy(tf) != WEFT_OK) ok = 0;
    weft_executor_destroy(ex);
    if (ok) puts("consumer ok");
    return ok ? 0 : 1;
}
