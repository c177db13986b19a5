/* Graph editing, semaphores, parallel run_n and run_many in one small program. */
#include <stdatomic.h>
#include <stdio.h>
#include <weft.h>

static atomic_int inside, most;

static int write_file(weft_ctx *cx, void *arg) {
    (void)cx, (void)arg;
    int now = atomic_fetch_add(&inside, 1) + 1;
    int m = atomic_load(&most);
    while (now > m && !atomic_compare_exchange_weak(&most, &m, now)) {
    }
    atomic_fetch_sub(&inside, 1);
    return 0;
}

static int say(weft_ctx *cx, void *arg) {
    printf("%s (instance %llu)\n", (const char *)arg, (unsigned long long)weft_ctx_iteration(cx));
    return 0;
}

int main(void) {
    weft_executor *ex = weft_executor_create(NULL, NULL);
    weft_taskflow *io = weft_taskflow_create("io", NULL), *steps = weft_taskflow_create("steps", NULL);
    weft_semaphore *disk = weft_semaphore_create(2, NULL);
    if (!ex || !io || !steps || !disk) return 1;
    for (int i = 0; i < 16; i++) {
        weft_task w = weft_emplace(io, write_file, NULL);
        weft_task_acquire(w, disk);
        weft_task_release(w, disk);
    }
    weft_task t[3] = {weft_emplace(steps, say, "a"), weft_emplace(steps, say, "b"), weft_emplace(steps, say, "c")};
    weft_linearize(t, 3);
    weft_task_erase(t[1]); /* a and c no longer ordered */
    weft_precede(t[0], t[2]);
    weft_taskflow *both[] = {io, steps};
    weft_status st = weft_run_many_and_wait(ex, both, 2, NULL);
    printf("run_many: %s, at most %d writers at once\n", weft_strerror(st), atomic_load(&most));
    weft_future *f;
    if (weft_run_n_parallel(ex, steps, 2, &f) == WEFT_OK) {
        st = weft_future_wait(f);
        weft_future_destroy(f);
    }
    weft_taskflow_destroy(io);
    weft_taskflow_destroy(steps);
    weft_semaphore_destroy(disk);
    weft_executor_destroy(ex);
    return st == WEFT_OK ? 0 : 1;
}
