/* GPU work as tasks: a task records copies and launches on a stream of the
 * device's pool and completes when they are done, its worker running other
 * tasks meanwhile (weft_gpu_stream_end waits cooperatively). */
#include "core/alloc.h"
#include "gpu/backend.h"
#include "weft/flow.h"

struct gpu_task {
    weft_gpu_device *dev;
    weft_gpu_task_fn fn;
    void *arg;
};

static int call_on_stream(weft_ctx *ctx, weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    weft_gpu_stream_guard g;
    weft_gpu_stream *s = weft_gpu_stream_begin(dev->pool, &g);
    int rc = fn(ctx, s, arg);
    /* Wait even when fn failed: work it queued before failing may still use
     * memory the caller frees once we return. */
    weft_status st = weft_gpu_stream_end(&g);
    return rc ? rc : (int)st;
}

int weft_gpu_call(weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    if (!dev || !fn) return WEFT_EINVAL;
    return call_on_stream(weft_current_ctx(), dev, fn, arg);
}

static int run_gpu_task(weft_ctx *ctx, void *arg) {
    struct gpu_task *t = arg;
    return call_on_stream(ctx, t->dev, t->fn, t->arg);
}

static void drop_gpu_task(void *arg) { weft__free(arg, sizeof(struct gpu_task)); }

weft_task weft_emplace_gpu(weft_taskflow *tf, weft_gpu_device *dev, weft_gpu_task_fn fn, void *arg) {
    if (!tf || !dev || !fn) return weft_emplace(NULL, NULL, NULL); /* the null task, with emplace's message */
    struct gpu_task *t = weft__alloc(sizeof *t);
    if (!t) return WEFT_TASK_NULL;
    *t = (struct gpu_task){.dev = dev, .fn = fn, .arg = arg};
    weft_status st;
    weft_work *w = weft_work_create(run_gpu_task, t, drop_gpu_task, &st);
    if (!w) {
        drop_gpu_task(t);
        return WEFT_TASK_NULL;
    }
    weft_task task = weft_emplace_work(tf, w);
    weft_work_release(w); /* the task holds its own reference, or failed and holds none */
    return task;
}
