/* GPU layer, adversarial round 46: out-of-memory on the paths the earlier
 * sweeps left (stream queries, waits, guards, GPU calls and stages), kernels
 * that fail next to work that does not, streams and pools destroyed with work
 * in flight, copies of size 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <sched.h>
#include <string.h>

#include "counting_alloc.h"
#include "gpu_test.h"
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
    weft_set_allocator(&counting);
    fail_allocation(1);
    st = weft_gpu_stream_query(s);
    fail_allocation(0);
    weft_set_allocator(NULL);
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
}
