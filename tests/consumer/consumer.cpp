// The public headers used from C++: everything is extern "C" and compiles as C++11.
#include <weft.h>

#include <cstdio>

// A task function with C language linkage, as weft_task_fn is a C function type.
extern "C" {
static int set_flag(weft_ctx *, void *arg) {
    *static_cast<int *>(arg) += 1;
    return 0;
}
}

int main() {
    weft_executor_config cfg = {};
    cfg.workers = 2;
    weft_status err = WEFT_OK;
    weft_executor *ex = weft_executor_create(&cfg, &err);
    if (!ex) {
        std::fprintf(stderr, "weft_executor_create: %s\n", weft_strerror(err));
        return 1;
    }
    weft_taskflow *tf = weft_taskflow_create("cxx", &err);
    int count = 0;
    weft_task a = weft_emplace(tf, set_flag, &count);
    weft_task b = weft_emplace(tf, set_flag, &count);
    bool ok = !weft_task_is_null(a) && !weft_task_is_null(b) && weft_precede(a, b) == WEFT_OK &&
              weft_run_and_wait(ex, tf) == WEFT_OK && count == 2;
    ok = weft_taskflow_destroy(tf) == WEFT_OK && ok;
    weft_executor_destroy(ex);
    if (ok) std::puts("consumer_cxx ok");
    return ok ? 0 : 1;
}
