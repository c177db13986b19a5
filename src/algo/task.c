/* The algorithms as taskflow tasks: a task that runs the call its descriptor
 * describes, read when the task runs, on the executor running the taskflow (from
 * inside a worker, so the call waits cooperatively).  A failed call fails the
 * task with its status as the task's return code. */
#include "algo/algo.h"
#include "core/error_detail.h"
#include "graph/graph.h" /* weft__tf_error */

_Thread_local const _Atomic int *weft__algo_run_stop __attribute__((tls_model("initial-exec")));

/* The call runs at its graph task's priority: its own (weft_task_set_priority),
 * else its run's (weft_run_with_priority: "as if it had been given it"),
 * whatever the worker thread's setting: its chunks are queued at that level
 * (par.c).  It carries no NUMA hint: the descriptor has no room for one and
 * the emplacing thread's setting is not captured (a worker's own setting,
 * inherited from a hinted call it is helping, is not the task's either).  The
 * worker's settings are put back after.
 *
 * It stops with its run (weft/cancel.h): the run's stop word goes to the
 * call's plan (weft__algo_run_stop, par.h), whose chunks not yet started are
 * skipped once the run is cancelled or has failed, as for the config's token.
 * The call then says WEFT_ECANCELED; unless the config's own token fired,
 * the task returns 0, so that the run reports its cancel or its failure:
 * failing the task would have turned a cancelled run into a failed one
 * (WEFT_ETASK naming this task), as a pipeline's task does not either. */
static uint8_t task_level(weft_ctx *ctx) {
    /* A graph task's context names its run's future, the run's first member
     * (weft__run_ctx), and its node, or under weft_run_n_parallel the
     * instance's shadow of it, which weft__ctx_node resolves (read as a node,
     * the shadow gave a garbage priority and a read at a garbage address:
     * UBSan, tfport_hunt44's run_n_parallel test). */
    uint8_t level = weft__task_level(weft__ctx_node(ctx), (const weft__run *)(const void *)ctx->run);
    return (uint8_t)(level ? (weft_priority)(level - 2) : WEFT_PRIORITY_NORMAL);
}

#define AT_TASK_PRIORITY(ctx, call, token)                                               \
    do {                                                                                 \
        uint32_t saved_ = weft__algo_how;                                                \
        const _Atomic int *saved_stop_ = weft__algo_run_stop;                            \
        weft__algo_how = task_level(ctx);                                                \
        weft__algo_run_stop = (ctx)->stop;                                               \
        int st_ = (call);                                                                \
        weft__algo_how = saved_;                                                         \
        weft__algo_run_stop = saved_stop_;                                               \
        if (st_ == WEFT_ECANCELED && !weft__algo_cancelled(token)) st_ = 0;              \
        return st_;                                                                      \
    } while (0)

static int for_task(weft_ctx *ctx, void *arg) {
    const weft_for_desc *d = arg;
    AT_TASK_PRIORITY(ctx, weft__for_range(weft_ctx_executor(ctx), d), d->config.cancel);
}
static int transform_task(weft_ctx *ctx, void *arg) {
    const weft_transform_desc *d = arg;
    AT_TASK_PRIORITY(ctx, weft__transform(weft_ctx_executor(ctx), d), d->config.cancel);
}
static int reduce_task(weft_ctx *ctx, void *arg) {
    const weft_reduce_desc *d = arg;
    AT_TASK_PRIORITY(ctx, weft__reduce(weft_ctx_executor(ctx), d), d->config.cancel);
}
static int scan_task(weft_ctx *ctx, void *arg) {
    const weft_scan_desc *d = arg;
    AT_TASK_PRIORITY(ctx, weft__scan(weft_ctx_executor(ctx), d), d->config.cancel);
}
static int sort_task(weft_ctx *ctx, void *arg) {
    const weft_sort_desc *d = arg;
    AT_TASK_PRIORITY(ctx, weft__sort(weft_ctx_executor(ctx), d), d->config.cancel);
}

/* A NULL tf or descriptor is WEFT_EINVAL (the descriptor's recorded as the
 * taskflow's last error), with a message naming the call: passing a NULL
 * descriptor on to weft_emplace as a NULL task function said
 * "weft_emplace: task function is NULL", a call and a mistake the user had
 * not made. */
static weft_task emplace(const char *call, weft_taskflow *tf, weft_task_fn fn, const void *d) {
    if (!tf) return weft__fail(call, WEFT_EINVAL, "tf is NULL"), WEFT_TASK_NULL;
    if (!d) return weft__tf_error(tf, WEFT_EINVAL, "%s: the descriptor is NULL", call), WEFT_TASK_NULL;
    weft_task t = weft_emplace(tf, fn, (void *)d);
    if (weft_task_is_null(t)) weft__add_named_oom(tf, call); /* out of memory: this call's name (R3) */
    return t;
}

weft_task weft_emplace_for(weft_taskflow *tf, const weft_for_desc *d) { return emplace(__func__, tf, for_task, d); }
weft_task weft_emplace_transform(weft_taskflow *tf, const weft_transform_desc *d) {
    return emplace(__func__, tf, transform_task, d);
}
weft_task weft_emplace_reduce(weft_taskflow *tf, const weft_reduce_desc *d) {
    return emplace(__func__, tf, reduce_task, d);
}
weft_task weft_emplace_scan(weft_taskflow *tf, const weft_scan_desc *d) { return emplace(__func__, tf, scan_task, d); }
weft_task weft_emplace_sort(weft_taskflow *tf, const weft_sort_desc *d) { return emplace(__func__, tf, sort_task, d); }
