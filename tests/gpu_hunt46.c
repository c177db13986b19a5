/* GPU layer, adversarial round 46: out-of-memory on the paths the earlier
 * sweeps left (stream queries, waits, guards, GPU calls and stages), kernels
 * that fail next to work that does not, streams and pools destroyed with work
 * in flight, copies of size 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "counting_alloc.h"
#include "gpu_test.h"
#include "weft/topology.h"
#include "test_util.h"

/* A kernel that holds its stream until the test opens the gate, so that work
 * is surely pending when the test asks; args[0] is a gate (an atomic_int on
 * the host, passed by value as a pointer). */
static int gate_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    atomic_int *gate = *(atomic_int *const *)a[0];
    while (!atomic_load_explicit(gate, memory_order_acquire)) sched_yield();
    return 0;
}

/* Fails (returns its argument) when args[0] holds a non-zero int. */
static int maybe_fail_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    return *(const int *)a[0];
}

static const weft_gpu_kernel_source gate_src = {.name = "gate", .host = gate_host};
static const weft_gpu_kernel_source maybe_fail_src = {.name = "maybe_fail", .host = maybe_fail_host};

static void launch_gate(weft_gpu_stream *s, weft_gpu_kernel *k, atomic_int *gate) {
    weft_gpu_arg arg = WEFT_GPU_ARG_VALUE(gate);
    ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, &arg, 1));
}

static void launch_maybe_fail(weft_gpu_stream *s, weft_gpu_kernel *k, int code) {
    weft_gpu_arg arg = WEFT_GPU_ARG_VALUE(code);
    ASSERT_OK(weft_gpu_launch(s, k, &(weft_gpu_range){.global = {1}}, &arg, 1));
}

/* gpu.h, weft_gpu_stream_query: "WEFT_ENOMEM (no memory for the marker,
 * nothing waited for)" and "WEFT_OK when all work queued so far is done".
 * A query after new work throws the old marker away and records a new one;
 * when that record failed, the stream was left with no marker and the
 * new-work flag cleared, which is how a stream that never had work looks:
 * the next query said WEFT_OK at once, with a kernel still running and a
 * failed one not reported. */
TEST(emu_a_stream_query_that_found_no_memory_leaves_the_next_one_truthful) {
    weft_set_allocator(&counting); /* before anything is made: every block is freed by the allocator that made it */
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *gate_k = weft_gpu_kernel_create(d, &gate_src, &st);
    ASSERT_OK(st);
    weft_gpu_kernel *fail_k = weft_gpu_kernel_create(d, &maybe_fail_src, &st);
    ASSERT_OK(st);
    atomic_int gate = 0;
    launch_gate(s, gate_k, &gate);
    ASSERT_STATUS(weft_gpu_stream_query(s), WEFT_EAGAIN); /* records the query's marker */
    launch_maybe_fail(s, fail_k, 7);                      /* new work: the next query needs a new marker */
    fail_allocation(1);
    st = weft_gpu_stream_query(s);
    fail_allocation(0);
    ASSERT_STATUS(st, WEFT_ENOMEM);
    ASSERT_STATUS(weft_gpu_stream_query(s), WEFT_EAGAIN); /* the gate is shut: nothing is done */
    atomic_store_explicit(&gate, 1, memory_order_release);
    /* Once done, the query reports the failed kernel (and leaves it to the
     * synchronize). */
    while ((st = weft_gpu_stream_query(s)) == WEFT_EAGAIN) sched_yield();
    ASSERT_STATUS(st, WEFT_EDEVICE);
    ASSERT_STATUS(weft_gpu_stream_synchronize(s), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_stream_query(s));
    weft_gpu_kernel_destroy(fail_k);
    weft_gpu_kernel_destroy(gate_k);
    weft_gpu_stream_destroy(s);
    weft_gpu_close(d);
    weft_set_allocator(NULL);
}

/* ---- out of memory on every GPU path a task takes -------------------------------- */

/* add_one: args[0] is an atomic_int buffer; adds 1 to its element 0 (atomic:
 * a GPU stage's tokens run on two streams at once). */
static int add_one_host(const weft_gpu_range *r, void *const *a) {
    (void)r;
    atomic_fetch_add_explicit((atomic_int *)a[0], 1, memory_order_relaxed);
    return 0;
}
static const weft_gpu_kernel_source add_one_src = {.name = "add_one", .host = add_one_host};

struct life {
    weft_gpu_kernel *k;
    weft_gpu_buffer *b; /* managed: one atomic_int */
    int ok;             /* kernels whose call said they ran */
    int maybe;          /* calls that failed for want of memory: their kernel ran at most once */
    char bad[200];      /* the first status no contract allows */
    int tokens;
};

static int launch_add_one(weft_ctx *ctx, weft_gpu_stream *s, void *arg) {
    (void)ctx;
    struct life *l = arg;
    weft_gpu_arg a = WEFT_GPU_ARG_BUFFER(l->b);
    return weft_gpu_launch(s, l->k, &(weft_gpu_range){.global = {1}}, &a, 1);
}

/* st of a call that ran `kernels` kernels when it succeeded. */
static void tally(struct life *l, const char *what, int st, int kernels) {
    if (st == WEFT_OK) l->ok += kernels;
    else if (st == WEFT_ENOMEM) l->maybe += kernels;
    else if (!l->bad[0]) snprintf(l->bad, sizeof l->bad, "%s: %s", what, weft_errname((weft_status)st));
}

static weft_gpu_device *g_dev;
static int async_call(weft_ctx *ctx, void *arg) {
    (void)ctx;
    return weft_gpu_call(g_dev, launch_add_one, arg);
}

/* A subflow of two GPU tasks in a chain. */
static int gpu_subflow(weft_ctx *ctx, weft_subflow *sf, void *arg) {
    (void)ctx;
    weft_taskflow *g = weft_subflow_graph(sf);
    weft_task a = weft_emplace_gpu(g, g_dev, launch_add_one, arg);
    weft_task b = weft_task_is_null(a) ? a : weft_emplace_gpu(g, g_dev, launch_add_one, arg);
    if (weft_task_is_null(b)) return weft_taskflow_last_error(g);
    return weft_precede(a, b);
}

static int stage_make(weft_pipeflow *pf, void *arg) {
    struct life *l = arg;
    if (weft_pipeflow_token(pf) >= (uint64_t)l->tokens) (void)weft_pipeflow_stop(pf);
    return 0;
}
static int stage_gpu(weft_pipeflow *pf, weft_gpu_stream *s, void *arg) {
    (void)pf;
    return launch_add_one(NULL, s, arg);
}

/* The outcome of a run or async task: OK, or WEFT_ETASK whose task failed
 * with WEFT_ENOMEM, counts as ENOMEM. */
static int run_status(weft_future *f, weft_status st) {
    if (st != WEFT_ETASK) return st;
    weft_run_info info = {0};
    (void)weft_future_info(f, &info);
    return info.task_code == WEFT_ENOMEM ? WEFT_ENOMEM : st;
}

static void gpu_paths(struct life *l, weft_gpu_device *d, weft_executor *ex) {
    weft_status st;
    /* weft_gpu_call off the workers */
    tally(l, "weft_gpu_call", weft_gpu_call(d, launch_add_one, l), 1);
    /* weft_gpu_call from an async task */
    weft_future *f = NULL;
    g_dev = d;
    st = weft_async(ex, async_call, l, &f);
    if (st == WEFT_OK) {
        st = weft_future_wait(f);
        tally(l, "async weft_gpu_call", run_status(f, st), 1);
        weft_future_destroy(f);
    } else {
        tally(l, "weft_async", st, 0);
    }
    /* a guard */
    weft_gpu_stream_guard g;
    weft_gpu_stream *s = weft_gpu_stream_begin(weft_gpu_device_pool(d), &g);
    st = (weft_status)launch_add_one(NULL, s, l);
    weft_status end = weft_gpu_stream_end(&g);
    tally(l, "guard", st ? st : end, 1);
    /* a stream of its own: wait, event, query */
    s = weft_gpu_stream_create(d, &st);
    if (s) {
        st = (weft_status)launch_add_one(NULL, s, l);
        weft_status w = weft_gpu_stream_wait(s);
        tally(l, "weft_gpu_stream_wait", st ? st : w, 1);
        st = (weft_status)launch_add_one(NULL, s, l);
        weft_gpu_event *e = weft_gpu_event_record(s, &end);
        if (e) {
            weft_status w2 = weft_gpu_event_wait(e);
            tally(l, "weft_gpu_event_wait", st ? st : w2, 1);
            weft_gpu_event_destroy(e);
        } else {
            tally(l, "weft_gpu_event_record", st ? st : end, 1);
        }
        st = (weft_status)launch_add_one(NULL, s, l);
        weft_status q;
        while ((q = weft_gpu_stream_query(s)) == WEFT_EAGAIN) sched_yield();
        if (q == WEFT_ENOMEM) q = weft_gpu_stream_synchronize(s); /* waits all the same */
        tally(l, "weft_gpu_stream_query", st ? st : q, 1);
        weft_gpu_stream_destroy(s);
    } else {
        tally(l, "weft_gpu_stream_create", st, 0);
    }
    /* a pipeline with a GPU stage: 3 tokens */
    l->tokens = 3;
    weft_gpu_stage gs = {.dev = d, .ex = ex, .fn = stage_gpu, .arg = l};
    weft_stage stages[] = {{WEFT_STAGE_SERIAL, stage_make, l, "make"},
                           {WEFT_STAGE_PARALLEL, weft_gpu_stage_run, &gs, "gpu"}};
    weft_pipeline *pl = weft_pipeline_create(2, stages, 2, &st);
    weft_taskflow *tf = pl ? weft_taskflow_create("gpu-oom", &st) : NULL;
    if (tf) {
        weft_task t = weft_pipeline_emplace(tf, pl);
        if (!weft_task_is_null(t)) {
            f = NULL;
            st = weft_run(ex, tf, &f);
            if (st == WEFT_OK) st = (weft_status)run_status(f, weft_future_wait(f));
            weft_future_destroy(f);
            tally(l, "GPU pipeline", st, 3);
        } else {
            tally(l, "weft_pipeline_emplace", weft_taskflow_last_error(tf), 0);
        }
        /* GPU tasks of a taskflow: two in a chain */
        ASSERT_OK(weft_taskflow_clear(tf));
        weft_task a = weft_emplace_gpu(tf, d, launch_add_one, l);
        weft_task b = weft_task_is_null(a) ? a : weft_emplace_gpu(tf, d, launch_add_one, l);
        st = weft_task_is_null(b) ? weft_taskflow_last_error(tf) : weft_precede(a, b);
        if (st == WEFT_OK) {
            f = NULL;
            st = weft_run(ex, tf, &f);
            if (st == WEFT_OK) st = (weft_status)run_status(f, weft_future_wait(f));
            weft_future_destroy(f);
            tally(l, "GPU tasks", st, 2);
        } else {
            tally(l, "weft_emplace_gpu", st, 0);
        }
        /* A subflow of GPU tasks (2 kernels), then a module whose body is
         * one GPU task (1), and that body run twice by weft_run_n_parallel
         * (its copies call the task's function: 2). */
        ASSERT_OK(weft_taskflow_clear(tf));
        weft_taskflow *body = weft_taskflow_create("gpu-body", &st);
        if (body) {
            weft_task sub = weft_emplace_subflow(tf, gpu_subflow, l);
            weft_task in = weft_emplace_gpu(body, d, launch_add_one, l);
            weft_task mod = weft_task_is_null(sub) || weft_task_is_null(in) ? WEFT_TASK_NULL : weft_emplace_module(tf, body);
            st = weft_task_is_null(in)    ? weft_taskflow_last_error(body)
                 : weft_task_is_null(mod) ? weft_taskflow_last_error(tf)
                                          : weft_precede(sub, mod);
            if (st == WEFT_OK) {
                f = NULL;
                st = weft_run(ex, tf, &f);
                if (st == WEFT_OK) st = (weft_status)run_status(f, weft_future_wait(f));
                weft_future_destroy(f);
                tally(l, "GPU subflow and module", st, 3);
                f = NULL;
                st = weft_run_n_parallel(ex, body, 2, &f);
                if (st == WEFT_OK) st = (weft_status)run_status(f, weft_future_wait(f));
                weft_future_destroy(f);
                tally(l, "GPU tasks by weft_run_n_parallel", st, 2);
            } else {
                tally(l, "GPU subflow and module build", st, 0);
            }
            ASSERT_OK(weft_taskflow_destroy(tf));
            tf = NULL;
            ASSERT_OK(weft_taskflow_destroy(body));
        } else {
            tally(l, "weft_taskflow_create", st, 0);
        }
        if (tf) weft_taskflow_destroy(tf);
    } else {
        tally(l, "pipeline or taskflow create", st, 0);
    }
    if (pl) ASSERT_OK(weft_pipeline_destroy(pl));
    tally(l, "weft_gpu_synchronize", weft_gpu_synchronize(d), 0);
}

/* One life: device, kernel, buffer, executor, every path; then the count. */
static void gpu_paths_life(struct life *l) {
    memset(l, 0, sizeof *l);
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 2}, &st);
    if (!d) return tally(l, "weft_gpu_open", st, 0);
    weft_executor *ex = weft_executor_create(&(weft_executor_config){.workers = 2}, &st);
    if (!ex) tally(l, "weft_executor_create", st, 0);
    l->k = ex ? weft_gpu_kernel_create(d, &add_one_src, &st) : NULL;
    if (ex && !l->k) tally(l, "weft_gpu_kernel_create", st, 0);
    l->b = l->k ? weft_gpu_buffer_create(d, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st) : NULL;
    if (l->k && !l->b) tally(l, "weft_gpu_buffer_create", st, 0);
    if (l->b) {
        atomic_init((atomic_int *)weft_gpu_buffer_host_ptr(l->b), 0);
        gpu_paths(l, d, ex);
        int v = atomic_load((atomic_int *)weft_gpu_buffer_host_ptr(l->b));
        if ((v < l->ok || v > l->ok + l->maybe) && !l->bad[0])
            snprintf(l->bad, sizeof l->bad, "%d kernels ran; the calls said %d, and %d more at most", v, l->ok,
                     l->maybe);
    }
    weft_executor_destroy(ex);
    weft_gpu_buffer_destroy(l->b);
    weft_gpu_kernel_destroy(l->k);
    weft_gpu_close(d);
}

static void on_hang(int sig) {
    (void)sig;
    static const char msg[] = "HANG: a GPU life with an allocation failing did not end in 20 s\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

/* gpu.h: every call may fail with WEFT_ENOMEM (a GPU task's or stage's run
 * with task code WEFT_ENOMEM); none may say it ran work it did not, lose a
 * kernel it said it ran, leak, or hang, with any one allocation failing. */
TEST(every_gpu_path_with_each_allocation_failing_in_turn_fails_cleanly_and_counts_exactly) {
    weft_log_set_level(WEFT_LOG_OFF);
    signal(SIGALRM, on_hang);
    /* The process's machine, which an executor placed by WEFT_PLACEMENT
     * detects on first use and keeps until exit: detected before the
     * counting starts (topology.h, topo NULL). */
    void *p = NULL;
    if (weft_numa_alloc(NULL, 1, 0, &p, NULL) == WEFT_OK) weft_numa_free(p, 1);
    struct life l;
    weft_set_allocator(&counting);
    fail_allocation(0);
    gpu_paths_life(&l);
    ASSERT_TRUE(l.bad[0] == '\0');
    ASSERT_EQ(l.maybe, 0);
    long total = atomic_load(&A.calls);
    if (getenv("HUNT_VERBOSE")) fprintf(stderr, "%ld allocations, %d kernels\n", total, l.ok);
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    for (long burst = 1; burst <= 3; burst += 2) {
        atomic_store(&A.burst, burst);
        for (long n = 1; n <= total + 3; n++) {
            fail_allocation(n);
            alarm(20);
            gpu_paths_life(&l);
            alarm(0);
            fail_allocation(0);
            if (l.bad[0]) TEST_FAIL_("allocation %ld of %ld failing (burst %ld): %s", n, total, burst, l.bad);
            if (atomic_load(&A.outstanding) != 0)
                TEST_FAIL_("allocation %ld of %ld failing: %lld bytes not given back", n, total,
                           (long long)atomic_load(&A.outstanding));
        }
    }
    atomic_store(&A.burst, 1);
    weft_set_allocator(NULL);
}

/* gpu.h, "Failed work": a synchronize of a stream reports the failures of
 * work queued on it since its previous synchronize, each by one synchronize,
 * and a GPU task's (or weft_gpu_call's) outcome is its own work's, no other's.
 * When the marker that ends a GPU call's wait could not be allocated, the
 * call fell back to a synchronize of its pool stream, which took the failure
 * of a kernel queued there outside any task (a loose one) as reported and
 * dropped it: the user's next synchronize of that stream said WEFT_OK. */
TEST(emu_a_gpu_call_short_of_memory_for_its_marker_leaves_a_loose_failure_to_the_streams_synchronize) {
    weft_status st;
    weft_set_allocator(&counting); /* before anything is made: every block is freed by the allocator that made it */
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_EMULATOR, .streams = 1}, &st);
    ASSERT_OK(st);
    struct life l = {0};
    l.k = weft_gpu_kernel_create(d, &add_one_src, &st);
    ASSERT_OK(st);
    l.b = weft_gpu_buffer_create(d, sizeof(atomic_int), 1, WEFT_GPU_MANAGED, &st);
    ASSERT_OK(st);
    atomic_init((atomic_int *)weft_gpu_buffer_host_ptr(l.b), 0);
    weft_gpu_kernel *fail_k = weft_gpu_kernel_create(d, &maybe_fail_src, &st);
    ASSERT_OK(st);
    weft_gpu_stream *pool_s = weft_gpu_stream_pool_get(weft_gpu_device_pool(d), 0); /* the call's stream too */
    /* A weft_gpu_call's allocations: the launch's record, then its end
     * marker's event and queue record. */
    fail_allocation(0);
    ASSERT_OK(weft_gpu_call(d, launch_add_one, &l));
    long calls = atomic_load(&A.calls);
    ASSERT_EQ(calls, 3);
    launch_maybe_fail(pool_s, fail_k, 5); /* loose: no task's */
    fail_allocation(2); /* the end marker */
    st = weft_gpu_call(d, launch_add_one, &l);
    long failures = atomic_load(&A.failures);
    fail_allocation(0);
    ASSERT_EQ(failures, 1);
    ASSERT_OK(st); /* its own kernel did not fail (and it was waited for) */
    ASSERT_EQ(atomic_load((atomic_int *)weft_gpu_buffer_host_ptr(l.b)), 2);
    ASSERT_STATUS(weft_gpu_stream_synchronize(pool_s), WEFT_EDEVICE);
    ASSERT_OK(weft_gpu_stream_synchronize(pool_s));
    weft_gpu_kernel_destroy(fail_k);
    weft_gpu_buffer_destroy(l.b);
    weft_gpu_kernel_destroy(l.k);
    weft_gpu_close(d);
    weft_set_allocator(NULL);
}

/* ---- streams destroyed with work in flight ------------------------------------- */

struct waiter {
    weft_gpu_event *e;
    atomic_int started;
    weft_status st;
};

static void *wait_event(void *arg) {
    struct waiter *w = arg;
    atomic_store(&w->started, 1);
    w->st = weft_gpu_event_wait(w->e);
    return NULL;
}

/* gpu.h: weft_gpu_stream_destroy "waits for the stream's work, then frees
 * it", and an event is destroyed on its own, so it may be waited for while
 * its stream goes: the waiter uses the event, not the stream.  The
 * emulator's wait slept on the stream's own counter and read it again on
 * waking, by which time the destroy (which had seen the work end) could have
 * freed the stream: a use after free (ASan), or a wait that never ended. */
TEST(emu_an_event_waited_for_on_another_thread_while_its_stream_is_destroyed_ends_ok) {
    weft_gpu_device *d = gpu_test_open(WEFT_GPU_EMULATOR);
    weft_status st;
    weft_gpu_kernel *gate_k = weft_gpu_kernel_create(d, &gate_src, &st);
    ASSERT_OK(st);
    for (int round = 0; round < 200; round++) {
        weft_gpu_stream *s = weft_gpu_stream_create(d, &st);
        ASSERT_OK(st);
        atomic_int gate = 0;
        launch_gate(s, gate_k, &gate);
        struct waiter w = {.e = weft_gpu_event_record(s, &st)};
        ASSERT_OK(st);
        pthread_t th;
        ASSERT_EQ(pthread_create(&th, NULL, wait_event, &w), 0);
        while (!atomic_load(&w.started)) sched_yield();
        for (int i = 0; i < round % 8; i++) sched_yield(); /* now and then, the waiter is asleep */
        atomic_store_explicit(&gate, 1, memory_order_release);
        weft_gpu_stream_destroy(s);
        ASSERT_EQ(pthread_join(th, NULL), 0);
        ASSERT_OK(w.st);
        ASSERT_OK(weft_gpu_event_query(w.e));
        weft_gpu_event_destroy(w.e);
    }
    weft_gpu_kernel_destroy(gate_k);
    weft_gpu_close(d);
}

/* ---- the backend probe short of memory ------------------------------------------- */

/* gpu.h, weft_gpu_open: with WEFT_GPU_AUTO "the first backend that has a
 * device wins, in the order CUDA, HIP, OpenCL, emulator", and out of memory
 * is WEFT_ENOMEM.  A backend whose opening ran out of memory was taken for
 * one with no device, and the probe went on to the next: a machine with an
 * OpenCL device (PoCL here) got the emulator, silently, for one failed
 * allocation.  Each allocation failing in turn must give the device the
 * probe gives with memory, or NULL with WEFT_ENOMEM. */
TEST(auto_open_short_of_memory_fails_with_enomem_or_opens_the_backend_it_would_with_memory) {
    unsetenv("WEFT_GPU");
    weft_log_set_level(WEFT_LOG_OFF);
    weft_set_allocator(&counting);
    fail_allocation(0);
    weft_status st;
    weft_gpu_device *d = weft_gpu_open(NULL, &st);
    ASSERT_OK(st);
    weft_gpu_kind want = weft_gpu_device_kind(d);
    weft_gpu_close(d);
    long total = atomic_load(&A.calls);
    if (want == WEFT_GPU_EMULATOR) {
        weft_set_allocator(NULL);
        SKIP("the probe finds only the emulator here: no backend to fall past");
    }
    for (long n = 1; n <= total; n++) {
        fail_allocation(n);
        d = weft_gpu_open(NULL, &st);
        long failures = atomic_load(&A.failures);
        fail_allocation(0);
        weft_gpu_kind got = weft_gpu_device_kind(d);
        weft_gpu_close(d);
        if (failures && d && got != want)
            TEST_FAIL_("allocation %ld of %ld failing: opened %s, not %s", n, total, weft_gpu_kind_name(got),
                       weft_gpu_kind_name(want));
        if (!d && st != WEFT_ENOMEM) TEST_FAIL_("allocation %ld of %ld failing: NULL with %s", n, total, weft_errname(st));
        ASSERT_EQ(atomic_load(&A.outstanding), 0);
    }
    weft_set_allocator(NULL);
}

/* ---- OpenCL (PoCL) short of memory ------------------------------------------------ */

enum { CLN = 64 };

/* One OpenCL life: device, kernels, buffers, pinned memory, a stream, copies,
 * launches, an event, a query, a parallel_for (built, then cached), a GPU
 * call; *bad gets the first status no contract allows or a wrong result. */
static void opencl_life(char *bad, size_t badn) {
    weft_status st;
    bad[0] = '\0';
#define OK_OR_ENOMEM(what, s)                                                                              \
    do {                                                                                                   \
        weft_status s_ = (s);                                                                              \
        if (s_ != WEFT_OK && s_ != WEFT_ENOMEM && !bad[0]) snprintf(bad, badn, "%s: %s", what, weft_errname(s_)); \
        if (s_ != WEFT_OK) goto out;                                                                       \
    } while (0)
    weft_gpu_device *d = weft_gpu_open(&(weft_gpu_config){.kind = WEFT_GPU_OPENCL, .streams = 1}, &st);
    weft_gpu_kernel *vadd = NULL;
    weft_gpu_buffer *bx = NULL, *bz = NULL;
    weft_gpu_stream *s = NULL;
    float *x = NULL;
    float z[CLN];
    OK_OR_ENOMEM("weft_gpu_open", st);
    vadd = weft_gpu_kernel_create(d, &gpu_test_vadd, &st);
    OK_OR_ENOMEM("weft_gpu_kernel_create", st);
    bx = weft_gpu_buffer_create(d, sizeof(float), CLN, 0, &st);
    OK_OR_ENOMEM("weft_gpu_buffer_create", st);
    bz = weft_gpu_buffer_create(d, sizeof(float), CLN, 0, &st);
    OK_OR_ENOMEM("weft_gpu_buffer_create", st);
    x = weft_gpu_host_alloc(d, sizeof(float) * CLN, &st);
    OK_OR_ENOMEM("weft_gpu_host_alloc", st);
    for (int i = 0; i < CLN; i++) x[i] = (float)i;
    s = weft_gpu_stream_create(d, &st);
    OK_OR_ENOMEM("weft_gpu_stream_create", st);
    OK_OR_ENOMEM("copy", weft_gpu_copy_to_device_async(s, bx, 0, x, CLN));
    unsigned n = CLN;
    weft_gpu_arg va[] = {WEFT_GPU_ARG_BUFFER(bx), WEFT_GPU_ARG_BUFFER(bx), WEFT_GPU_ARG_BUFFER(bz),
                         WEFT_GPU_ARG_VALUE(n)};
    OK_OR_ENOMEM("weft_gpu_launch", weft_gpu_launch(s, vadd, &(weft_gpu_range){.global = {CLN}}, va, 4));
    weft_gpu_event *e = weft_gpu_event_record(s, &st);
    OK_OR_ENOMEM("weft_gpu_event_record", st);
    st = weft_gpu_event_wait(e);
    weft_gpu_event_destroy(e);
    OK_OR_ENOMEM("weft_gpu_event_wait", st);
    while ((st = weft_gpu_stream_query(s)) == WEFT_EAGAIN) sched_yield();
    OK_OR_ENOMEM("weft_gpu_stream_query", st);
    static const weft_gpu_for_kernel twice = {.params = "WEFT_GLOBAL float *z", .body = "z[i] = 2.0f * z[i];"};
    weft_gpu_arg fa[] = {WEFT_GPU_ARG_BUFFER(bz)};
    OK_OR_ENOMEM("weft_gpu_parallel_for", weft_gpu_parallel_for(s, CLN, &twice, fa, 1));
    OK_OR_ENOMEM("weft_gpu_stream_synchronize", weft_gpu_stream_synchronize(s));
    OK_OR_ENOMEM("copy back", weft_gpu_copy_to_host(bz, 0, z, CLN));
    for (int i = 0; i < CLN; i++)
        if (z[i] != 4.0f * (float)i && !bad[0]) snprintf(bad, badn, "z[%d] is %g, want %g", i, z[i], 4.0 * i);
out:
    weft_gpu_stream_destroy(s);
    weft_gpu_host_free(d, x);
    weft_gpu_buffer_destroy(bz);
    weft_gpu_buffer_destroy(bx);
    weft_gpu_kernel_destroy(vadd);
    weft_gpu_close(d);
#undef OK_OR_ENOMEM
}

/* gpu.h on OpenCL: every call may fail with WEFT_ENOMEM when weft's host
 * memory runs out (PoCL's own comes from malloc); none may fail otherwise,
 * give a wrong result, or keep a block (the counting allocator; under ASan,
 * LeakSanitizer for what PoCL was given back). */
TEST(opencl_calls_with_each_allocation_failing_in_turn_fail_cleanly_and_keep_nothing) {
    weft_gpu_device *probe = gpu_test_open(WEFT_GPU_OPENCL);
    weft_gpu_close(probe);
    weft_log_set_level(WEFT_LOG_OFF);
    char bad[200];
    weft_set_allocator(&counting);
    fail_allocation(0);
    opencl_life(bad, sizeof bad);
    ASSERT_TRUE(bad[0] == '\0');
    long total = atomic_load(&A.calls);
    if (getenv("HUNT_VERBOSE")) fprintf(stderr, "%ld allocations\n", total);
    ASSERT_EQ(atomic_load(&A.outstanding), 0);
    /* A life is some 100 ms (PoCL builds the kernels): every third
     * allocation, or each with HUNT_FULL set. */
    long step = getenv("HUNT_FULL") ? 1 : 3;
    for (long k = 1; k <= total + 1; k += step) {
        fail_allocation(k);
        opencl_life(bad, sizeof bad);
        fail_allocation(0);
        if (bad[0]) TEST_FAIL_("allocation %ld of %ld failing: %s", k, total, bad);
        if (atomic_load(&A.outstanding) != 0)
            TEST_FAIL_("allocation %ld of %ld failing: %lld bytes kept", k, total,
                       (long long)atomic_load(&A.outstanding));
    }
    weft_set_allocator(NULL);
}
