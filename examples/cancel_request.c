/* Cancellation, the three layers in one small program:
 *   1. a token attached to a taskflow run and to async tasks, cancelled when
 *      "the client disconnects" (here: a callback decides it);
 *   2. a deadline: the request gets 50 ms, after which its token fires;
 *   3. (Linux, opt-in) signal preemption for a loop that never calls weft.
 * Build: part of the examples (make examples); run: ./cancel_request */
#include <stdio.h>
#include <weft.h>

/* A task that works in slices and checks between them. */
static int slice_work(weft_ctx *cx, void *arg) {
    volatile unsigned long *sum = arg;
    for (unsigned long i = 0;; i++) {
        if ((i & 0xffff) == 0 && weft_ctx_check(cx) != WEFT_OK) {
            /* Cancelled (or a sibling failed): stop cleanly. */
            printf("  task stops: %s\n", weft_ctx_cancel_reason(cx));
            return 0;
        }
        *sum += i;
    }
}

/* A loop that only polls the thread's preemption flag: no weft call inside. */
static int tight_loop(weft_ctx *cx, void *arg) {
    (void)cx;
    weft_preempt_watch w;
    if (weft_preempt_watch_begin(&w, arg) != WEFT_OK) return 0;
    unsigned long n = 0;
    while (!weft_preempt_requested()) n++;
    weft_preempt_watch_end(&w);
    printf("  tight loop interrupted after %lu spins\n", n);
    return 0;
}

int main(void) {
    weft_status st;
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    if (!ex) return 1;

    /* A request token, and one child per sub-request: cancelling the request
     * cancels them all. */
    weft_cancel_token *request = weft_cancel_token_create(NULL, &st);
    weft_cancel_token *sub = weft_cancel_token_create(request, &st);
    if (!request || !sub) return 1;

    /* Layer 2: the request gets 50 ms. */
    if (weft_cancel_after(request, 50 * 1000000ull) != WEFT_OK) return 1;

    /* Layer 1: the token stops a run and async tasks it is attached to. */
    weft_taskflow *tf = weft_taskflow_create("request", &st);
    static volatile unsigned long sums[3];
    for (int i = 0; i < 2; i++) weft_emplace(tf, slice_work, (void *)&sums[i]);
    weft_future *run, *task;
    if (weft_run(ex, tf, &run) != WEFT_OK || weft_cancel_attach(sub, run) != WEFT_OK) return 1;
    if (weft_async(ex, slice_work, (void *)&sums[2], &task) != WEFT_OK || weft_cancel_attach(sub, task) != WEFT_OK)
        return 1;
    printf("run: %s, async task: %s\n", weft_strerror(weft_future_wait(run)), weft_strerror(weft_future_wait(task)));
    printf("request token: \"%s\", sub-request token: \"%s\"\n", weft_cancel_token_reason(request),
           weft_cancel_token_reason(sub));

    /* Layer 3: a loop that never checks, stopped by a signal. */
    weft_cancel_token *stuck = weft_cancel_token_create(NULL, &st);
    if (stuck && weft_preempt_install(NULL) == WEFT_OK) {
        weft_future *f;
        if (weft_async(ex, tight_loop, stuck, &f) == WEFT_OK) {
            if (weft_cancel_after(stuck, 10 * 1000000ull) != WEFT_OK) (void)weft_cancel_token_cancel(stuck);
            (void)weft_future_wait(f);
            weft_future_destroy(f);
        }
    }
    weft_cancel_token_destroy(stuck);

    weft_future_destroy(run);
    weft_future_destroy(task);
    weft_taskflow_destroy(tf);
    weft_cancel_token_destroy(sub);
    weft_cancel_token_destroy(request);
    weft_executor_destroy(ex);
    return 0;
}
